// raft/core/interaction/env.ts owns the in-process test cluster behind the scenario scripts:
// a set of RawNodes over MemoryStorages, a message queue the script delivers (or drops) by
// hand, and the text every command prints. Everything is deterministic: election timeouts use
// a random source that always answers 0, so a timeout is exactly electionTick ticks.

import { type ConfChangeSingle, ConfChangeType, type ConfState, EntryType, type Message, MessageType, type NodeId } from '../../types.js';
import { decodeConfChange } from '../conf-change.js';
import { describeEntry, describeHardState, describeMessage, describeSnapshot } from '../describe.js';
import { isRaftError } from '../errors.js';
import { levelLogger, type RaftLogger, type RaftLogLevel } from '../logger.js';
import { MemoryStorage } from '../memory-storage.js';
import type { ReadOnlyOption } from '../read-only.js';
import { type Ready, RawNode } from '../raw-node.js';
import { listArg, type ParsedCommand } from './script.js';

interface EnvNode {
  id: NodeId;
  rn: RawNode;
  storage: MemoryStorage;
  /** Membership as of the last applied entry; used when the script compacts the log. */
  confState: ConfState;
  applied: number;
  options: NodeOptions;
}

interface NodeOptions {
  preVote: boolean;
  checkQuorum: boolean;
  readOnlyOption: ReadOnlyOption;
  maxInflightMsgs: number;
  maxSizePerMsg: number;
  electionTick: number;
  heartbeatTick: number;
}

const zeroRandom = { int: () => 0 };

export class InteractionEnv {
  private nodes = new Map<NodeId, EnvNode>();
  private queue: Message[] = [];
  private out: string[] = [];
  private level: RaftLogLevel | 'none' = 'info';
  /** When set, nodes in different groups cannot exchange messages. */
  private groupOf = new Map<NodeId, number>();

  private readonly logger: RaftLogger = {
    enabled: (l) => levelLogger(this.level, () => {}).enabled(l),
    log: (l, msg) => levelLogger(this.level, (line) => this.out.push(line)).log(l, msg),
  };

  /** Runs one command and returns its output lines. */
  run(cmd: ParsedCommand): string[] {
    this.out = [];
    try {
      this.dispatch(cmd);
    } catch (err) {
      // Expected refusals (a dropped proposal, an invalid conf change) are part of the
      // transcript; anything else is a bug and fails the test.
      if (!isRaftError(err) || err.code === 'RAFT_INVARIANT') {
        const detail = err instanceof Error ? err.message : String(err);
        throw new Error(`${detail}\n--- output so far (last 80 lines):\n${this.out.slice(-80).join('\n')}`, { cause: err });
      }
      this.out.push(`error: ${err.code}: ${err.message}`);
    }
    return this.out.length > 0 ? this.out : ['ok'];
  }

  private node(idText: string | undefined): EnvNode {
    const id = Number(idText);
    const n = this.nodes.get(id);
    if (!n) throw new Error(`no node ${idText}`);
    return n;
  }

  private ids(args: string[]): NodeId[] {
    if (args.length === 0) return [...this.nodes.keys()].sort((a, b) => a - b);
    return args.map((a) => this.node(a).id);
  }

  private dispatch(cmd: ParsedCommand): void {
    const { name, args, kv } = cmd;
    switch (name) {
      case 'add-nodes':
        return this.addNodes(Number(args[0]), kv);
      case 'log-level':
        this.level = args[0] as RaftLogLevel | 'none';
        return;
      case 'campaign':
        return this.node(args[0]).rn.campaign();
      case 'propose':
        return this.node(args[0]).rn.propose(new TextEncoder().encode(args[1] ?? ''));
      case 'propose-conf-change':
        return this.proposeConfChange(this.node(args[0]), args.slice(1), kv.get('transition'));
      case 'read-index':
        return this.node(args[0]).rn.readIndex(new TextEncoder().encode(args[1]));
      case 'transfer-leader':
        return this.node(args[0]).rn.transferLeader(Number(args[1]));
      case 'tick-election':
        return this.tickN(this.node(args[0]), this.node(args[0]).options.electionTick);
      case 'tick-heartbeat':
        return this.tickN(this.node(args[0]), this.node(args[0]).options.heartbeatTick);
      case 'tick':
        return this.tickN(this.node(args[0]), Number(args[1] ?? '1'));
      case 'process-ready':
        for (const id of this.ids(args)) this.processReady(this.nodes.get(id) as EnvNode);
        return;
      case 'deliver-msgs':
        this.deliverMsgs(this.ids(args), new Set(listArg(kv.get('drop'))));
        return;
      case 'stabilize':
        return this.stabilize(this.ids(args));
      case 'partition':
        return this.partition(args.map((a) => this.node(a).id));
      case 'heal':
        // Messages sent across the partition while it stood are lost, not delayed.
        for (const m of this.queue) if (!this.connected(m.from, m.to)) this.out.push(`partitioned: ${describeMessage(m)}`);
        this.queue = this.queue.filter((m) => this.connected(m.from, m.to));
        this.groupOf.clear();
        this.out.push('healed');
        return;
      case 'raft-state':
        return this.raftState();
      case 'status':
        return this.status(this.node(args[0]));
      case 'raft-log':
        return this.raftLog(this.node(args[0]));
      case 'compact':
        return this.compact(this.node(args[0]), Number(args[1]));
      case 'report-unreachable':
        return this.node(args[0]).rn.reportUnreachable(Number(args[1]));
      case 'restart':
        return this.restart(this.node(args[0]));
      default:
        throw new Error(`unknown command ${name}`);
    }
  }

  private addNodes(n: number, kv: Map<string, string>): void {
    const voters = listArg(kv.get('voters'));
    const learners = listArg(kv.get('learners'));
    const index = Number(kv.get('index') ?? '1');
    const options: NodeOptions = {
      preVote: kv.get('prevote') === 'true',
      checkQuorum: kv.get('checkquorum') === 'true',
      readOnlyOption: (kv.get('read-only') as ReadOnlyOption | undefined) ?? 'safe',
      maxInflightMsgs: Number(kv.get('max-inflight') ?? '256'),
      maxSizePerMsg: Number(kv.get('max-msg-size') ?? String(1 << 20)),
      electionTick: Number(kv.get('election-tick') ?? '10'),
      heartbeatTick: Number(kv.get('heartbeat-tick') ?? '1'),
    };
    const first = this.nodes.size + 1;
    for (let id = first; id < first + n; id++) {
      const storage = new MemoryStorage();
      const confState: ConfState = { voters, learners, votersOutgoing: [], learnersNext: [], autoLeave: false };
      if (voters.length > 0) {
        // Bootstrap: every founding member starts from the same snapshot holding the initial membership.
        storage.applySnapshot({ metadata: { index, term: 1, confState }, data: new Uint8Array(0) });
        storage.setHardState({ term: 0, vote: 0, commit: index });
      }
      const node: EnvNode = { id, storage, confState, applied: voters.length > 0 ? index : 0, options, rn: this.newRawNode(id, storage, options, 0) };
      this.nodes.set(id, node);
    }
  }

  private newRawNode(id: NodeId, storage: MemoryStorage, o: NodeOptions, applied: number): RawNode {
    return new RawNode({
      id,
      storage,
      applied,
      electionTick: o.electionTick,
      heartbeatTick: o.heartbeatTick,
      preVote: o.preVote,
      checkQuorum: o.checkQuorum,
      readOnlyOption: o.readOnlyOption,
      maxInflightMsgs: o.maxInflightMsgs,
      maxSizePerMsg: o.maxSizePerMsg,
      random: zeroRandom,
      logger: {
        enabled: (l) => this.logger.enabled(l),
        log: (l, msg) => this.logger.log(l, msg),
      },
    });
  }

  private restart(n: EnvNode): void {
    // Only what reached storage survives: the queue keeps messages already sent.
    const snapIndex = n.storage.snapshot().metadata.index;
    n.applied = snapIndex;
    n.rn = this.newRawNode(n.id, n.storage, n.options, snapIndex);
  }

  private proposeConfChange(n: EnvNode, specs: string[], transition: string | undefined): void {
    const changes: ConfChangeSingle[] = specs.map((s) => {
      const id = Number(s.slice(1));
      switch (s[0]) {
        case 'v':
          return { type: ConfChangeType.AddNode, nodeId: id };
        case 'l':
          return { type: ConfChangeType.AddLearnerNode, nodeId: id };
        case 'r':
          return { type: ConfChangeType.RemoveNode, nodeId: id };
        default:
          throw new Error(`bad conf change ${s}`);
      }
    });
    const t = (transition ?? 'auto') as 'auto' | 'implicit' | 'explicit';
    n.rn.proposeConfChange({ transition: t, changes, context: new Uint8Array(0) });
  }

  private tickN(n: EnvNode, count: number): void {
    for (let i = 0; i < count; i++) n.rn.tick();
  }

  /** Carries out one Ready in the documented order, printing it. Returns whether there was one. */
  private processReady(n: EnvNode): boolean {
    if (!n.rn.hasReady()) return false;
    const rd = n.rn.ready();
    this.out.push(`> ${n.id} handling Ready`);
    for (const l of describeReady(rd)) this.out.push(`  ${l}`);
    // 1. persist
    if (rd.snapshot) n.storage.applySnapshot(rd.snapshot);
    n.storage.append(rd.entries);
    if (rd.hardState) n.storage.setHardState(rd.hardState);
    // 2. send
    this.queue.push(...rd.messages);
    // 3. apply
    if (rd.snapshot) {
      n.confState = rd.snapshot.metadata.confState;
      n.applied = rd.snapshot.metadata.index;
    }
    for (const e of rd.committedEntries) {
      if (e.type === EntryType.ConfChange) {
        const cc = decodeConfChange(e.data);
        n.confState = n.rn.applyConfChange(cc);
      }
      n.applied = e.index;
    }
    n.rn.advance(rd);
    return true;
  }

  private connected(a: NodeId, b: NodeId): boolean {
    if (this.groupOf.size === 0) return true;
    return (this.groupOf.get(a) ?? 0) === (this.groupOf.get(b) ?? 0);
  }

  /** Delivers queued messages addressed to `ids` (in order), dropping those to `drop`. */
  private deliverMsgs(ids: NodeId[], drop: Set<NodeId>): boolean {
    let any = false;
    for (const id of ids) {
      const mine = this.queue.filter((m) => m.to === id);
      if (mine.length === 0) continue;
      this.queue = this.queue.filter((m) => m.to !== id);
      for (const m of mine) {
        any = true;
        if (drop.has(id)) {
          this.out.push(`dropped: ${describeMessage(m)}`);
          this.reportSnapshot(m, false);
          continue;
        }
        if (!this.connected(m.from, m.to)) {
          this.out.push(`partitioned: ${describeMessage(m)}`);
          this.reportSnapshot(m, false);
          continue;
        }
        const target = this.nodes.get(m.to);
        if (!target) {
          this.out.push(`no such node: ${describeMessage(m)}`);
          continue;
        }
        this.out.push(describeMessage(m));
        target.rn.step(m);
        this.reportSnapshot(m, true);
      }
    }
    // Messages to ids not delivered stay queued.
    for (const d of drop) {
      if (ids.includes(d)) continue;
      const mine = this.queue.filter((m) => m.to === d);
      this.queue = this.queue.filter((m) => m.to !== d);
      for (const m of mine) {
        any = true;
        this.out.push(`dropped: ${describeMessage(m)}`);
      }
    }
    return any;
  }

  /** The transport tells the leader whether a snapshot it streamed arrived. */
  private reportSnapshot(m: Message, ok: boolean): void {
    if (m.type !== MessageType.Snap) return;
    this.out.push(`${m.from} reported snapshot to ${m.to} ${ok ? 'delivered' : 'failed'}`);
    this.nodes.get(m.from)?.rn.reportSnapshot(m.to, ok);
  }

  private stabilize(ids: NodeId[]): void {
    for (let round = 0; ; round++) {
      if (round > 200) throw new Error('stabilize: no quiescence after 200 rounds (messages ping-pong forever)');
      let any = false;
      for (const id of ids) any = this.processReady(this.nodes.get(id) as EnvNode) || any;
      for (const id of ids) any = this.deliverMsgs([id], new Set()) || any;
      if (!any) return;
    }
  }

  private partition(side: NodeId[]): void {
    this.groupOf.clear();
    for (const id of this.nodes.keys()) this.groupOf.set(id, side.includes(id) ? 1 : 2);
    const other = [...this.nodes.keys()].filter((id) => !side.includes(id)).sort((a, b) => a - b);
    this.out.push(`partitioned (${side.join(' ')}) from (${other.join(' ')})`);
  }

  private raftState(): void {
    for (const id of this.ids([])) {
      const n = this.nodes.get(id) as EnvNode;
      const st = n.rn.status();
      const cs = st.config;
      const role = cs.voters.includes(id) || cs.votersOutgoing.includes(id) ? 'Voter' : cs.learners.includes(id) || cs.learnersNext.includes(id) ? 'Learner' : 'Non-Member';
      this.out.push(`${id}: ${st.raftState} (${role}) Term:${st.term} Lead:${st.lead}`);
    }
  }

  private status(n: EnvNode): void {
    const st = n.rn.status();
    this.out.push(`${st.id}: ${st.raftState} Term:${st.term} Vote:${st.vote} Lead:${st.lead} Commit:${st.commit} Applied:${st.applied}`);
    const cs = st.config;
    let conf = `voters=(${cs.voters.join(' ')})`;
    if (cs.votersOutgoing.length > 0) conf += `&&(${cs.votersOutgoing.join(' ')})`;
    if (cs.learners.length > 0) conf += ` learners=(${cs.learners.join(' ')})`;
    if (cs.learnersNext.length > 0) conf += ` learners_next=(${cs.learnersNext.join(' ')})`;
    if (cs.autoLeave) conf += ' autoleave';
    this.out.push(`config: ${conf}`);
    if (st.progress) {
      for (const [id, p] of st.progress) {
        let s = `${id}: ${p.state} match=${p.match} next=${p.next}`;
        if (p.isLearner) s += ' learner';
        if (p.paused) s += ' paused';
        if (p.inflight > 0) s += ` inflight=${p.inflight}`;
        this.out.push(s);
      }
    }
  }

  private raftLog(n: EnvNode): void {
    const first = n.storage.firstIndex();
    const last = n.storage.lastIndex();
    if (last < first) {
      this.out.push(`log is empty: first index=${first}, last index=${last}`);
      return;
    }
    for (const e of n.storage.entries(first, last + 1, Number.MAX_SAFE_INTEGER)) this.out.push(describeEntry(e));
  }

  private compact(n: EnvNode, index: number): void {
    n.storage.createSnapshot(index, n.confState, new TextEncoder().encode(`snap@${index}`));
    n.storage.compact(index);
    this.out.push(`${n.id} compacted log to index ${index}`);
  }
}

export function describeReady(rd: Ready): string[] {
  const l: string[] = [];
  l.push(`Ready MustSync=${rd.mustSync}:`);
  if (rd.softState) l.push(`Lead:${rd.softState.lead} State:${rd.softState.raftState}`);
  if (rd.hardState) l.push(`HardState ${describeHardState(rd.hardState)}`);
  if (rd.entries.length > 0) {
    l.push('Entries:');
    for (const e of rd.entries) l.push(describeEntry(e));
  }
  if (rd.snapshot) l.push(`Snapshot ${describeSnapshot(rd.snapshot)}`);
  if (rd.committedEntries.length > 0) {
    l.push('CommittedEntries:');
    for (const e of rd.committedEntries) l.push(describeEntry(e));
  }
  if (rd.messages.length > 0) {
    l.push('Messages:');
    for (const m of rd.messages) l.push(describeMessage(m));
  }
  if (rd.readStates.length > 0) {
    l.push('ReadStates:');
    for (const rs of rd.readStates) l.push(`Index:${rs.index} RequestCtx:${JSON.stringify(new TextDecoder().decode(rs.requestCtx))}`);
  }
  return l;
}
