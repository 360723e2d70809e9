// raft/core/conf-change.ts owns membership transitions, computed on copies so a rejected change
// leaves the live configuration untouched:
//   simple(...)     one voter added or removed (learners freely): the thesis' single-server change;
//   enterJoint(...) any set of changes through joint consensus C_old,new;
//   leaveJoint()    C_old,new -> C_new, turning learnersNext into learners;
//   restore(cs)     rebuilds the config a ConfState describes (on start and on snapshot install).
// It also owns ConfChange helpers: encoding into entry data, and what kind of change a ConfChange is.

import { type ConfChange, type ConfChangeSingle, ConfChangeType, type ConfState, type NodeId } from '../types.js';
import { RaftError } from './errors.js';
import { Inflights } from './inflights.js';
import { Progress } from './progress.js';
import { JointConfig, MajorityConfig } from './quorum.js';
import { cloneTrackerConfig, emptyTrackerConfig, type ProgressMap, type ProgressTracker, type TrackerConfig } from './tracker.js';

export interface ConfigAndProgress {
  config: TrackerConfig;
  progress: ProgressMap;
}

function invalid(message: string): RaftError {
  return new RaftError('RAFT_INVALID_CONF_CHANGE', message);
}

/** Computes new configurations from the tracker's current one. Throws RAFT_INVALID_CONF_CHANGE. */
export class Changer {
  private readonly tracker: ProgressTracker;
  /** Index the leader's log ends at: new members start probing from there. */
  private readonly lastIndex: number;

  constructor(tracker: ProgressTracker, lastIndex: number) {
    this.tracker = tracker;
    this.lastIndex = lastIndex;
  }

  enterJoint(autoLeave: boolean, ccs: ConfChangeSingle[]): ConfigAndProgress {
    const { config, progress } = this.checkAndCopy();
    if (config.voters.isJoint()) throw invalid('config is already joint');
    if (config.voters.incoming.size === 0) {
      // Joint consensus needs an old majority to hand over from.
      throw invalid("can't make a zero-voter config joint");
    }
    const outgoing = new MajorityConfig(config.voters.incoming.ids);
    const incoming = new Set(config.voters.incoming.ids);
    const cfg: TrackerConfig = { ...config, voters: new JointConfig(new MajorityConfig(), outgoing) };
    this.apply(cfg, incoming, progress, ccs);
    cfg.voters = new JointConfig(new MajorityConfig(incoming), outgoing);
    cfg.autoLeave = autoLeave;
    return this.checkAndReturn(cfg, progress);
  }

  leaveJoint(): ConfigAndProgress {
    const { config, progress } = this.checkAndCopy();
    if (!config.voters.isJoint()) throw invalid("can't leave a non-joint config");
    for (const id of config.learnersNext) {
      config.learners.add(id);
      (progress.get(id) as Progress).isLearner = true;
    }
    config.learnersNext = new Set();
    for (const id of config.voters.outgoing.ids) {
      if (!config.voters.incoming.has(id) && !config.learners.has(id)) progress.delete(id);
    }
    config.voters = new JointConfig(config.voters.incoming, new MajorityConfig());
    config.autoLeave = false;
    return this.checkAndReturn(config, progress);
  }

  /**
   * Changes that alter at most one voter. Thesis §4.1: "adding or removing a single server at a
   * time" keeps any majority of the old config overlapping any majority of the new one, so no
   * joint phase is needed.
   */
  simple(ccs: ConfChangeSingle[]): ConfigAndProgress {
    const { config, progress } = this.checkAndCopy();
    if (config.voters.isJoint()) throw invalid("can't apply simple config change in joint config");
    const before = config.voters.incoming.ids;
    const incoming = new Set(before);
    this.apply(config, incoming, progress, ccs);
    let changed = 0;
    for (const id of incoming) if (!before.has(id)) changed++;
    for (const id of before) if (!incoming.has(id)) changed++;
    if (changed > 1) throw invalid('more than one voter changed without entering joint config');
    config.voters = new JointConfig(new MajorityConfig(incoming), new MajorityConfig());
    return this.checkAndReturn(config, progress);
  }

  private apply(cfg: TrackerConfig, incoming: Set<NodeId>, progress: ProgressMap, ccs: ConfChangeSingle[]): void {
    for (const cc of ccs) {
      if (cc.nodeId === 0) continue; // etcd-compatible: a zero id is a no-op
      switch (cc.type) {
        case ConfChangeType.AddNode:
          this.makeVoter(cfg, incoming, progress, cc.nodeId);
          break;
        case ConfChangeType.AddLearnerNode:
          this.makeLearner(cfg, incoming, progress, cc.nodeId);
          break;
        case ConfChangeType.RemoveNode:
          this.remove(cfg, incoming, progress, cc.nodeId);
          break;
        default:
          throw invalid(`unexpected conf type ${String(cc.type)}`);
      }
    }
    if (incoming.size === 0) throw invalid('removed all voters');
  }

  private makeVoter(cfg: TrackerConfig, incoming: Set<NodeId>, progress: ProgressMap, id: NodeId): void {
    const pr = progress.get(id);
    if (!pr) {
      this.initProgress(cfg, incoming, progress, id, false);
      return;
    }
    pr.isLearner = false;
    cfg.learners.delete(id);
    cfg.learnersNext.delete(id);
    incoming.add(id);
  }

  /**
   * A voter in the outgoing config cannot become a learner until the joint config is left
   * (it would be voter and learner at once), so it is parked in learnersNext.
   */
  private makeLearner(cfg: TrackerConfig, incoming: Set<NodeId>, progress: ProgressMap, id: NodeId): void {
    const pr = progress.get(id);
    if (!pr) {
      this.initProgress(cfg, incoming, progress, id, true);
      return;
    }
    if (pr.isLearner) return;
    this.remove(cfg, incoming, progress, id);
    progress.set(id, pr); // keep its replication progress
    if (cfg.voters.outgoing.has(id)) {
      cfg.learnersNext.add(id);
    } else {
      pr.isLearner = true;
      cfg.learners.add(id);
    }
  }

  private remove(cfg: TrackerConfig, incoming: Set<NodeId>, progress: ProgressMap, id: NodeId): void {
    if (!progress.has(id)) return;
    incoming.delete(id);
    cfg.learners.delete(id);
    cfg.learnersNext.delete(id);
    // Still a voter of the outgoing config: it keeps replicating until the joint config is left.
    if (!cfg.voters.outgoing.has(id)) progress.delete(id);
  }

  private initProgress(cfg: TrackerConfig, incoming: Set<NodeId>, progress: ProgressMap, id: NodeId, isLearner: boolean): void {
    if (isLearner) cfg.learners.add(id);
    else incoming.add(id);
    // A new member starts probing at the leader's last index. It counts as recently active so
    // that check-quorum does not immediately step the leader down for a node that has not
    // had the chance to answer yet.
    const pr = new Progress(Math.max(this.lastIndex, 1), new Inflights(this.tracker.maxInflight, this.tracker.maxInflightBytes), isLearner);
    pr.recentActive = true;
    progress.set(id, pr);
  }

  private checkAndCopy(): ConfigAndProgress {
    const config = cloneTrackerConfig(this.tracker.config);
    const progress: ProgressMap = new Map();
    for (const [id, pr] of this.tracker.progress) progress.set(id, pr.clone());
    checkInvariants(config, progress);
    return { config, progress };
  }

  private checkAndReturn(config: TrackerConfig, progress: ProgressMap): ConfigAndProgress {
    checkInvariants(config, progress);
    return { config, progress };
  }
}

/** Invariants every config must satisfy; a violation is a bug in this module, so it throws. */
function checkInvariants(cfg: TrackerConfig, progress: ProgressMap): void {
  for (const id of [...cfg.voters.ids(), ...cfg.learners, ...cfg.learnersNext]) {
    if (!progress.has(id)) throw invalid(`no progress for ${id}`);
  }
  for (const id of cfg.learnersNext) {
    if (!cfg.voters.outgoing.has(id)) throw invalid(`${id} is in LearnersNext, but not Voters[1]`);
    if ((progress.get(id) as Progress).isLearner) throw invalid(`${id} is in LearnersNext, but is already marked as learner`);
  }
  for (const id of cfg.learners) {
    if (cfg.voters.has(id)) throw invalid(`${id} is in Learners and Voters`);
    if (!(progress.get(id) as Progress).isLearner) throw invalid(`${id} is in Learners, but is not marked as learner`);
  }
  if (!cfg.voters.isJoint()) {
    if (cfg.learnersNext.size > 0) throw invalid('cfg.LearnersNext must be empty when not joint');
    if (cfg.autoLeave) throw invalid('AutoLeave must be false when not joint');
  }
}

/**
 * Rebuilds the configuration a ConfState describes by replaying it as changes against an empty
 * tracker: the outgoing voters one at a time, then (if joint) the incoming side as one joint
 * change. Going through the Changer means a restored config obeys the same invariants.
 */
export function restoreConfig(tracker: ProgressTracker, lastIndex: number, cs: ConfState): ConfigAndProgress {
  const outgoing: ConfChangeSingle[] = cs.votersOutgoing.map((id) => ({ type: ConfChangeType.AddNode, nodeId: id }));
  const incoming: ConfChangeSingle[] = [
    ...cs.votersOutgoing.map((id) => ({ type: ConfChangeType.RemoveNode, nodeId: id })),
    ...cs.voters.map((id) => ({ type: ConfChangeType.AddNode, nodeId: id })),
    ...cs.learners.map((id) => ({ type: ConfChangeType.AddLearnerNode, nodeId: id })),
    // learnersNext must be added after the incoming voters were re-added.
    ...cs.learnersNext.map((id) => ({ type: ConfChangeType.AddLearnerNode, nodeId: id })),
  ];
  tracker.config = emptyTrackerConfig();
  tracker.progress = new Map();
  const step = (f: (c: Changer) => ConfigAndProgress): void => {
    const r = f(new Changer(tracker, lastIndex));
    tracker.config = r.config;
    tracker.progress = r.progress;
  };
  if (outgoing.length === 0) {
    for (const cc of incoming) step((c) => c.simple([cc]));
  } else {
    for (const cc of outgoing) step((c) => c.simple([cc]));
    step((c) => c.enterJoint(cs.autoLeave, incoming));
  }
  return { config: tracker.config, progress: tracker.progress };
}

/** An empty ConfChange (auto transition, no changes) asks to leave the joint config. */
export function isLeaveJoint(cc: ConfChange): boolean {
  return cc.changes.length === 0 && cc.transition === 'auto';
}

/**
 * Whether the change goes through joint consensus, and if so whether the joint config is left
 * automatically. 'auto' uses joint consensus only when more than one change is asked for.
 */
export function enterJointMode(cc: ConfChange): { joint: boolean; autoLeave: boolean } {
  if (cc.transition !== 'auto' || cc.changes.length > 1) {
    return { joint: true, autoLeave: cc.transition !== 'explicit' };
  }
  return { joint: false, autoLeave: false };
}

const TRANSITIONS: ConfChange['transition'][] = ['auto', 'implicit', 'explicit'];

/**
 * Encodes a ConfChange as entry data. Layout (big-endian): version byte 1, transition byte,
 * u32 change count, per change (type byte, u32 node id), then the context bytes. The driver
 * decodes committed ConfChange entries with decodeConfChange before calling applyConfChange.
 */
export function encodeConfChange(cc: ConfChange): Uint8Array {
  const out = new Uint8Array(6 + cc.changes.length * 5 + cc.context.byteLength);
  const dv = new DataView(out.buffer);
  dv.setUint8(0, 1);
  dv.setUint8(1, TRANSITIONS.indexOf(cc.transition));
  dv.setUint32(2, cc.changes.length);
  let off = 6;
  for (const c of cc.changes) {
    dv.setUint8(off, c.type);
    dv.setUint32(off + 1, c.nodeId);
    off += 5;
  }
  out.set(cc.context, off);
  return out;
}

/** Inverse of encodeConfChange. Empty data decodes to the leave-joint change. Throws on garbage. */
export function decodeConfChange(data: Uint8Array): ConfChange {
  if (data.byteLength === 0) return { transition: 'auto', changes: [], context: new Uint8Array(0) };
  const dv = new DataView(data.buffer, data.byteOffset, data.byteLength);
  if (data.byteLength < 6 || dv.getUint8(0) !== 1) throw invalid('malformed conf change');
  const transition = TRANSITIONS[dv.getUint8(1)];
  const n = dv.getUint32(2);
  if (transition === undefined || data.byteLength < 6 + n * 5) throw invalid('malformed conf change');
  const changes: ConfChangeSingle[] = [];
  let off = 6;
  for (let i = 0; i < n; i++) {
    const type = dv.getUint8(off) as ConfChangeType;
    if (type !== ConfChangeType.AddNode && type !== ConfChangeType.RemoveNode && type !== ConfChangeType.AddLearnerNode) {
      throw invalid('malformed conf change');
    }
    changes.push({ type, nodeId: dv.getUint32(off + 1) });
    off += 5;
  }
  return { transition, changes, context: data.slice(off) };
}

/** "v4 l5 r3" style description, also the syntax of the scenario scripts. */
export function describeConfChange(cc: ConfChange): string {
  const parts = cc.changes.map((c) => {
    const p = c.type === ConfChangeType.AddNode ? 'v' : c.type === ConfChangeType.AddLearnerNode ? 'l' : 'r';
    return `${p}${c.nodeId}`;
  });
  const s = parts.length === 0 ? 'leave-joint' : parts.join(' ');
  return cc.transition === 'auto' ? s : `${s} (${cc.transition})`;
}
