import { describe, expect, it } from 'vitest';
import { createNaming } from '../naming/naming.js';
import { mediaTypes, parseMediaType, parseMediaTypeList, patchMediaTypes } from './media-types.js';

describe('mediaTypes', () => {
  it.each([
    ['cluster', 'application/vnd.cluster.protobuf'],
    ['kubernetes', 'application/vnd.kubernetes.protobuf'],
  ] as const)('lists JSON, YAML, protobuf (%s naming) and gated CBOR', (mode, protobuf) => {
    const list = mediaTypes(createNaming(mode));
    expect(list.map((m) => m.mediaType)).toEqual(['application/json', 'application/yaml', protobuf, 'application/cbor']);
    const pb = list.find((m) => m.codec === 'protobuf')!;
    expect(pb.subtype).toBe(protobuf.slice('application/'.length));
    expect(pb.streamMediaType).toBe(`${protobuf};stream=watch`);
    expect(pb.supportsUntypedObjects).toBe(false);
    expect(list.find((m) => m.codec === 'cbor')!.featureGate).toBe('CBORServingAndStorage');
    expect(list.find((m) => m.codec === 'cbor')!.streamMediaType).toBe('application/cbor-seq');
    expect(list.find((m) => m.codec === 'yaml')!.streamMediaType).toBeUndefined();
  });

  it('maps patch body types to codecs', () => {
    const byType = Object.fromEntries(patchMediaTypes().map((p) => [p.mediaType, p.codec]));
    expect(byType['application/apply-patch+yaml']).toBe('yaml');
    expect(byType['application/apply-patch+cbor']).toBe('cbor');
    expect(byType['application/strategic-merge-patch+json']).toBe('json');
  });
});

describe('parseMediaType', () => {
  it.each([
    ['application/json', 'application', 'json', {}],
    ['Application/JSON ; Charset=UTF-8', 'application', 'json', { charset: 'UTF-8' }],
    [
      'application/json;as=Table;v=v1;g=meta.k8s.io',
      'application',
      'json',
      { as: 'Table', v: 'v1', g: 'meta.k8s.io' },
    ],
    ['application/vnd.kubernetes.protobuf;stream=watch', 'application', 'vnd.kubernetes.protobuf', { stream: 'watch' }],
    ['*/*;q=0.8', '*', '*', { q: '0.8' }],
    ['application/*', 'application', '*', {}],
    ['text/plain; x="a;b,c \\"d\\""', 'text', 'plain', { x: 'a;b,c "d"' }],
  ])('%s', (header, type, subtype, params) => {
    const p = parseMediaType(header)!;
    expect(p.type).toBe(type);
    expect(p.subtype).toBe(subtype);
    expect(p.mediaType).toBe(`${type}/${subtype}`);
    expect({ ...p.params }).toEqual(params);
  });

  it.each(['', 'json', 'application/', '/json', '*/json', 'application/json;q', 'application/json;=x', 'a b/c', 'application/json;x="open'])(
    'rejects %j',
    (header) => {
      expect(parseMediaType(header)).toBeUndefined();
    },
  );

  it('splits Accept lists outside quotes and drops malformed entries', () => {
    const list = parseMediaTypeList('application/json;as=Table;g=meta.k8s.io;v=v1, bogus, application/json; x="a,b"');
    expect(list.map((m) => m.mediaType)).toEqual(['application/json', 'application/json']);
    expect(list[0]!.params.as).toBe('Table');
    expect(list[1]!.params.x).toBe('a,b');
  });
});
