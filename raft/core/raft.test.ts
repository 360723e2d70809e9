// Rules of the Raft paper checked directly against the state machine, each quoting the
// sentence it checks, plus the RawNode Ready/advance contract.
import { describe, expect, it } from 'vitest';
import { type ConfChange, ConfChangeType, type Entry, EntryType, type Message, MessageType } from '../types.js';
import { decodeConfChange, encodeConfChange } from './conf-change.js';
import { isProposalDropped, isRaftError } from './errors.js';
import { MemoryStorage } from './memory-storage.js';
import { makeMessage, proposalContextTerm, proposalTermContext } from './messages.js';
import { StateType } from './raft.js';
import { RawNode } from './raw-node.js';

const zero = { int: () => 0 };

function newNode(id: number, voters: number[], opts: { preVote?: boolean; checkQuorum?: boolean } = {}): { rn: RawNode; storage: MemoryStorage } {
  const storage = new MemoryStorage();
  storage.applySnapshot({ metadata: { index: 1, term: 1, confState: { voters, learners: [], votersOutgoing: [], learnersNext: [], autoLeave: false } }, data: new Uint8Array(0) });
  return { rn: new RawNode({ id, storage, electionTick: 10, heartbeatTick: 1, random: zero, ...opts }), storage };
}

/** Carries out a Ready in the documented order; returns its messages. */
function handle(n: { rn: RawNode; storage: MemoryStorage }): Message[] {
  if (!n.rn.hasReady()) return [];
  const rd = n.rn.ready();
  if (rd.snapshot) n.storage.applySnapshot(rd.snapshot);
  n.storage.append(rd.entries);
  if (rd.hardState) n.storage.setHardState(rd.hardState);
  n.rn.advance(rd);
  return rd.messages;
}

/** Three members; the leader (1) proposed 'x' and the Ready appending it is outstanding (its write in flight). */
function leaderWritingX() {
  const c = cluster(3);
  c.node(1).rn.campaign();
  c.stabilize();
  const leader = c.node(1);
  leader.rn.propose(data('x'));
  const rd = leader.rn.ready();
  return { c, leader, rd, x: rd.entries[0]!.index };
}

function cluster(size: number) {
  const ids = Array.from({ length: size }, (_, i) => i + 1);
  const nodes = new Map(ids.map((id) => [id, newNode(id, ids)]));
  const stabilize = (drop: (m: Message) => boolean = () => false): void => {
    for (let i = 0; i < 100; i++) {
      const msgs = [...nodes.values()].flatMap(handle);
      if (msgs.length === 0) return;
      for (const m of msgs) if (!drop(m)) nodes.get(m.to)?.rn.step(m);
    }
  };
  return { nodes, stabilize, node: (id: number) => nodes.get(id) as { rn: RawNode; storage: MemoryStorage } };
}

const data = (s: string) => new TextEncoder().encode(s);

describe('Raft rules', () => {
  it('§5.2 "each server will vote for at most one candidate in a given term, on a first-come-first-served basis"', () => {
    const n = newNode(1, [1, 2, 3]);
    n.rn.step(makeMessage({ type: MessageType.Vote, from: 2, to: 1, term: 2, index: 1, logTerm: 1 }));
    n.rn.step(makeMessage({ type: MessageType.Vote, from: 3, to: 1, term: 2, index: 1, logTerm: 1 }));
    const resps = handle(n).filter((m) => m.type === MessageType.VoteResp);
    expect(resps.map((m) => [m.to, m.reject])).toEqual([
      [2, false],
      [3, true],
    ]);
  });

  it('§5.4.1 "the voter denies its vote if its own log is more up-to-date than that of the candidate"', () => {
    const n = newNode(1, [1, 2, 3]);
    // Give node 1 an entry of term 2 at index 2.
    n.rn.step(makeMessage({ type: MessageType.App, from: 2, to: 1, term: 2, index: 1, logTerm: 1, entries: [{ term: 2, index: 2, type: EntryType.Normal, data: data('x') }] }));
    handle(n);
    // Candidate 3's log ends at (index 5, term 1): longer, but an older last term.
    n.rn.step(makeMessage({ type: MessageType.Vote, from: 3, to: 1, term: 3, index: 5, logTerm: 1 }));
    expect(handle(n).find((m) => m.type === MessageType.VoteResp)?.reject).toBe(true);
    // Candidate with the same last term and at least as long a log gets the vote.
    n.rn.step(makeMessage({ type: MessageType.Vote, from: 3, to: 1, term: 4, index: 2, logTerm: 2 }));
    expect(handle(n).find((m) => m.type === MessageType.VoteResp)?.reject).toBe(false);
  });

  it('§5.3 "If an existing entry conflicts with a new one (same index but different terms), delete the existing entry and all that follow it"', () => {
    const n = newNode(1, [1, 2, 3]);
    const e = (index: number, term: number): Entry => ({ index, term, type: EntryType.Normal, data: data(`${term}/${index}`) });
    n.rn.step(makeMessage({ type: MessageType.App, from: 2, to: 1, term: 2, index: 1, logTerm: 1, entries: [e(2, 2), e(3, 2), e(4, 2)] }));
    handle(n);
    n.rn.step(makeMessage({ type: MessageType.App, from: 3, to: 1, term: 3, index: 2, logTerm: 2, entries: [e(3, 3)] }));
    handle(n);
    expect(n.storage.lastIndex()).toBe(3);
    expect(n.storage.term(3)).toBe(3);
  });

  it('§5.3 "If the follower does not find an entry in its log with the same index and term, then it refuses the new entries"', () => {
    const n = newNode(1, [1, 2, 3]);
    n.rn.step(makeMessage({ type: MessageType.App, from: 2, to: 1, term: 2, index: 5, logTerm: 2, entries: [] }));
    const resp = handle(n).find((m) => m.type === MessageType.AppResp);
    expect(resp?.reject).toBe(true);
    expect(resp?.rejectHint).toBe(1); // our last index: the leader may probe from there
  });

  it('§5.4.2 a leader only commits by counting replicas once an entry of its own term is on a quorum', () => {
    const c = cluster(3);
    c.node(1).rn.campaign();
    c.stabilize();
    expect(c.node(1).rn.status().raftState).toBe(StateType.Leader);
    expect(c.node(1).rn.status().commit).toBe(2); // the leader's no-op (index 2) committed
    c.node(1).rn.propose(data('a'));
    c.stabilize();
    expect([1, 2, 3].map((id) => c.node(id).rn.status().commit)).toEqual([3, 3, 3]);
  });

  it('§5.1 "If a candidate or leader discovers that its term is out of date, it immediately reverts to follower state"', () => {
    const c = cluster(3);
    c.node(1).rn.campaign();
    c.stabilize();
    c.node(1).rn.step(makeMessage({ type: MessageType.Heartbeat, from: 2, to: 1, term: 9 }));
    expect(c.node(1).rn.status()).toMatchObject({ raftState: StateType.Follower, term: 9, lead: 2 });
  });

  it('followers forward proposals to the leader; with no leader a proposal is dropped', () => {
    const lonely = newNode(1, [1, 2, 3]);
    let err: unknown;
    try {
      lonely.rn.propose(data('x'));
    } catch (e) {
      err = e;
    }
    expect(isProposalDropped(err)).toBe(true);
    const c = cluster(3);
    c.node(1).rn.campaign();
    c.stabilize();
    c.node(2).rn.propose(data('via-follower'));
    c.stabilize();
    const last = c.node(1).storage.lastIndex();
    expect(new TextDecoder().decode(c.node(1).storage.entries(last, last + 1, 1000)[0].data)).toBe('via-follower');
  });
});

describe('RawNode Ready contract', () => {
  it('a vote is in the same Ready as the hard state recording it, and that Ready must sync', () => {
    const n = newNode(1, [1, 2, 3]);
    n.rn.step(makeMessage({ type: MessageType.Vote, from: 2, to: 1, term: 2, index: 1, logTerm: 1 }));
    const rd = n.rn.ready();
    expect(rd.hardState).toEqual({ term: 2, vote: 2, commit: 1 });
    expect(rd.messages.map((m) => m.type)).toEqual([MessageType.VoteResp]);
    expect(rd.mustSync).toBe(true);
  });

  it('a commit-only change need not be synced', () => {
    const c = cluster(3);
    c.node(1).rn.campaign();
    c.stabilize();
    c.node(1).rn.propose(data('a'));
    c.stabilize((m) => m.from === 1 && m.to === 2 && m.commit === 3); // 2 stores "a" but misses the commit
    const f = c.node(2);
    const term = f.rn.status().term;
    expect(f.rn.status().commit).toBe(2);
    f.rn.step(makeMessage({ type: MessageType.Heartbeat, from: 1, to: 2, term, commit: 3 }));
    const rd = f.rn.ready();
    expect(rd.entries).toEqual([]);
    expect(rd.hardState?.commit).toBe(3);
    expect(rd.mustSync).toBe(false);
  });

  it('ready() twice without advance() is a contract violation', () => {
    const n = newNode(1, [1]);
    n.rn.campaign();
    n.rn.ready();
    expect(n.rn.hasReady()).toBe(false);
    let err: unknown;
    try {
      n.rn.ready();
    } catch (e) {
      err = e;
    }
    expect(isRaftError(err, 'RAFT_INVARIANT')).toBe(true);
  });

  it('a single-voter cluster commits its own entries and hands them out to apply', () => {
    const n = newNode(1, [1]);
    n.rn.campaign();
    handle(n);
    n.rn.propose(data('solo'));
    const rd = n.rn.ready();
    expect(rd.entries.map((e) => e.index)).toEqual([3]);
    expect(rd.committedEntries.map((e) => e.index)).toEqual([3]);
    n.storage.append(rd.entries);
    n.rn.advance(rd);
    expect(n.rn.status().applied).toBe(3);
  });

  it('proposeBatch appends the commands in order, in one append message per follower', () => {
    const c = cluster(3);
    c.node(1).rn.campaign();
    c.stabilize();
    const leader = c.node(1);
    leader.rn.proposeBatch(['a', 'b', 'c', 'd'].map(data));
    const rd = leader.rn.ready();
    expect(rd.entries.map((e) => new TextDecoder().decode(e.data))).toEqual(['a', 'b', 'c', 'd']);
    const apps = rd.messages.filter((m) => m.type === MessageType.App);
    expect(apps.map((m) => [m.to, m.entries.length])).toEqual([
      [2, 4],
      [3, 4],
    ]);
    leader.storage.append(rd.entries);
    leader.rn.advance(rd);
    for (const m of apps) c.node(m.to).rn.step(m);
    c.stabilize();
    expect(c.node(3).rn.status().commit).toBe(rd.entries[3]!.index);
  });

  it('proposeBatch is all or nothing: without a leader nothing is appended', () => {
    const n = newNode(1, [1, 2, 3]);
    let err: unknown;
    try {
      n.rn.proposeBatch([data('x'), data('y')]);
    } catch (e) {
      err = e;
    }
    expect(isProposalDropped(err)).toBe(true);
    expect(n.rn.hasReady() ? n.rn.ready().entries : []).toEqual([]);
  });

  it('durablyCommittedIndex counts the leader only up to what it has stored (§10.2.1)', () => {
    const { c, leader, rd, x } = leaderWritingX(); // x is being written: not in the leader's storage yet
    const ack = (id: number): void => {
      for (const m of rd.messages.filter((mm) => mm.to === id)) c.node(id).rn.step(m);
      for (const m of handle(c.node(id))) leader.rn.step(m);
    };
    ack(2);
    // Committed (the core counts the leader's own copy), but durable on one member only.
    expect(leader.rn.status().commit).toBe(x);
    expect(leader.rn.durablyCommittedIndex()).toBeLessThan(x);
    ack(3);
    expect(leader.rn.durablyCommittedIndex()).toBe(x);
    expect(leader.rn.committedEntriesBetween(x, x).map((e) => new TextDecoder().decode(e.data))).toEqual(['x']);
    // A follower: the commit index it was told (the leader's no-op), which it holds durably.
    expect(c.node(2).rn.status().commit).toBe(x - 1);
    expect(c.node(2).rn.durablyCommittedIndex()).toBe(x - 1);
    leader.storage.append(rd.entries);
    leader.rn.advance(rd);
    expect(leader.rn.ready().committedEntries.map((e) => e.index)).toEqual([x]);
  });

  it('durablyCommittedIndex on a follower stops at what its storage holds', () => {
    const c = cluster(3);
    c.node(1).rn.campaign();
    c.stabilize();
    const leader = c.node(1);
    const follower = c.node(2);
    leader.rn.propose(data('x'));
    const app = handle(leader).filter((m) => m.to === 2);
    const x = app[0]!.entries[0]!.index;
    // Told that x is committed while its own write of x is still in flight: not yet.
    for (const m of app) follower.rn.step({ ...m, commit: x });
    const rd = follower.rn.ready();
    expect(rd.entries.map((e) => e.index)).toEqual([x]);
    expect(follower.rn.durablyCommittedIndex()).toBe(x - 1);
    follower.storage.append(rd.entries);
    expect(follower.rn.durablyCommittedIndex()).toBe(x);
  });

  it('takeEarlyMessages: a follower forwards proposals and answers heartbeats while a Ready is outstanding, and keeps its acknowledgements', () => {
    const c = cluster(3);
    c.node(1).rn.campaign();
    c.stabilize();
    const leader = c.node(1);
    const follower = c.node(2);
    leader.rn.propose(data('x'));
    for (const m of handle(leader).filter((mm) => mm.to === 2)) follower.rn.step(m);
    const rd = follower.rn.ready(); // its write of x is in flight, then its acknowledgement goes
    expect(rd.messages.map((m) => m.type)).toEqual([MessageType.AppResp]);
    // A heartbeat arrives and a client proposes meanwhile.
    follower.rn.step(makeMessage({ type: MessageType.Heartbeat, from: 1, to: 2, term: leader.rn.status().term, commit: 0 }));
    follower.rn.propose(data('y'));
    const status = follower.rn.status();
    // Not while its term or vote may be unwritten.
    expect(follower.rn.takeEarlyMessages({ term: status.term - 1, vote: status.vote, leader: true }).map((m) => m.type)).toEqual([MessageType.Prop]);
    const early = follower.rn.takeEarlyMessages({ term: status.term, vote: status.vote, leader: true });
    // The heartbeat's answer promises nothing about the disk: it does not wait for the fsync
    // (a leader that hears nothing for an election timeout steps down).
    expect(early.map((m) => [m.type, m.to])).toEqual([[MessageType.HeartbeatResp, 1]]);
    follower.storage.append(rd.entries);
    follower.rn.advance(rd);
    // The proposal did not come twice; nothing else was queued.
    expect(follower.rn.hasReady() ? follower.rn.ready().messages : []).toEqual([]);
  });

  it('a forwarded proposal is fenced to its proposer\'s term: appended only by the leader of that term, never passed on', () => {
    const c = cluster(3);
    c.node(1).rn.campaign();
    c.stabilize();
    const leader = c.node(1);
    const term = leader.rn.term();
    // The follower forwards with its term in the context.
    c.node(2).rn.propose(data('y'));
    const [fwd] = handle(c.node(2)).filter((m) => m.type === MessageType.Prop);
    expect(fwd!.to).toBe(1);
    expect(proposalContextTerm(fwd!.context)).toBe(term);
    const last = () => leader.storage.lastIndex();
    const before = last();
    // The leader of that term appends it; one sent in another term (delayed in a connection,
    // or passed on) it drops; one that says nothing (an older member) it appends.
    leader.rn.step(fwd!);
    handle(leader);
    expect(last()).toBe(before + 1);
    leader.rn.step({ ...fwd!, context: proposalTermContext(term - 1) });
    leader.rn.step({ ...fwd!, context: proposalTermContext(term + 1) });
    handle(leader);
    expect(last()).toBe(before + 1);
    leader.rn.step({ ...fwd!, context: new Uint8Array(0) });
    handle(leader);
    expect(last()).toBe(before + 2);
    // A follower that receives a proposal meant for a leader drops it rather than pass it on.
    c.node(3).rn.step({ ...fwd!, to: 3 });
    expect(handle(c.node(3)).filter((m) => m.type === MessageType.Prop)).toEqual([]);
  });

  it('takeEarlyMessages: a leader keeps sending heartbeats, and read-index answers, behind any outstanding write', () => {
    const { c, leader, rd, x } = leaderWritingX();
    const hs = () => ({ term: leader.rn.status().term, vote: leader.rn.status().vote });
    // A follower's read barrier is confirmed meanwhile (at the commit index before x)...
    c.node(3).rn.readIndex(data('ctx'));
    for (const m of handle(c.node(3))) leader.rn.step(m);
    // (the confirming heartbeats go out as the fix lets them: taken from the queue here)
    const confirm = leader.rn.raft.msgs.filter((mm) => mm.type === MessageType.Heartbeat);
    leader.rn.raft.msgs = leader.rn.raft.msgs.filter((mm) => mm.type !== MessageType.Heartbeat);
    for (const m of confirm) {
      c.node(m.to).rn.step(m);
      for (const r of handle(c.node(m.to))) leader.rn.step(r);
    }
    // ...and node 2 acknowledges x: committed by counting the leader's unwritten copy, so the
    // messages announcing it must wait for the write.
    for (const m of rd.messages.filter((mm) => mm.to === 2)) c.node(2).rn.step(m);
    for (const m of handle(c.node(2))) leader.rn.step(m);
    expect(leader.rn.status().commit).toBe(x);
    // The heartbeats of the ticks after that still go out at once, announcing only what is
    // durable on a quorum; so does the read answer (its index is durable); before the fix
    // a queued read answer or commit index held every heartbeat until the write finished.
    for (let i = 0; i < 3; i++) leader.rn.tick();
    const early = leader.rn.takeEarlyMessages({ ...hs(), leader: true });
    const beats = early.filter((m) => m.type === MessageType.Heartbeat);
    expect(beats.filter((m) => m.to === 2).length).toBeGreaterThanOrEqual(3);
    expect(beats.filter((m) => m.to === 3).length).toBeGreaterThanOrEqual(3);
    expect(beats.every((m) => m.commit <= leader.rn.durablyCommittedIndex())).toBe(true);
    expect(early.filter((m) => m.type === MessageType.ReadIndexResp).map((m) => [m.to, m.index <= leader.rn.durablyCommittedIndex()])).toEqual([[3, true]]);
    // Nothing is sent early while the leader's term or vote may be unwritten.
    leader.rn.tick();
    expect(leader.rn.takeEarlyMessages({ term: hs().term - 1, vote: hs().vote, leader: true })).toEqual([]);
  });

  it('takeEarlyMessages: a leader sends appends before its write, but no commit index resting on that write', () => {
    const c = cluster(3);
    c.node(1).rn.campaign();
    c.stabilize();
    const leader = c.node(1);
    const hs = () => ({ term: leader.rn.status().term, vote: leader.rn.status().vote });
    leader.rn.propose(data('x'));
    const rd = leader.rn.ready(); // the leader's write of x is in flight; its appends went out (sent early)
    const x = rd.entries[0]!.index;
    leader.rn.propose(data('y'));
    // Not before the outstanding Ready's own messages are on their way.
    expect(leader.rn.takeEarlyMessages({ ...hs(), leader: false })).toEqual([]);
    const early = leader.rn.takeEarlyMessages({ ...hs(), leader: true });
    expect(early.map((m) => [m.type, m.to, m.entries.map((e) => e.index)])).toEqual([
      [MessageType.App, 2, [x + 1]],
      [MessageType.App, 3, [x + 1]],
    ]);
    // Node 2 acknowledges x: committed only by counting the leader's unwritten copy, so the
    // appends announcing it wait for the Ready.
    for (const m of rd.messages.filter((mm) => mm.to === 2)) c.node(2).rn.step(m);
    for (const m of handle(c.node(2))) leader.rn.step(m);
    expect(leader.rn.status().commit).toBe(x);
    expect(leader.rn.takeEarlyMessages({ ...hs(), leader: true })).toEqual([]);
    // Node 3 acknowledges too: x is durable on a quorum without the leader, announce it now.
    for (const m of rd.messages.filter((mm) => mm.to === 3)) c.node(3).rn.step(m);
    for (const m of handle(c.node(3))) leader.rn.step(m);
    const announced = leader.rn.takeEarlyMessages({ ...hs(), leader: true });
    expect(announced.length).toBeGreaterThan(0);
    expect(announced.every((m) => m.type === MessageType.App && m.commit === x)).toBe(true);
    // A leader whose term is not the one its driver last wrote sends nothing early.
    leader.rn.propose(data('z'));
    expect(leader.rn.takeEarlyMessages({ term: hs().term - 1, vote: hs().vote, leader: true })).toEqual([]);
  });

  it('RaftLog.termIfHeld answers like term(), with undefined where term() throws', () => {
    // Followers ask for the term of every entry a leader sends, most of them new: that path
    // must not throw and catch an error per entry.
    const { storage } = newNode(2, [1, 2, 3]);
    const entries = [2, 3, 4].map((index) => ({ term: index < 4 ? 1 : 2, index, type: EntryType.Normal, data: data(`e${index}`) }));
    storage.append(entries.slice(0, 2));
    const rn = new RawNode({ id: 2, storage, electionTick: 10, heartbeatTick: 1, random: zero });
    const log = rn.raft.raftLog;
    log.append(entries.slice(2));
    for (const i of [0, 1, 2, 3, 4, 5, 9]) {
      let expected: number | undefined;
      try {
        expected = log.term(i);
      } catch {
        expected = undefined;
      }
      expect([i, log.termIfHeld(i)]).toEqual([i, expected]);
    }
    expect(log.matchTerm(4, 2)).toBe(true);
    expect(log.matchTerm(5, 2)).toBe(false);
  });

  it('ignores local-only message types arriving from the network', () => {
    const n = newNode(1, [1, 2, 3]);
    n.rn.step(makeMessage({ type: MessageType.Hup, from: 2, to: 1 }));
    expect(n.rn.status().raftState).toBe(StateType.Follower);
  });

  it('rejects invalid configuration with a coded error', () => {
    const storage = new MemoryStorage();
    let err: unknown;
    try {
      new RawNode({ id: 1, storage, electionTick: 10, heartbeatTick: 1, random: zero, readOnlyOption: 'lease-based' });
    } catch (e) {
      err = e;
    }
    expect(isRaftError(err, 'RAFT_INVALID_CONFIG')).toBe(true);
  });
});

describe('restart', () => {
  it('accepts an applied index above the persisted commit (commit-only updates are not synced)', () => {
    const { storage } = newNode(1, [1, 2, 3]);
    storage.append([2, 3, 4].map((index) => ({ index, term: 1, type: EntryType.Normal, data: data(`e${index}`) })));
    storage.setHardState({ term: 1, vote: 0, commit: 2 });
    const rn = new RawNode({ id: 1, storage, applied: 4, electionTick: 10, heartbeatTick: 1, random: zero });
    expect(rn.status()).toMatchObject({ commit: 4, applied: 4 });
    expect(rn.hasReady()).toBe(true); // the raised commit index is reported to be persisted
  });
});

describe('membership changes the configuration cannot take', () => {
  const change = (type: ConfChangeType, nodeId: number): ConfChange => ({ transition: 'auto', changes: [{ type, nodeId }], context: new Uint8Array(0) });
  const removeLast = change(ConfChangeType.RemoveNode, 1);

  it('confChangeError names why, and changes nothing', () => {
    const n = newNode(1, [1]);
    expect(n.rn.confChangeError(removeLast)).toMatch(/removed all voters/);
    expect(n.rn.confChangeError(change(ConfChangeType.AddNode, 2))).toBeNull();
    expect(n.rn.status().config.voters).toEqual([1]);
  });

  it('a leader keeps them out of the log: the entry becomes an empty normal entry', () => {
    const n = newNode(1, [1]);
    n.rn.campaign();
    handle(n);
    n.rn.proposeConfChange(removeLast);
    const rd = n.rn.ready();
    expect(rd.entries.map((e) => [e.type, e.data.byteLength])).toEqual([[EntryType.Normal, 0]]);
    n.storage.append(rd.entries);
    n.rn.advance(rd);
    expect(n.rn.confChangePending()).toBe(false);
  });

  it('confChangePending is true on a leader while an accepted change is not applied', () => {
    const n = newNode(1, [1]);
    n.rn.campaign();
    handle(n);
    n.rn.proposeConfChange(change(ConfChangeType.AddLearnerNode, 2));
    expect(n.rn.confChangePending()).toBe(true);
    const rd = n.rn.ready();
    n.storage.append(rd.entries);
    expect(rd.committedEntries.map((e) => e.type)).toEqual([EntryType.ConfChange]);
    n.rn.applyConfChange(decodeConfChange(rd.committedEntries[0]!.data));
    n.rn.advance(rd);
    expect(n.rn.confChangePending()).toBe(false);
    expect(n.rn.status().config.learners).toEqual([2]);
  });

  it('one already committed in an old log is ignored on apply, and the node goes on (also after a restart)', () => {
    // A log written before leaders checked changes: index 2 removes the only voter.
    const { storage } = newNode(1, [1]);
    storage.append([{ index: 2, term: 1, type: EntryType.ConfChange, data: encodeConfChange(removeLast) }]);
    storage.setHardState({ term: 1, vote: 0, commit: 2 });
    for (let restart = 0; restart < 2; restart++) {
      const rn = new RawNode({ id: 1, storage, applied: 1, electionTick: 10, heartbeatTick: 1, random: zero });
      const rd = rn.ready();
      expect(rd.committedEntries.map((e) => e.index)).toEqual([2]);
      expect(rn.applyConfChange(decodeConfChange(rd.committedEntries[0]!.data)).voters).toEqual([1]);
      rn.advance(rd);
      rn.campaign();
      expect(rn.status().raftState).toBe(StateType.Leader);
    }
  });
});

describe('forgetLeader (pre-vote with checkQuorum)', () => {
  /** Three members with pre-vote and checkQuorum, 1 elected; messages to or from `dead` are lost. */
  function leased() {
    const ids = [1, 2, 3];
    const nodes = new Map(ids.map((id) => [id, newNode(id, ids, { preVote: true, checkQuorum: true })]));
    let dead = 0;
    const stabilize = (): void => {
      for (let i = 0; i < 100; i++) {
        const msgs = [...nodes.values()].flatMap(handle);
        if (msgs.length === 0) return;
        for (const m of msgs) if (m.to !== dead && m.from !== dead) nodes.get(m.to)?.rn.step(m);
      }
    };
    const node = (id: number) => nodes.get(id)!;
    node(1).rn.campaign();
    stabilize();
    expect(node(1).rn.status().raftState).toBe(StateType.Leader);
    return { node, stabilize, kill: (id: number) => void (dead = id) };
  }

  it('a follower that still holds the lease ignores the pre-vote of another, so a campaign right after the leader died fails', () => {
    const c = leased();
    c.kill(1);
    c.node(2).rn.campaign();
    c.stabilize();
    expect(c.node(2).rn.status().raftState).not.toBe(StateType.Leader);
    expect(c.node(3).rn.status().lead).toBe(1);
  });

  it('once the other follower forgot the leader, the campaign wins at once', () => {
    const c = leased();
    const term = c.node(2).rn.status().term;
    c.kill(1);
    c.node(3).rn.forgetLeader();
    expect(c.node(3).rn.status()).toMatchObject({ raftState: StateType.Follower, lead: 0, term });
    c.node(2).rn.campaign();
    c.stabilize();
    expect(c.node(2).rn.status()).toMatchObject({ raftState: StateType.Leader, term: term + 1 });
    expect(c.node(3).rn.status()).toMatchObject({ lead: 2, term: term + 1 });
  });

  it('a follower that forgot takes the leader back from its next heartbeat; a leader cannot forget itself', () => {
    const c = leased();
    c.node(1).rn.forgetLeader();
    expect(c.node(1).rn.status()).toMatchObject({ raftState: StateType.Leader, lead: 1 });
    c.node(2).rn.forgetLeader();
    expect(c.node(2).rn.status().lead).toBe(0);
    for (let i = 0; i < 2; i++) c.node(1).rn.tick(); // a heartbeat is due
    c.stabilize();
    expect(c.node(2).rn.status()).toMatchObject({ raftState: StateType.Follower, lead: 1 });
  });
});
