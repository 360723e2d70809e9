import { describe, expect, it } from 'vitest';
import { StatusError } from '../../apierrors/status.js';
import { createNaming } from '../../naming/naming.js';
import { sampleObject } from '../samples/sample-objects.js';
import { ProtobufCodec } from './protobuf-codec.js';

const codec = new ProtobufCodec(createNaming('cluster'));
const POD = 'io.k8s.api.core.v1.Pod';
const PROPS = 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps';

function expect400(f: () => unknown): StatusError {
  try {
    f();
  } catch (e) {
    if (!(e instanceof StatusError)) throw e;
    expect(e.code).toBe(400);
    return e;
  }
  throw new Error('expected a 400');
}

const hex = (s: string) => Buffer.from(s.replace(/\s+/g, ''), 'hex');

describe('hostile protobuf input', () => {
  it.each([
    ['empty body', '', /does not appear to be a protobuf message/],
    ['wrong magic', '6b387301 0a00', /does not appear to be a protobuf message/],
    ['JSON body', Buffer.from('{"kind":"Pod"}').toString('hex'), /does not appear to be a protobuf message/],
    ['truncated typeMeta', '6b387300 0a05 0a0276', /unexpected EOF/],
    ['length beyond the end', '6b387300 12ffffff0f', /negative length|unexpected EOF/],
    ['varint of eleven bytes', '6b387300 28 ffffffffffffffffffff01', /integer overflow/],
    ['tag 0', '6b387300 0000', /illegal tag 0/],
    ['wrong wire type for typeMeta', '6b387300 0800', /wrong wireType = 0 for field TypeMeta/],
    ['unknown kind', '6b387300 0a0f0a02763112095769646765744b6e64 1200', /no kind "WidgetKnd"/],
    ['content encoding', '6b387300 0a070a0276311201 50 1200 1a0467 7a6970', /content encoding/],
  ])('%s', (_name, body, message) => {
    expect(expect400(() => codec.decode(hex(body))).message).toMatch(message);
  });

  it.each([
    ['wrong wire type for a string field', POD, '0a02 0801', /wrong wireType = 0 for field Name/],
    ['wrong wire type for a varint field', POD, '12 04 0a02 0801', /wrong wireType/],
    ['truncated nested message', POD, '0a05 0a0361', /unexpected EOF/],
    ['end group without start', POD, '0a02 9c06', /unexpected end group/],
    ['illegal wire type 7', POD, '9f06', /illegal wireType 7/],
    ['bad quantity', 'io.k8s.api.core.v1.ResourceRequirements', '0a0a 0a03637075 1203 0a0178', /quantities must match/],
    ['invalid IntOrString type', 'io.k8s.api.apps.v1.RollingUpdateDeployment', '0a02 0807', /impossible IntOrString.Type 7/],
    ['time beyond year 9999', 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta', '420c 08ffffffffffffffff3f 1000', /time out of range/],
    ['invalid JSON in a RawExtension', 'io.k8s.api.apps.v1.ControllerRevision', '1203 0a017b', /does not hold valid JSON/],
  ])('raw message: %s', (_name, schema, body, message) => {
    expect(expect400(() => codec.decodeRaw(hex(body), schema)).message).toMatch(message);
  });

  it('skips unknown fields, including groups, as Go does', () => {
    // Pod{metadata{name "a"}} plus unknown field 99 (varint) and a group (field 98).
    const body = hex('0a03 0a0161  98 06 05  93 06 08 01 94 06');
    expect(codec.decodeRaw(body, POD)).toEqual({ metadata: { name: 'a' } });
  });

  it('rejects nesting deeper than the bound without a stack overflow', () => {
    // JSONSchemaProps.not (field 28, tag e2 01) nested 5000 times.
    let inner: Buffer = Buffer.alloc(0);
    for (let i = 0; i < 5000; i++) {
      const len: number[] = [];
      let n = inner.length;
      while (n > 127) {
        len.push((n & 127) | 128);
        n >>>= 7;
      }
      len.push(n);
      inner = Buffer.concat([Buffer.from([0xe2, 0x01, ...len]), inner]);
    }
    expect(expect400(() => codec.decodeRaw(inner, PROPS)).message).toMatch(/exceeded max depth/);
    // Nested start groups are bounded the same way.
    const groups = Buffer.from('9b06'.repeat(50_000), 'hex'); // field 99, start group
    expect(expect400(() => codec.decodeRaw(groups, POD)).message).toMatch(/exceeded max depth|unexpected EOF/);
  });

  it('bounds envelopes nested inside RawExtensions', () => {
    // WatchEvent whose object is an envelope holding a WatchEvent holding an envelope, …
    let bytes: Uint8Array = codec.encode({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } }, 'io.k8s.api.core.v1.ConfigMap');
    for (let i = 0; i < 700; i++) {
      const event = codec.encodeWatchEvent('ADDED', bytes);
      bytes = codec.wrapEnvelope('v1', 'WatchEvent', event);
    }
    expect(expect400(() => codec.decode(bytes)).message).toMatch(/exceeded max depth/);
  });

  it('survives a seeded fuzz loop of mutated valid encodings: only 400s, never a hang', () => {
    let seed = 0x5eed;
    const rnd = (n: number) => {
      seed ^= seed << 13;
      seed ^= seed >>> 17;
      seed ^= seed << 5;
      return (seed >>> 0) % n;
    };
    const inputs = [
      codec.encode(sampleObject(POD, { naming: createNaming('cluster') }), POD),
      codec.encode(sampleObject('io.k8s.api.apps.v1.Deployment', { naming: createNaming('cluster') }), 'io.k8s.api.apps.v1.Deployment'),
      codec.encode(
        sampleObject('io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition', { naming: createNaming('cluster'), maxRepeats: 2 }),
        'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition',
      ),
      codec.encode(sampleObject('io.k8s.api.core.v1.Secret', { naming: createNaming('cluster') }), 'io.k8s.api.core.v1.Secret'),
      codec.wrapEnvelope(
        'v1',
        'WatchEvent',
        codec.encodeWatchEvent('ADDED', codec.encode(sampleObject('io.k8s.api.coordination.v1.Lease', { naming: createNaming('cluster') }), 'io.k8s.api.coordination.v1.Lease')),
      ),
    ];
    const started = performance.now();
    let rejected = 0;
    let accepted = 0;
    for (let iter = 0; iter < 4000; iter++) {
      const base = inputs[iter % inputs.length]!;
      const b = Buffer.from(base);
      let mutated: Buffer = b;
      const edits = 1 + rnd(4);
      for (let k = 0; k < edits; k++) {
        const op = rnd(6);
        const pos = 4 + rnd(Math.max(1, mutated.length - 4));
        if (op === 0) mutated[pos] = rnd(256);
        else if (op === 1) mutated[pos]! ^= 1 << rnd(8);
        else if (op === 2) mutated = mutated.subarray(0, pos);
        else if (op === 3) mutated = Buffer.concat([mutated.subarray(0, pos), Buffer.from([rnd(256)]), mutated.subarray(pos)]);
        else if (op === 4) mutated = Buffer.concat([mutated.subarray(0, pos), mutated.subarray(pos + 1 + rnd(8))]);
        // A length prefix made huge.
        else mutated = Buffer.concat([mutated.subarray(0, pos), Buffer.from([0xff, 0xff, 0xff, 0xff, 0x0f]), mutated.subarray(pos)]);
      }
      try {
        codec.decode(mutated);
        accepted++;
      } catch (e) {
        if (!(e instanceof StatusError) || e.code !== 400) throw new Error(`iteration ${iter}: ${String(e)} for ${mutated.toString('hex')}`);
        rejected++;
      }
    }
    expect(rejected).toBeGreaterThan(100);
    expect(accepted + rejected).toBe(4000);
    expect(performance.now() - started).toBeLessThan(20_000);
  });
});
