import { describe, expect, it } from 'vitest';
import { isStatusError } from '../apierrors/status.js';
import { EVERYTHING, parseSelectionPredicate, predicateMatches, selectsEverything } from './selection-predicate.js';

const pods = { group: '', upstreamGroup: '', version: 'v1', resource: 'pods', kind: 'Pod', namespaced: true };
const pod = (labels: Record<string, string>, nodeName: string) => ({ metadata: { name: 'p', namespace: 'ns', labels }, spec: { nodeName } });

describe('selection predicate', () => {
  it('combines label and field selectors', () => {
    const p = parseSelectionPredicate(pods, { labelSelector: 'app=web', fieldSelector: 'spec.nodeName=n1' });
    expect(predicateMatches(pods, p, pod({ app: 'web' }, 'n1'))).toBe(true);
    expect(predicateMatches(pods, p, pod({ app: 'web' }, 'n2'))).toBe(false);
    expect(predicateMatches(pods, p, pod({ app: 'db' }, 'n1'))).toBe(false);
    expect(predicateMatches(pods, p, undefined)).toBe(false);
  });

  it('tells a watch when an object enters or leaves the selection', () => {
    const p = parseSelectionPredicate(pods, { labelSelector: 'app=web' });
    const before = predicateMatches(pods, p, pod({ app: 'db' }, 'n1'));
    const after = predicateMatches(pods, p, pod({ app: 'web' }, 'n1'));
    expect([before, after]).toEqual([false, true]);
  });

  it('empty or absent query values select everything', () => {
    expect(selectsEverything(parseSelectionPredicate(pods, {}))).toBe(true);
    expect(selectsEverything(parseSelectionPredicate(pods, { labelSelector: '', fieldSelector: null }))).toBe(true);
    expect(predicateMatches(pods, EVERYTHING, { metadata: {} })).toBe(true);
  });

  it.each([
    [{ labelSelector: 'a in b' }, "unable to parse requirement: found 'b' expected: '('"],
    [{ fieldSelector: 'spec.containers=x' }, 'field label not supported: spec.containers'],
    [{ fieldSelector: 'nonsense' }, "invalid selector: 'nonsense'; can't understand 'nonsense'"],
  ])('rejects %o with 400', (query, message) => {
    try {
      parseSelectionPredicate(pods, query);
      expect.unreachable();
    } catch (e) {
      expect(isStatusError(e) && e.code === 400 && e.status.message === message).toBe(true);
    }
  });
});
