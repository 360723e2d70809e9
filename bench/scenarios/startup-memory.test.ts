// Tests of how the stored scenario counts the pods a server holds (see podCount).
import { describe, expect, it } from 'vitest';
import { podCount } from './startup-memory.js';

describe('podCount', () => {
  const cases: { name: string; list: unknown; want: number | undefined }[] = [
    { name: 'one item and the rest counted', list: { items: [{}], metadata: { remainingItemCount: 49_999, continue: 'x' } }, want: 50_000 },
    { name: 'the last page: no count, no continue', list: { items: [{}], metadata: {} }, want: 1 },
    { name: 'nothing stored', list: { items: [], metadata: { resourceVersion: '7' } }, want: 0 },
    { name: 'more pages but no count', list: { items: [{}], metadata: { continue: 'x' } }, want: undefined },
    { name: 'a count that is not a whole number', list: { items: [{}], metadata: { remainingItemCount: -1 } }, want: undefined },
    { name: 'a Status, not a list', list: { kind: 'Status', code: 500 }, want: undefined },
    { name: 'not an object', list: 'pods', want: undefined },
    { name: 'null', list: null, want: undefined },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect(podCount(c.list)).toBe(c.want);
    });
  }
});
