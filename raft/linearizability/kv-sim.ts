// raft/linearizability/kv-sim.ts owns a replicated key-value store on the simulated Raft
// cluster, and the clients whose histories the checker judges. Writes (put, cas) go through
// the log; reads use ReadIndex: the node asks the leader for a read index, waits until it has
// applied that far, then reads its local state. Clients give up after a timeout, recording the
// outcome as unknown. Every invocation and response is stamped from one virtual clock.
//
// `readMode: 'local-follower'` is the deliberately broken variant: any node answers a read from
// its local state at once, with no ReadIndex. Followers lag, so reads go stale, and the checker
// must notice.

import type { Entry, NodeId } from '../types.js';
import { RaftError } from '../core/errors.js';
import type { ReadState } from '../core/read-only.js';
import { type SimApplication, type SimNode, type Simulation } from '../sim/cluster.js';
import { runSeed } from '../sim/run-seed.js';
import type { Xoshiro128 } from '../sim/prng.js';
import type { KvInput, KvOperation, KvOutput } from './kv-model.js';

interface Command {
  client: number;
  req: number;
  input: KvInput;
}

type Result = { value?: string | null; swapped?: boolean };

/** The replicated state machine: a map plus per-client deduplication of retried commands. */
export class KvApp implements SimApplication {
  data = new Map<string, string>();
  /** client -> highest request applied; a command at or below it is a duplicate (a re-delivered proposal). */
  sessions = new Map<number, number>();
  /** Result of the last applied command, read by the cluster observer right after apply(). */
  lastResult: { client: number; req: number; result: Result } | undefined;

  apply(e: Entry): void {
    const cmd = JSON.parse(new TextDecoder().decode(e.data)) as Command;
    this.lastResult = undefined;
    if ((this.sessions.get(cmd.client) ?? 0) >= cmd.req) return;
    this.sessions.set(cmd.client, cmd.req);
    const i = cmd.input;
    let result: Result = {};
    if (i.op === 'put') {
      this.data.set(i.key, i.value);
    } else if (i.op === 'cas') {
      const cur = this.data.get(i.key) ?? null;
      const swapped = cur === i.expected;
      if (swapped) this.data.set(i.key, i.value);
      result = { swapped };
    }
    this.lastResult = { client: cmd.client, req: cmd.req, result };
  }

  snapshot(): Uint8Array {
    return new TextEncoder().encode(JSON.stringify({ data: [...this.data], sessions: [...this.sessions] }));
  }

  restore(bytes: Uint8Array): void {
    this.lastResult = undefined;
    if (bytes.byteLength === 0) {
      this.data = new Map();
      this.sessions = new Map();
      return;
    }
    const v = JSON.parse(new TextDecoder().decode(bytes)) as { data: [string, string][]; sessions: [number, number][] };
    this.data = new Map(v.data);
    this.sessions = new Map(v.sessions);
  }
}

interface Outstanding {
  req: number;
  node: NodeId;
  input: KvInput;
  call: number;
  deadline: number;
  /** For reads: the read index once the leader answered. */
  readIndex?: number;
  /** The incarnation of the node's RawNode the request went to; a restart loses it. */
  epoch: object;
}

export interface KvSimOptions {
  readMode: 'read-index' | 'local-follower';
  clients?: number;
  keys?: number;
  faultTicks?: number;
}

/** Runs one seeded simulation with KV clients and returns the recorded history. */
export function runKvSeed(seed: number, o: KvSimOptions): KvOperation[] {
  const clients = new KvClients(o);
  runSeed(seed, {
    faultTicks: o.faultTicks ?? 200,
    livenessTicks: 300,
    proposeRate: 0,
    appFactory: () => new KvApp(),
    observer: {
      onTick: (sim) => clients.tick(sim),
      onApply: (node) => clients.applied(node),
      onReadStates: (node, rs) => clients.readStates(node, rs),
    },
  });
  clients.finish();
  return clients.history;
}

const TIMEOUT_TICKS = 40;

class KvClients {
  readonly history: KvOperation[] = [];
  private readonly opts: KvSimOptions;
  private readonly outstanding = new Map<number, Outstanding>();
  private clock = 0;
  private nextReq = 1;
  private sim: Simulation | undefined;

  constructor(o: KvSimOptions) {
    this.opts = o;
  }

  private stamp(): number {
    return ++this.clock;
  }

  tick(sim: Simulation): void {
    this.sim = sim;
    const rng = sim.rng;
    // Timeouts: the client stops waiting; the outcome is unknown (reads are simply dropped:
    // a read that returned nothing constrains nothing).
    for (const [client, o] of this.outstanding) {
      if (sim.now >= o.deadline) this.complete(client, o, { unknown: true }, true);
    }
    // Reads that have their index and whose node has caught up.
    for (const [client, o] of this.outstanding) this.maybeServeRead(sim, client, o);
    const nClients = this.opts.clients ?? 4;
    for (let c = 1; c <= nClients; c++) {
      if (this.outstanding.has(c) || !rng.chance(0.3)) continue;
      this.invoke(sim, rng, c);
    }
  }

  private invoke(sim: Simulation, rng: Xoshiro128, client: number): void {
    const live = sim.liveNodes();
    if (live.length === 0) return;
    const node = rng.chance(0.5) ? (sim.leader() ?? rng.pick(live)) : rng.pick(live);
    const rn = node.rn;
    if (!rn) return;
    const key = `k${rng.int(this.opts.keys ?? 2)}`;
    const r = rng.float();
    const value = `v${this.nextReq}`;
    const input: KvInput =
      r < 0.45
        ? { op: 'get', key }
        : r < 0.8
          ? { op: 'put', key, value }
          : { op: 'cas', key, expected: rng.chance(0.5) ? null : `v${Math.max(1, this.nextReq - 1 - rng.int(4))}`, value };
    const req = this.nextReq++;
    const call = this.stamp();
    const o: Outstanding = { req, node: node.id, input, call, deadline: sim.now + TIMEOUT_TICKS, epoch: rn };
    if (input.op === 'get') {
      if (this.opts.readMode === 'local-follower') {
        // BROKEN on purpose: whatever this node has applied, right now.
        const app = node.app as KvApp;
        this.outstanding.set(client, o);
        this.complete(client, o, { value: app.data.get(key) ?? null }, false);
        return;
      }
      this.outstanding.set(client, o);
      rn.readIndex(new TextEncoder().encode(`${client}:${req}`));
      return;
    }
    const cmd: Command = { client, req, input };
    try {
      rn.propose(new TextEncoder().encode(JSON.stringify(cmd)));
      this.outstanding.set(client, o);
    } catch (err) {
      // Refused on the spot (no leader known): it certainly did not happen; not part of the history.
      if (!(err instanceof RaftError) || err.code !== 'RAFT_PROPOSAL_DROPPED') throw err;
    }
  }

  applied(node: SimNode): void {
    const res = (node.app as KvApp).lastResult;
    if (!res) return;
    const o = this.outstanding.get(res.client);
    // Only the node the client talked to answers it, like a real server would.
    if (o && o.req === res.req && o.node === node.id && o.epoch === node.rn) this.complete(res.client, o, res.result, false);
    if (this.sim) for (const [c, w] of this.outstanding) if (w.node === node.id) this.maybeServeRead(this.sim, c, w);
  }

  readStates(node: SimNode, rs: ReadState[]): void {
    for (const r of rs) {
      const [c, q] = new TextDecoder().decode(r.requestCtx).split(':').map(Number);
      const o = this.outstanding.get(c);
      if (!o || o.req !== q || o.node !== node.id || o.epoch !== node.rn) continue;
      o.readIndex = r.index;
      if (this.sim) this.maybeServeRead(this.sim, c, o);
    }
  }

  private maybeServeRead(sim: Simulation, client: number, o: Outstanding): void {
    if (o.input.op !== 'get' || o.readIndex === undefined) return;
    const node = sim.nodes.get(o.node);
    if (!node || node.rn !== o.epoch || node.applied < o.readIndex) return;
    this.complete(client, o, { value: (node.app as KvApp).data.get(o.input.key) ?? null }, false);
  }

  private complete(client: number, o: Outstanding, output: KvOutput, timedOut: boolean): void {
    this.outstanding.delete(client);
    if (timedOut && o.input.op === 'get') return;
    this.history.push({ clientId: client, input: o.input, call: o.call, output, return: timedOut ? Infinity : this.stamp() });
  }

  /** At the end, whatever is still outstanding has an unknown outcome. */
  finish(): void {
    for (const [client, o] of this.outstanding) this.complete(client, o, { unknown: true }, true);
  }
}
