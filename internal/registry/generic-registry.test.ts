import { describe, it, expect } from 'vitest';
import { StatusError } from '../apierrors/status.js';
import { StoreError } from '../store/types.js';
import { translateStoreError } from './generic-registry.js';

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
