import { describe, it, expect } from 'vitest';
import { decodeStored, encodeStored, replaceResourceVersion, typeMetaOf, withResourceVersion } from './stored-object.js';

describe('stored objects', () => {
  it('writes kind, apiVersion, metadata first and never a resourceVersion', () => {
    const bytes = encodeStored({ spec: { a: 1 }, metadata: { name: 'x', resourceVersion: '9' }, apiVersion: 'v1', kind: 'ConfigMap' });
    expect(bytes.toString()).toBe('{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"x"},"spec":{"a":1}}');
  });

  it('splices the revision into the top-level metadata only', () => {
    const obj = {
      kind: 'Deployment',
      apiVersion: 'apps/v1',
      metadata: { name: 'web', annotations: { note: '"metadata":{' } },
      spec: { template: { metadata: { labels: { a: 'b' } } } },
    };
    const served = withResourceVersion(encodeStored(obj), 42);
    const parsed = JSON.parse(served.toString());
    expect(parsed.metadata.resourceVersion).toBe('42');
    expect(parsed.metadata.annotations.note).toBe('"metadata":{');
    expect(parsed.spec.template.metadata).toEqual({ labels: { a: 'b' } });
    expect(decodeStored(encodeStored(obj), 42)).toEqual(parsed);
  });

  it('re-versions serving bytes', () => {
    const served = withResourceVersion(encodeStored({ kind: 'K', apiVersion: 'v1', metadata: { name: 'n' } }), 7);
    expect(replaceResourceVersion(served, 1234).toString()).toBe('{"kind":"K","apiVersion":"v1","metadata":{"resourceVersion":"1234","name":"n"}}');
  });

  it('handles empty metadata', () => {
    expect(withResourceVersion(encodeStored({ kind: 'K', apiVersion: 'v1', metadata: {} }), 7).toString()).toBe(
      '{"kind":"K","apiVersion":"v1","metadata":{"resourceVersion":"7"}}',
    );
  });

  it('reads kind and apiVersion from the head of serving bytes', () => {
    const served = withResourceVersion(encodeStored({ kind: 'Deployment', apiVersion: 'apps/v1', metadata: { name: 'n' }, spec: { kind: 'x' } }), 7);
    expect(typeMetaOf(served)).toEqual({ kind: 'Deployment', apiVersion: 'apps/v1' });
    expect(typeMetaOf(withResourceVersion(encodeStored({ metadata: { name: 'n' } }), 7))).toEqual({ kind: '', apiVersion: '' });
    expect(() => typeMetaOf(Buffer.from('{"kind":"K"}'))).toThrow(/no metadata/);
  });
});
