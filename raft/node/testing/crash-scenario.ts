// raft/node/testing/crash-scenario.ts owns seeded crash scenarios of RaftNode in one process:
// three or five members (all voters, or one voter and learners) over LocalNetwork, each behind
// a PartitionableTransport that cuts a crashed member off at once, one ManualClock, seeded
// election timeouts, memory-level stores behind CrashableLogStore, state machines applying one
// command at a time or in batches. A seed drives every choice: when disk writes complete (a
// disk may stall for a while), when members crash (between ticks or between turns of the
// event loop, with their writes in flight), restart, are partitioned, and when clients
// propose. Safety is checked throughout:
//   - at most one leader per term (a vote lost in a crash could elect two);
//   - no two different commands applied at one index, by any member or incarnation;
//   - no member fails unless crashed on purpose;
// and at the end, with faults stopped and every member restarted, that every proposal a
// client saw acknowledged is in every member's state machine.
// What may not survive a crash is decided by the store: unsynced writes and writes whose
// save() had not resolved are lost, so any message RaftNode sends that relies on a write not
// yet durable (a vote, an acknowledgement) shows up as a violation.

import type { AbstractLevel } from 'abstract-level';
import { MemoryLevel } from 'memory-level';
import { LevelLogStore } from '../../storage/level-log-store.js';
import { LocalNetwork } from '../../transport/local-transport.js';
import type { NodeId } from '../../types.js';
import { Xoshiro128 } from '../../sim/prng.js';
import { isRaftNodeError } from '../node-errors.js';
import { RaftNode, type AppliedCommand } from '../raft-node.js';
import { CrashableLogStore } from './crashable-log-store.js';
import { BatchingKvStateMachine, KvStateMachine, encodeKvCommand } from './kv-state-machine.js';
import { ManualClock } from './manual-clock.js';
import { PartitionableTransport } from './partitionable-transport.js';

type Db = AbstractLevel<Uint8Array, Uint8Array, Uint8Array>;

const TICK = 10;

export interface CrashScenarioOptions {
  seed: number;
  /** Ticks with faults. Default 250. */
  faultTicks?: number;
  /** Ticks allowed after faults stop for every member to catch up. Default 600. */
  livenessTicks?: number;
  /** The broken disk of CrashableLogStore, for the test that shows violations are caught. */
  lyingFsync?: boolean;
  /** Keep a trace of events for the failure report. Default true. */
  trace?: boolean;
}

export interface CrashScenarioResult {
  members: number;
  learners: number;
  acked: number;
  crashes: number;
  /** Highest index applied: how far the cluster got. */
  applied: number;
  batching: boolean;
}

export class CrashScenarioFailure extends Error {
  readonly seed: number;
  constructor(seed: number, message: string) {
    super(`seed ${seed}: ${message}`);
    this.seed = seed;
  }
}

/** One process lifetime of a member. */
interface Incarnation {
  node: RaftNode;
  store: CrashableLogStore;
  transport: PartitionableTransport;
  sm: KvStateMachine;
  dead: boolean;
}

interface Member {
  id: NodeId;
  db: Db;
  life: Incarnation | null;
  /** A slow disk: no write completes before this tick. */
  diskStalledUntil: number;
}

export async function runCrashScenario(o: CrashScenarioOptions): Promise<CrashScenarioResult> {
  const rng = new Xoshiro128(o.seed);
  const size = rng.chance(0.6) ? 3 : 5;
  // Sometimes a single voter with learners: the voter alone makes a quorum, so it commits
  // entries in the very Ready that appends them.
  const learners = rng.chance(0.25) ? Array.from({ length: size - 1 }, (_, i) => i + 2) : [];
  const batching = rng.chance(0.5);
  const faultRate = rng.pick([0.02, 0.05, 0.08]);
  const clock = new ManualClock();
  const net = new LocalNetwork();
  const peers = new Map(Array.from({ length: size }, (_, i) => [i + 1, `local://${i + 1}`] as [NodeId, string]));
  const members = new Map<NodeId, Member>();
  const trace: string[] = [];
  let now = 0;
  const log = (what: string): void => {
    if (o.trace === false) return;
    trace.push(`[t=${now}] ${what}`);
    if (trace.length > 400) trace.splice(0, 200);
  };
  /** The first violation seen in a callback (a driver's, a promise's): raised on the next turn. */
  let failure: CrashScenarioFailure | null = null;
  const fail = (msg: string): never => {
    failure ??= new CrashScenarioFailure(o.seed, `${msg}\n(members ${size}, learners [${learners.join(',')}], batching ${batching}, fault rate ${faultRate})\nlast events:\n${trace.slice(-80).join('\n')}`);
    throw failure;
  };
  /** For callbacks: records the violation without throwing into the caller (RaftNode, a promise). */
  const report = (msg: string): void => {
    try {
      fail(msg);
    } catch {
      // raised by the main loop (see turn)
    }
  };
  const turn = async (): Promise<void> => {
    await new Promise((resolve) => setImmediate(resolve));
    if (failure) throw failure;
  };

  // ---- the checks
  const appliedAt = new Map<number, string>();
  const leaders = new Map<number, NodeId>();
  const acked = new Map<string, { value: string; index: number }>();
  let outstanding = 0;
  let crashes = 0;
  const dec = new TextDecoder();
  const recordApply = (id: NodeId, life: () => Incarnation | null, c: AppliedCommand): void => {
    // A crashed process does nothing more anyone could see.
    if (life()?.dead) return;
    const what = `${c.term}:${dec.decode(c.data)}`;
    const prior = appliedAt.get(c.index);
    if (prior === undefined) appliedAt.set(c.index, what);
    else if (prior !== what) report(`state machine safety: member ${id} applied ${what} at ${c.index}, where ${prior} was applied before`);
  };
  const checkLeaders = (): void => {
    for (const m of members.values()) {
      if (!m.life || m.life.dead) continue;
      const s = m.life.node.status();
      if (s.role !== 'leader') continue;
      const prior = leaders.get(s.term);
      if (prior !== undefined && prior !== m.id) fail(`election safety: members ${prior} and ${m.id} both leaders in term ${s.term}`);
      leaders.set(s.term, m.id);
    }
  };

  // ---- member lifecycle
  const start = async (m: Member): Promise<void> => {
    const store = new CrashableLogStore(new LevelLogStore(m.db), { lyingFsync: o.lyingFsync });
    // Starting reads and bootstraps the store; the disk is fast until the member runs.
    store.autoComplete = true;
    let life: Incarnation | null = null;
    const lifeOf = (): Incarnation | null => life;
    const sm: KvStateMachine = batching ? new RecordingBatchingKv((c) => recordApply(m.id, lifeOf, c)) : new RecordingKv((c) => recordApply(m.id, lifeOf, c));
    let transport: PartitionableTransport | null = null;
    const node = await RaftNode.start({
      id: m.id,
      peers,
      bootstrapLearners: learners,
      store,
      transport: (handler) => (transport = new PartitionableTransport(handler, (inner) => net.transport(m.id, inner))),
      stateMachine: sm,
      tickMs: TICK,
      electionTicks: 10,
      heartbeatTicks: 1,
      snapshotEntries: 8,
      catchUpEntries: 2,
      proposalTimeoutMs: 200 * TICK,
      readTimeoutMs: 50 * TICK,
      clock,
      random: rng.fork(),
      onFatal: (err) => {
        if (life?.dead) return; // its store was pulled away on purpose
        report(`member ${m.id} failed: ${err.stack ?? err.message}`);
      },
    });
    store.autoComplete = false;
    life = { node, store, transport: transport!, sm, dead: false };
    m.life = life;
    log(`start ${m.id} (${node.status().applied} applied)`);
  };

  const crash = async (m: Member): Promise<void> => {
    const life = m.life;
    if (!life) return;
    m.life = null;
    life.dead = true;
    crashes++;
    log(`crash ${m.id} with ${life.store.pendingWrites} writes in flight`);
    life.transport.partitioned = true;
    await life.store.crash();
    await life.node.stop();
  };

  const propose = (m: Member, seq: number): void => {
    const life = m.life;
    if (!life) return;
    const key = `k${seq}`;
    const value = `v${seq}`;
    outstanding++;
    life.node.propose(encodeKvCommand({ op: 'put', key, value })).then(
      (r) => {
        outstanding--;
        // An answer from a process that has crashed never reached its client.
        if (life.dead) return;
        acked.set(key, { value, index: r.index });
        log(`acked ${key} at ${r.index} by ${m.id}`);
      },
      (err: unknown) => {
        outstanding--;
        if (!isRaftNodeError(err)) report(`propose at ${m.id} failed with ${String(err)}`);
      },
    );
  };

  const live = (): Member[] => [...members.values()].filter((m) => m.life !== null);
  const down = (): Member[] => [...members.values()].filter((m) => m.life === null);

  for (const [id] of peers) {
    const m: Member = { id, db: new MemoryLevel<Uint8Array, Uint8Array>({ keyEncoding: 'view', valueEncoding: 'view' }) as unknown as Db, life: null, diskStalledUntil: 0 };
    members.set(id, m);
  }
  for (const m of members.values()) await start(m);

  let seq = 0;
  try {
    // ---- fault phase
    for (let t = 0; t < (o.faultTicks ?? 250); t++) {
      now = t;
      if (rng.chance(faultRate)) {
        const r = rng.float();
        if (r < 0.4 && live().length > 0) await crash(rng.pick(live()));
        else if (r < 0.75 && down().length > 0) await start(rng.pick(down()));
        else if (r < 0.9) {
          const a = rng.pick([...members.keys()]);
          const b = rng.pick([...members.keys()]);
          if (a !== b) {
            net.cut(a, b);
            log(`cut ${a}-${b}`);
          }
        } else {
          net.healAll();
          log('heal');
        }
      }
      if (rng.chance(0.5) && live().length > 0) {
        const target = rng.pick(live());
        for (let k = rng.chance(0.3) ? 1 + rng.int(4) : 1; k > 0; k--) propose(target, ++seq);
      }
      // Now and then a disk stalls for a while: writes pile up in flight.
      for (const m of live()) if (rng.chance(0.04)) m.diskStalledUntil = t + 1 + rng.int(12);
      clock.advance(TICK);
      // A few turns of the event loop, with disk writes completing (or not) in between and,
      // now and then, a member crashing in the middle of whatever it is doing.
      for (let k = 1 + rng.int(6); k > 0; k--) {
        for (const m of live()) {
          if (m.diskStalledUntil > t) continue;
          const pending = m.life!.store.pendingWrites;
          if (pending > 0 && rng.chance(0.6)) await m.life!.store.complete(1 + rng.int(pending));
        }
        await turn();
        checkLeaders();
        if (rng.chance(faultRate / 8) && live().length > 0) await crash(rng.pick(live()));
      }
    }

    // ---- liveness phase: no more faults, every member up, a fast disk
    log('faults stop');
    net.healAll();
    for (const m of down()) await start(m);
    for (const m of live()) {
      m.life!.store.autoComplete = true;
      await m.life!.store.complete();
    }
    // Settled once a write proposed now (a barrier: committing it commits everything before
    // it) is applied on every member. Until a new leader commits an entry of its own term,
    // entries committed before the faults stopped may not be committed in its eyes yet.
    const limit = o.livenessTicks ?? 600;
    let settled = false;
    let barrier: number | null = null;
    for (let t = 0; t < limit && !settled; t++) {
      now = (o.faultTicks ?? 250) + t;
      clock.advance(TICK);
      for (let k = 0; k < 4; k++) await turn();
      checkLeaders();
      const leader = live().find((m) => m.life!.node.status().role === 'leader');
      if (outstanding === 0 && leader) {
        if (barrier === null || !acked.has(`k${barrier}`)) propose(leader, (barrier = ++seq));
        else settled = live().every((m) => m.life!.sm.get(`k${barrier}`) !== undefined);
      }
    }
    if (!settled) {
      const states = live().map((m) => {
        const s = m.life!.node.status();
        return `${m.id}: ${s.role} term=${s.term} leader=${s.leader} commit=${s.commit} applied=${s.applied}`;
      });
      fail(`liveness: not settled ${limit} ticks after faults stopped (${outstanding} proposals outstanding)\n${states.join('\n')}`);
    }

    if (failure) throw failure;
    // ---- every acknowledged proposal survived, everywhere
    for (const m of members.values()) {
      const sm = m.life!.sm;
      for (const [key, { value, index }] of acked) {
        if (sm.get(key) !== value) fail(`acknowledged put ${key}=${value} (index ${index}) is missing on member ${m.id}`);
      }
    }
    const applied = Math.max(...live().map((m) => m.life!.node.status().applied));
    if (failure) throw failure;
    return { members: size, learners: learners.length, acked: acked.size, crashes, applied, batching };
  } finally {
    for (const m of members.values()) {
      const life = m.life;
      if (!life) continue;
      m.life = null;
      life.store.autoComplete = true;
      await life.store.complete();
      await life.node.stop();
    }
  }
}

class RecordingKv extends KvStateMachine {
  constructor(private readonly record: (c: AppliedCommand) => void) {
    super();
  }
  override apply(c: AppliedCommand): string | null {
    this.record(c);
    return super.apply(c);
  }
}

class RecordingBatchingKv extends BatchingKvStateMachine {
  constructor(private readonly record: (c: AppliedCommand) => void) {
    super();
  }
  override applyBatch(commands: AppliedCommand[]): (string | null)[] {
    for (const c of commands) this.record(c);
    return super.applyBatch(commands);
  }
}
