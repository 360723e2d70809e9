// e2e/support/load-client-main is one load process of the cluster e2e tests: `node
// load-client-main.js '<LoadClientConfig JSON>'`. Each of its loops reads a random ConfigMap
// from a random replica (consistent GET), then creates it if absent or updates it with the
// version just read as precondition (compare-and-set), through a random replica again, and
// prints every completed operation as one JSON line (load-protocol's OpRecord). It begins at
// the first line on its stdin and stops when its stdin closes: operations in flight complete (or time out) and are reported, then it
// prints {"done":true} and exits. Test-only.

import { HttpsClient, RequestFailure, adminCredentials } from './https-client.js';
import { monotonicMs, type LoadClientConfig, type OpRecord } from './load-protocol.js';

const config = JSON.parse(process.argv[2] ?? '{}') as LoadClientConfig;
const http = new HttpsClient(adminCredentials(config.pkiDir));
const names = Object.keys(config.replicas);
let stopping = false;
// The parent starts the processes early (loading them takes seconds on a busy machine) and
// sends a line when the load should begin.
const go = new Promise<void>((resolve) => {
  process.stdin.on('data', () => resolve());
  process.stdin.on('end', () => {
    stopping = true;
    resolve();
  });
});
process.stdin.on('close', () => (stopping = true));

let seed = config.seed >>> 0 || 1;
const rand = (n: number): number => {
  // xorshift32: deterministic per seed (the interleaving with the faults is not, and need not be).
  seed ^= seed << 13;
  seed >>>= 0;
  seed ^= seed >>> 17;
  seed ^= seed << 5;
  seed >>>= 0;
  return seed % n;
};

const emit = (r: OpRecord): void => {
  process.stdout.write(`${JSON.stringify(r)}\n`);
};

const base = `/api/v1/namespaces/${config.namespace}/configmaps`;

interface Obj {
  metadata?: { name?: string; resourceVersion?: string };
  data?: { v?: string };
  reason?: string;
  code?: number;
}

function parse(body: string): Obj {
  try {
    return JSON.parse(body) as Obj;
  } catch {
    return {};
  }
}

async function get(replica: string, key: string): Promise<OpRecord> {
  const call = monotonicMs();
  const rec: OpRecord = { c: config.clientId, op: 'get', key, replica, call, ret: 0, out: 'failed' };
  try {
    const r = await http.request(config.replicas[replica]!, 'GET', `${base}/${key}`, undefined, config.requestTimeoutMs);
    rec.ret = monotonicMs();
    rec.status = r.status;
    const o = parse(r.body);
    if (r.status === 200) {
      rec.out = 'ok';
      rec.value = o.data?.v ?? '';
      rec.rv = o.metadata?.resourceVersion;
    } else if (r.status === 404 && o.reason === 'NotFound') {
      rec.out = 'notfound';
    } else {
      rec.why = o.reason ?? r.body.slice(0, 120);
    }
  } catch (e) {
    rec.ret = monotonicMs();
    rec.why = e instanceof RequestFailure ? e.code : String(e);
    if (e instanceof RequestFailure) http.reset(config.replicas[replica]!);
  }
  return rec;
}

async function write(replica: string, key: string, value: string, expectedRv: string | undefined): Promise<OpRecord> {
  const create = expectedRv === undefined;
  const call = monotonicMs();
  const rec: OpRecord = { c: config.clientId, op: create ? 'create' : 'update', key, v: value, replica, call, ret: 0, out: 'unknown' };
  if (!create) rec.e = expectedRv;
  const body = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: key, ...(create ? {} : { resourceVersion: expectedRv }) },
    data: { v: value },
  };
  try {
    const r = create
      ? await http.request(config.replicas[replica]!, 'POST', base, body, config.requestTimeoutMs)
      : await http.request(config.replicas[replica]!, 'PUT', `${base}/${key}`, body, config.requestTimeoutMs);
    rec.ret = monotonicMs();
    rec.status = r.status;
    const o = parse(r.body);
    if (r.status === 200 || r.status === 201) {
      rec.out = 'ok';
      rec.rv = o.metadata?.resourceVersion;
      rec.value = o.data?.v ?? '';
    } else if (r.status === 409 && o.reason === 'AlreadyExists') rec.out = 'exists';
    else if (r.status === 409 && o.reason === 'Conflict') rec.out = 'conflict';
    else if (r.status === 404 && create && /namespaces/.test(r.body)) rec.out = 'refused';
    else if (r.status === 404 && !create) rec.out = 'notfound';
    else if (r.status === 503 || r.status === 429) rec.out = 'failed';
    else rec.out = 'unknown';
    if (rec.out !== 'ok') rec.why = `${o.reason ?? ''} ${typeof (o as { message?: string }).message === 'string' ? (o as { message: string }).message.slice(0, 160) : ''}`.trim();
  } catch (e) {
    rec.ret = monotonicMs();
    if (e instanceof RequestFailure) {
      rec.out = e.sent ? 'unknown' : 'failed';
      rec.why = e.code;
      http.reset(config.replicas[replica]!);
    } else {
      rec.out = 'unknown';
      rec.why = String(e);
    }
  }
  return rec;
}

async function loop(worker: number): Promise<void> {
  let n = 0;
  while (!stopping) {
    const key = config.keys[rand(config.keys.length)]!;
    const read = await get(names[rand(names.length)]!, key);
    emit(read);
    if (stopping) break;
    if (read.out === 'ok' || read.out === 'notfound') {
      const value = `c${config.clientId}w${worker}n${n++}`;
      emit(await write(names[rand(names.length)]!, key, value, read.out === 'ok' ? read.rv : undefined));
    } else {
      await new Promise((r) => setTimeout(r, 50));
    }
    if (config.thinkMs > 0) await new Promise((r) => setTimeout(r, config.thinkMs));
  }
}

await go;
await Promise.all(Array.from({ length: config.workers }, (_, w) => loop(w)));
process.stdout.write(`${JSON.stringify({ done: true })}\n`);
http.close();
process.exit(0);
