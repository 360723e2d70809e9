import { describe, it, expect } from 'vitest';
import { StatusError } from '../apierrors/status.js';
import { StoreError } from '../store/types.js';
import { equalButVersion, translateStoreError } from './generic-registry.js';
import { jsonEqual } from '../patch/json-value.js';
import { specChanged } from './strategy.js';

describe('translateStoreError', () => {
  it.each([
    [new StoreError('STORE_COMPACTED', 'gone', { revision: 1, compactedRevision: 5 }), 410, 'Expired'],
    [new StoreError('STORE_FUTURE_REVISION', 'later', { revision: 9, currentRevision: 3 }), 504, 'Timeout'],
    [new StoreError('STORE_UNAVAILABLE', 'disk failed'), 503, 'ServiceUnavailable'],
    [new StoreError('STORE_CLOSED', 'closed'), 503, 'ServiceUnavailable'],
    [new StoreError('STORE_CORRUPT', 'bad bytes'), 500, 'InternalError'],
    [new Error('boom'), 500, 'InternalError'],
  ])('%s → %i %s', (err, code, reason) => {
    const out = translateStoreError(err) as StatusError;
    expect(out).toBeInstanceOf(StatusError);
    expect(out.status).toMatchObject({ code, reason });
  });
});

describe('equalButVersion', () => {
  // The definition it replaces: both objects copied without metadata.resourceVersion, compared.
  const reference = (a: Record<string, unknown>, b: Record<string, unknown>) => {
    const strip = (o: Record<string, unknown>) => {
      const meta = { ...((o.metadata as Record<string, unknown> | undefined) ?? {}) };
      delete meta.resourceVersion;
      return { ...o, metadata: meta };
    };
    return jsonEqual(strip(a), strip(b));
  };
  const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', resourceVersion: '5', labels: { a: '1' } }, spec: { containers: [{ name: 'c' }] } };
  it.each([
    ['identical', pod, structuredClone(pod), true],
    ['only the resourceVersion differs', pod, { ...pod, metadata: { ...pod.metadata, resourceVersion: '9' } }, true],
    ['resourceVersion on one side only', pod, { ...pod, metadata: { name: 'p', labels: { a: '1' } } }, true],
    ['a label differs', pod, { ...pod, metadata: { ...pod.metadata, labels: { a: '2' } } }, false],
    ['a metadata field more', pod, { ...pod, metadata: { ...pod.metadata, uid: 'u' } }, false],
    ['the spec differs', pod, { ...pod, spec: { containers: [] } }, false],
    ['a top-level field more', pod, { ...pod, status: {} }, false],
    ['an undefined top-level field more', pod, { ...pod, status: undefined }, false],
    ['no metadata vs an empty one', { kind: 'X' }, { kind: 'X', metadata: {} }, true],
    ['no metadata vs only a resourceVersion', { kind: 'X' }, { kind: 'X', metadata: { resourceVersion: '3' } }, true],
    ['null metadata vs an empty one', { kind: 'X', metadata: null }, { kind: 'X', metadata: {} }, true],
    ['metadata with a name vs none', { kind: 'X', metadata: { name: 'a' } }, { kind: 'X' }, false],
  ] as Array<[string, Record<string, unknown>, Record<string, unknown>, boolean]>)('%s', (_what, a, b, equal) => {
    expect(equalButVersion(a, b)).toBe(equal);
    expect(equalButVersion(b, a)).toBe(equal);
    expect(reference(a, b)).toBe(equal);
  });
});

describe('specChanged', () => {
  // The definition it replaces: both objects copied without metadata and status, compared.
  const reference = (a: Record<string, unknown>, b: Record<string, unknown>) => {
    const strip = ({ metadata: _m, status: _s, ...rest }: Record<string, unknown>) => rest;
    return !jsonEqual(strip(a), strip(b));
  };
  const d = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd', generation: 1 }, spec: { replicas: 1 }, status: { replicas: 0 } };
  it.each([
    ['identical', d, structuredClone(d), false],
    ['metadata and status differ', d, { ...d, metadata: { name: 'd', generation: 4 }, status: { replicas: 3 } }, false],
    ['spec differs', d, { ...d, spec: { replicas: 2 } }, true],
    ['spec missing on one side', d, { apiVersion: 'apps/v1', kind: 'Deployment', metadata: d.metadata }, true],
    ['status missing on one side', d, { apiVersion: 'apps/v1', kind: 'Deployment', metadata: d.metadata, spec: { replicas: 1 } }, false],
    ['another top-level field', d, { ...d, data: {} }, true],
    ['an undefined top-level field more', d, { ...d, extra: undefined }, true],
  ] as Array<[string, Record<string, unknown>, Record<string, unknown>, boolean]>)('%s', (_what, a, b, changed) => {
    expect(specChanged(a, b)).toBe(changed);
    expect(specChanged(b, a)).toBe(changed);
    expect(reference(a, b)).toBe(changed);
  });
});
