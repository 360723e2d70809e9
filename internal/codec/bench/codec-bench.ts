// internal/codec/bench/codec-bench owns the codec benchmark: encode and decode cost of one typical
// Pod and of a 10,000-pod list in JSON, YAML, protobuf and CBOR, plus a list assembled from cached
// per-item protobuf encodings (what a watch cache can do). `make bench` should call
// runCodecBenchmarks() and print formatCodecBenchmarks(). Imports: codec modules, naming.

import { createNaming } from '../../naming/naming.js';
import { decodeCbor, encodeCbor } from '../cbor/cbor-codec.js';
import { decodeJson, encodeJson } from '../json/json-codec.js';
import { ProtobufCodec } from '../protobuf/protobuf-codec.js';
import { realisticPod } from '../samples/realistic-pod.js';
import { decodeYaml, encodeYaml } from '../yaml/yaml-codec.js';

export interface CodecBenchRow {
  codec: string;
  /** Body size of one pod. */
  podBytes: number;
  podEncodeMicros: number;
  podDecodeMicros: number;
  listBytes: number;
  listEncodeMillis: number;
  listDecodeMillis: number;
}

export interface CodecBenchOptions {
  /** Fewer iterations and a 1,000-item list: a smoke run for tests. */
  quick?: boolean;
}

const POD = 'io.k8s.api.core.v1.Pod';
const POD_LIST = 'io.k8s.api.core.v1.PodList';

function timePer(iterations: number, f: () => unknown): number {
  for (let i = 0; i < Math.min(200, iterations); i++) f();
  const start = performance.now();
  for (let i = 0; i < iterations; i++) f();
  return ((performance.now() - start) / iterations) * 1000;
}

/** Best of three runs: one list operation is long enough, but the first run pays JIT and GC. */
function timeOnce(f: () => unknown, runs = 3): number {
  let best = Number.POSITIVE_INFINITY;
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    f();
    best = Math.min(best, performance.now() - start);
  }
  return best;
}

/** Runs the benchmark (a few seconds; about 1 s with quick). */
export function runCodecBenchmarks(options: CodecBenchOptions = {}): CodecBenchRow[] {
  const iterations = options.quick ? 200 : 20_000;
  const listSize = options.quick ? 1_000 : 10_000;
  const naming = createNaming('cluster');
  const protobuf = new ProtobufCodec(naming);
  const pod = realisticPod(0);
  const list = { apiVersion: 'v1', kind: 'PodList', metadata: { resourceVersion: '1' }, items: Array.from({ length: listSize }, (_, i) => realisticPod(i)) };

  const codecs: Array<{ name: string; encode: (v: object, schema: string) => Uint8Array; decode: (b: Uint8Array) => unknown; slow?: boolean }> = [
    { name: 'json', encode: (v) => encodeJson(v), decode: (b) => decodeJson(b).value },
    { name: 'protobuf', encode: (v, s) => protobuf.encode(v, s), decode: (b) => protobuf.decode(b) },
    { name: 'cbor', encode: (v) => encodeCbor(v), decode: (b) => decodeCbor(b, { maxArrayElements: 1_000_000 }).value },
    { name: 'yaml', encode: (v) => encodeYaml(v), decode: (b) => decodeYaml(b).value, slow: true },
  ];
  const rows: CodecBenchRow[] = [];
  for (const c of codecs) {
    const n = c.slow ? Math.max(50, iterations / 20) : iterations;
    const podBody = c.encode(pod, POD);
    const row: CodecBenchRow = {
      codec: c.name,
      podBytes: podBody.length,
      podEncodeMicros: timePer(n, () => c.encode(pod, POD)),
      podDecodeMicros: timePer(n, () => c.decode(podBody)),
      listBytes: 0,
      listEncodeMillis: 0,
      listDecodeMillis: 0,
    };
    let listBody: Uint8Array = new Uint8Array(0);
    const runs = c.slow ? 1 : 3;
    row.listEncodeMillis = timeOnce(() => (listBody = c.encode(list, POD_LIST)), runs);
    row.listBytes = listBody.length;
    row.listDecodeMillis = timeOnce(() => c.decode(listBody), runs);
    rows.push(row);
  }
  // A list spliced from per-item encodings cached when each object was written.
  const cachedItems = list.items.map((item) => protobuf.encodeRaw(item, POD));
  const cachedList = { ...list, items: cachedItems };
  let spliced: Uint8Array = new Uint8Array(0);
  rows.push({
    codec: 'protobuf (cached items)',
    podBytes: cachedItems[0]!.length,
    podEncodeMicros: 0,
    podDecodeMicros: 0,
    listEncodeMillis: timeOnce(() => (spliced = protobuf.encode(cachedList, POD_LIST))),
    listBytes: spliced.length,
    listDecodeMillis: 0,
  });
  return rows;
}

export function formatCodecBenchmarks(rows: readonly CodecBenchRow[]): string {
  const lines = ['codec                   pod bytes  encode µs  decode µs   list bytes  list enc ms  list dec ms'];
  for (const r of rows) {
    lines.push(
      `${r.codec.padEnd(24)}${String(r.podBytes).padStart(9)}${r.podEncodeMicros.toFixed(1).padStart(11)}${r.podDecodeMicros.toFixed(1).padStart(11)}` +
        `${String(r.listBytes).padStart(13)}${r.listEncodeMillis.toFixed(0).padStart(13)}${r.listDecodeMillis.toFixed(0).padStart(13)}`,
    );
  }
  return lines.join('\n');
}
