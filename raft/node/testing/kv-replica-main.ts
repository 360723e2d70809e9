// raft/node/testing/kv-replica-main.ts is the entry point of one replica process used by the
// multi-process tests and the benchmark: a RaftNode over segment files (fsync on) and the HTTP/2
// mutual-TLS transport, replicating KvStateMachine, with a tiny HTTP/1.1 client API:
//   POST /put {key,value}      → 200 {index} once committed and applied here; 400 on a bad body
//                                 503 {code} certainly not applied, 504 {code} outcome unknown,
//                                 429 {code} with Retry-After: too many proposals pending
//   GET  /get?key=k            → 200 {value, index} after a ReadIndex barrier; 503 on failure
//   GET  /status               → RaftNode status (role, leader, term, commit, applied)
//   GET  /stats                → RaftNode.stats() (batching and time counters)
//   POST /partition?on=1|0     → cut this member off the Raft network (fault injection)
// argv: <path of a ReplicaConfig JSON file>. Prints one line `{"ready":true}` once serving.

import { readFileSync } from 'node:fs';
import * as http from 'node:http';
import { createRaftLogStore } from '../../storage/log-store-dir.js';
import { memberCommonName, type TlsMaterial } from '../../transport/cluster-ca.js';
import { Http2Transport } from '../../transport/http2-transport.js';
import type { NodeId } from '../../types.js';
import { isRaftNodeError } from '../node-errors.js';
import { RaftNode } from '../raft-node.js';
import { KvStateMachine, kvPutCommandFromJson } from './kv-state-machine.js';
import { PartitionableTransport } from './partitionable-transport.js';

export interface ReplicaConfig {
  id: NodeId;
  clusterId: string;
  dataDir: string;
  raft: { host: string; port: number };
  api: { host: string; port: number };
  peers: [NodeId, string][];
  tls: TlsMaterial;
  tickMs: number;
  electionTicks: number;
  snapshotEntries?: number;
}

const config = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as ReplicaConfig;
const sm = new KvStateMachine();
let partitionable: PartitionableTransport | null = null;

const node = await RaftNode.start({
  id: config.id,
  peers: new Map(config.peers),
  store: createRaftLogStore(config.dataDir),
  stateMachine: sm,
  transport: (handler) =>
    (partitionable = new PartitionableTransport(handler, (inner) =>
      new Http2Transport({
        id: config.id,
        clusterId: config.clusterId,
        listen: config.raft,
        tls: config.tls,
        handler: inner,
        peerCommonName: memberCommonName,
        backoff: { initialMs: 20, maxMs: 300 },
      }),
    )),
  tickMs: config.tickMs,
  electionTicks: config.electionTicks,
  heartbeatTicks: 1,
  snapshotEntries: config.snapshotEntries ?? 2_000,
  catchUpEntries: 500,
  proposalTimeoutMs: 3_000,
  readTimeoutMs: 2_000,
  onFatal: (err) => {
    process.stderr.write(`fatal: ${err.stack ?? err.message}\n`);
    process.exit(70);
  },
});

function reply(res: http.ServerResponse, status: number, body: unknown, headers: string[] = []): void {
  const text = JSON.stringify(body);
  res.writeHead(status, ['content-type', 'application/json', 'content-length', String(Buffer.byteLength(text)), ...headers]);
  res.end(text);
}

function failure(res: http.ServerResponse, err: unknown): void {
  if (isRaftNodeError(err, 'PROPOSAL_QUEUE_FULL')) {
    reply(res, 429, { code: err.code, message: err.message }, ['retry-after', '1']);
  } else if (isRaftNodeError(err)) {
    const unknown = err.code === 'PROPOSAL_OUTCOME_UNKNOWN';
    reply(res, unknown ? 504 : 503, { code: err.code, message: err.message });
  } else {
    reply(res, 500, { code: 'INTERNAL', message: (err as Error).message });
  }
}

// The put path is what the benchmark measures, so it avoids work the other paths can afford:
// no URL parsing, the body passed on as the command (after validation) rather than parsed and
// encoded again, and a reply as small as etcd's.
const server = http.createServer((req, res) => {
  let first: Buffer | null = null;
  let more: Buffer[] | null = null;
  req.on('data', (c: Buffer) => {
    if (first === null) first = c;
    else (more ??= [first]).push(c);
  });
  req.on('end', () => {
    const body: Buffer = more ? Buffer.concat(more) : (first ?? Buffer.alloc(0));
    if (req.method === 'POST' && req.url === '/put') {
      const command = kvPutCommandFromJson(body);
      if (!command) return reply(res, 400, { code: 'BAD_REQUEST', message: 'body must be {"key": string, "value": string}' });
      node.propose(command).then(
        (r) => reply(res, 200, { index: r.index }),
        (err: unknown) => failure(res, err),
      );
      return;
    }
    const url = new URL(req.url ?? '/', 'http://replica');
    if (req.method === 'GET' && url.pathname === '/get') {
      const key = url.searchParams.get('key') ?? '';
      node.readIndex().then(
        (index) => reply(res, 200, { value: sm.get(key) ?? null, index }),
        (err: unknown) => failure(res, err),
      );
    } else if (req.method === 'GET' && url.pathname === '/status') {
      const s = node.status();
      reply(res, 200, { id: s.id, role: s.role, leader: s.leader, term: s.term, commit: s.commit, applied: s.applied });
    } else if (req.method === 'GET' && url.pathname === '/stats') {
      reply(res, 200, node.stats());
    } else if (req.method === 'POST' && url.pathname === '/partition') {
      if (partitionable) partitionable.partitioned = url.searchParams.get('on') === '1';
      reply(res, 200, { partitioned: partitionable?.partitioned ?? false });
    } else {
      reply(res, 404, { code: 'NOT_FOUND' });
    }
  });
});
server.keepAliveTimeout = 60_000;
await new Promise<void>((resolve) => server.listen(config.api.port, config.api.host, resolve));
process.stdout.write(`${JSON.stringify({ ready: true })}\n`);

const shutdown = (): void => {
  server.close();
  void node.stop().then(() => process.exit(0));
};
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);
