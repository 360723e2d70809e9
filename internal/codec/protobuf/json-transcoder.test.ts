import { describe, expect, it } from 'vitest';
import { createNaming } from '../../naming/naming.js';
import { rng } from '../../testserver/seeded-random.js';
import { realisticPod } from '../samples/realistic-pod.js';
import { kindSchemaNames, sampleObject } from '../samples/sample-objects.js';
import { CompiledMessages } from './compiled-messages.js';
import { JsonTranscoder } from './json-transcoder.js';
import { defaultProtoSchema, ProtobufCodec } from './protobuf-codec.js';
import { WireWriter } from './wire-writer.js';

type Obj = Record<string, unknown>;
const codec = new ProtobufCodec(createNaming('cluster'));
const proto = defaultProtoSchema();
const transcoder = new JsonTranscoder(proto, new CompiledMessages(proto, { decodeEmbeddedEnvelope: () => null }, 1000));

/** The encoder's bytes (hex) for JSON.parse of `bytes`, or its error. */
function reference(bytes: Buffer, name: string): string {
  try {
    return codec.encodeRaw(JSON.parse(bytes.toString('utf8')), name).toString('hex');
  } catch (e) {
    return `error: ${(e as Error).message}`;
  }
}

function stored(bytes: Buffer, name: string): string {
  try {
    return codec.encodeStoredRaw(bytes, name).toString('hex');
  } catch (e) {
    return `error: ${(e as Error).message}`;
  }
}

/** Whether the transcoder wrote `bytes` itself, and then what it wrote. */
function fast(bytes: Buffer, name: string): string | undefined {
  const w = new WireWriter(64);
  if (!transcoder.transcode(w, bytes, proto.messageFor(name)!)) return undefined;
  return w.finish().toString('hex');
}

const json = (v: unknown) => Buffer.from(JSON.stringify(v));
const POD = 'io.k8s.api.core.v1.Pod';

describe('JsonTranscoder', () => {
  it('writes every kind’s samples as the encoder does, and transcodes them itself', () => {
    const mismatches: string[] = [];
    const general: string[] = [];
    let kinds = 0;
    for (const name of kindSchemaNames()) {
      for (const options of [{ seed: 1 }, { seed: 2 }, { seed: 3, variant: 'zeros' as const }]) {
        const bytes = json(sampleObject(name, options));
        const want = reference(bytes, name);
        if (stored(bytes, name) !== want) mismatches.push(`${name} ${JSON.stringify(options)}`);
        const got = fast(bytes, name);
        if (got === undefined) general.push(name);
        else if (got !== want) mismatches.push(`${name} ${JSON.stringify(options)} (transcoded)`);
      }
      kinds++;
    }
    expect(mismatches).toEqual([]);
    expect(kinds).toBeGreaterThan(80);
    // No sample needs the general path as a whole (CustomResourceDefinition's JSONSchemaProps
    // "or" types are written by the encoder from a parse of just their value).
    expect([...new Set(general)]).toEqual([]);
  });

  const pod = realisticPod(7);
  const cases: Array<{ what: string; bytes: Buffer; transcoded: boolean }> = [
    { what: 'a realistic pod', bytes: json(pod), transcoded: true },
    { what: 'keys in another order', bytes: json(Object.fromEntries(Object.entries(pod).reverse())), transcoded: true },
    { what: 'unknown fields at every level', bytes: json({ ...pod, extra: { a: [1, { b: 'c' }] }, metadata: { ...(pod.metadata as Obj), zz: null, '': 1 } }), transcoded: true },
    { what: 'escapes and unicode in strings', bytes: json({ ...pod, metadata: { ...(pod.metadata as Obj), name: 'é\n"\\\u2028😀', labels: { 'a\u00e9': 'x' }, annotations: { b: 'tab\there', c: '\ud800' } } }), transcoded: false },
    { what: 'escaped string values only', bytes: json({ ...pod, metadata: { ...(pod.metadata as Obj), name: 'é\n"\\\u2028😀', generateName: '\ud800x' } }), transcoded: true },
    { what: 'an escaped key the plan knows', bytes: Buffer.from('{"kind":"Pod","metadata":{"n\\u0061me":"x"}}'), transcoded: true },
    { what: 'a repeated known key', bytes: Buffer.from('{"metadata":{"name":"a","name":"b"}}'), transcoded: false },
    { what: 'a repeated known key whose last is null', bytes: Buffer.from('{"metadata":{"name":"a","name":null}}'), transcoded: false },
    { what: 'a repeated map key', bytes: Buffer.from('{"metadata":{"labels":{"a":"1","a":"2"}}}'), transcoded: false },
    { what: 'null fields, map values and list elements', bytes: Buffer.from('{"metadata":{"name":null,"labels":{"a":null,"b":"x"}},"spec":{"containers":[null]}}'), transcoded: false },
    { what: 'null fields and map values', bytes: Buffer.from('{"metadata":{"name":null,"labels":{"b":"x","a":null}},"spec":null}'), transcoded: true },
    { what: 'whitespace', bytes: Buffer.from('{"metadata": {"name":"x"}}'), transcoded: false },
    { what: 'numbers at the int32 edges', bytes: json({ spec: { priority: 2147483647, terminationGracePeriodSeconds: -9007199254740991, containers: [{ name: 'a', ports: [{ containerPort: -2147483648 }] }] } }), transcoded: true },
    { what: 'an int32 beyond its range', bytes: json({ spec: { priority: 2147483648 } }), transcoded: false },
    { what: 'a fraction in an integer', bytes: json({ spec: { priority: 1.5 } }), transcoded: false },
    { what: 'exponents and -0', bytes: Buffer.from('{"spec":{"priority":1e3,"activeDeadlineSeconds":-0,"terminationGracePeriodSeconds":12345678901234567}}'), transcoded: true },
    { what: 'int-or-string both ways, quantities as numbers', bytes: json({ spec: { containers: [{ name: 'a', resources: { limits: { cpu: 2, memory: '1Gi' } }, livenessProbe: { httpGet: { port: 'http' }, tcpSocket: { port: 80 } } }] } }), transcoded: true },
    { what: 'empty maps, lists and objects', bytes: json({ metadata: { labels: {}, finalizers: [], managedFields: [{ fieldsV1: {} }] }, spec: {}, status: {} }), transcoded: true },
    { what: 'fieldsV1 not in the encoder’s form', bytes: json({ metadata: { managedFields: [{ fieldsV1: { '7': {}, 'f:a': { 'f:b': 1 } } }, { fieldsV1: { 'k:{"a":"\\\\"}': {} } }] } }), transcoded: true },
    { what: 'a wrong type', bytes: json({ metadata: { name: 5 } }), transcoded: false },
    { what: 'a time that is not one', bytes: json({ metadata: { creationTimestamp: 'yesterday' } }), transcoded: false },
    { what: 'Go’s zero time and fractional seconds', bytes: json({ metadata: { creationTimestamp: '0001-01-01T00:00:00Z', deletionTimestamp: '2024-01-02T03:04:05.123456+02:00' } }), transcoded: true },
    { what: 'base64 bytes', bytes: json({ kind: 'Secret', data: { a: 'aGVsbG8=', b: '' } }), transcoded: true },
    { what: 'invalid UTF-8 in a string', bytes: Buffer.concat([Buffer.from('{"metadata":{"name":"a'), Buffer.from([0xff, 0xc3]), Buffer.from('b"}}')]), transcoded: true },
    { what: 'bytes after the object', bytes: Buffer.from('{"metadata":{}}\n'), transcoded: false },
  ];

  it.each(cases)('$what', ({ bytes, transcoded }) => {
    const name = bytes.includes('"Secret"') ? 'io.k8s.api.core.v1.Secret' : POD;
    const want = reference(bytes, name);
    expect(stored(bytes, name)).toBe(want);
    const got = fast(bytes, name);
    expect(got !== undefined).toBe(transcoded);
    if (got !== undefined) expect(got).toBe(want);
  });

  it('copies a value it wrote for the same bytes before, and writes every other one', () => {
    // Pods of one workload share most values; each differs from the one before somewhere, at
    // every depth, so a memo that served a value it should not would show as a difference.
    const base = realisticPod(3);
    const changes: Array<(p: Obj) => void> = [
      () => {},
      (p) => ((p.metadata as Obj).name = 'other'),
      (p) => (((p.spec as Obj).containers as Obj[])[0]!.image = 'registry.example/other:2'),
      (p) => (((p.spec as Obj).containers as Obj[])[0]!.name = 'app2'),
      (p) => ((p.spec as Obj).nodeName = 'node-7'),
      (p) => ((p.spec as Obj).containers = [...((p.spec as Obj).containers as Obj[]), { name: 'side', image: 'busybox' }]),
      (p) => ((p.status as Obj) = { ...(p.status as Obj), phase: 'Running' }),
      (p) => ((p.spec as Obj).securityContext = { runAsUser: 1000, runAsNonRoot: true, fsGroup: 2000 }),
      (p) => ((p.spec as Obj).securityContext = { runAsUser: 1000, runAsNonRoot: true, fsGroup: 2001 }),
    ];
    const hitsBefore = transcoder.memoHits;
    const random = rng(11);
    for (let i = 0; i < 200; i++) {
      const p = structuredClone(base);
      changes[Math.floor(random() * changes.length)]!(p);
      const bytes = json(p);
      expect(fast(bytes, POD), `pod ${i}`).toBe(reference(bytes, POD));
    }
    expect(transcoder.memoHits - hitsBefore).toBeGreaterThan(200);
  });

  it('gives randomized objects the encoder’s bytes or error', () => {
    const names = kindSchemaNames();
    let compared = 0;
    let transcoded = 0;
    let encodable = 0;
    for (let seed = 1; seed <= 300; seed++) {
      const random = rng(seed);
      const name = names[Math.floor(random() * names.length)]!;
      const value = mutate(sampleObject(name, { seed }), random, 0, random() < 0.3);
      let text = JSON.stringify(value);
      if (random() < 0.1) text = text.replace(/,"/, ', "'); // whitespace: the general path
      const bytes = Buffer.from(text);
      const want = reference(bytes, name);
      expect(stored(bytes, name), `seed ${seed} ${name}`).toBe(want);
      if (!want.startsWith('error')) encodable++;
      const got = fast(bytes, name);
      if (got !== undefined) {
        expect(got, `seed ${seed} ${name} transcoded`).toBe(reference(bytes, name));
        transcoded++;
      }
      compared++;
    }
    expect(compared).toBe(300);
    // Many mutations make the object unencodable (the encoder's error); of the rest, most keep
    // the fast path (escapes in values, numbers, unknown fields, nulls).
    expect(encodable).toBeGreaterThan(50);
    expect(transcoded).toBeGreaterThan(encodable / 2);
  });
});

const STRINGS = ['', 'é', '😀', '\ud83d', 'a"b\\c', 'line\nbreak', '\u0000', '7', '-1', '1.5', 'x'.repeat(200)];
const NUMBERS = [0, -0, 1, -1, 127, 128, 2147483647, -2147483648, 2147483648, 2 ** 53 - 1, -(2 ** 53), 1.5, 1e21, 5e-324];

/**
 * A copy of `v` with random changes of the kinds the transcoder must agree on; with
 * `breakTypes`, also values of the wrong JSON type (the encoder's errors).
 */
function mutate(v: unknown, random: () => number, depth: number, breakTypes: boolean): unknown {
  const r = random();
  if (typeof v === 'string') {
    if (r < 0.1) return STRINGS[Math.floor(random() * STRINGS.length)];
    if (breakTypes && r < 0.13) return NUMBERS[Math.floor(random() * NUMBERS.length)];
    return v;
  }
  if (typeof v === 'number') {
    if (breakTypes && r < 0.25) return NUMBERS[Math.floor(random() * NUMBERS.length)];
    if (breakTypes && r < 0.28) return String(v);
    if (r < 0.1) return Number.isInteger(v) ? -v : v * 1e10;
    return v;
  }
  if (Array.isArray(v)) {
    if (r < 0.05) return [];
    const out = v.map((x) => mutate(x, random, depth + 1, breakTypes));
    if (breakTypes && r < 0.08) out.push(null);
    return out;
  }
  if (v && typeof v === 'object') {
    if (r < 0.03) return {};
    let entries = Object.entries(v).map(([k, x]) => [k, mutate(x, random, depth + 1, breakTypes)] as [string, unknown]);
    if (r < 0.2) entries = entries.reverse();
    if (random() < 0.1) entries.push([`unknown${depth}`, { a: [1, 'b', null] }]);
    if (random() < 0.05 && entries.length > 0) entries[0]![1] = null;
    if (random() < 0.05) entries.push(['é\\"', 'x']);
    return Object.fromEntries(entries);
  }
  return v;
}
