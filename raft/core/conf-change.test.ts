// Membership transitions: the Changer's rules, the ConfState round trip through restore, and
// the ConfChange encoding.
import { describe, expect, it } from 'vitest';
import { type ConfChange, ConfChangeType, type ConfState } from '../types.js';
import { Xoshiro128 } from '../sim/prng.js';
import { Changer, decodeConfChange, encodeConfChange, restoreConfig } from './conf-change.js';
import { isRaftError } from './errors.js';
import { ProgressTracker } from './tracker.js';

const v = (id: number) => ({ type: ConfChangeType.AddNode, nodeId: id });
const l = (id: number) => ({ type: ConfChangeType.AddLearnerNode, nodeId: id });
const r = (id: number) => ({ type: ConfChangeType.RemoveNode, nodeId: id });

function trackerWith(cs: Partial<ConfState>): ProgressTracker {
  const t = new ProgressTracker(10, 0);
  restoreConfig(t, 10, { voters: [], learners: [], votersOutgoing: [], learnersNext: [], autoLeave: false, ...cs });
  return t;
}

function apply(t: ProgressTracker, f: (c: Changer) => { config: ProgressTracker['config']; progress: ProgressTracker['progress'] }): ConfState {
  const res = f(new Changer(t, 10));
  t.config = res.config;
  t.progress = res.progress;
  return t.confState();
}

function refused(f: () => unknown): boolean {
  try {
    f();
    return false;
  } catch (err) {
    return isRaftError(err, 'RAFT_INVALID_CONF_CHANGE');
  }
}

describe('Changer', () => {
  it('simple changes alter at most one voter (thesis §4.1)', () => {
    const t = trackerWith({ voters: [1, 2, 3] });
    expect(apply(t, (c) => c.simple([v(4)])).voters).toEqual([1, 2, 3, 4]);
    expect(refused(() => new Changer(t, 10).simple([v(5), v(6)]))).toBe(true);
    // Learner changes do not count: adding any number of learners is one simple change.
    expect(apply(t, (c) => c.simple([l(5), l(6), r(4)])).learners).toEqual([5, 6]);
  });

  it('refuses removing every voter', () => {
    expect(refused(() => new Changer(trackerWith({ voters: [1] }), 10).simple([r(1)]))).toBe(true);
  });

  it('enters and leaves a joint config; demoted outgoing voters wait in learnersNext', () => {
    const t = trackerWith({ voters: [1, 2, 3] });
    const joint = apply(t, (c) => c.enterJoint(true, [v(4), l(3)]));
    expect(joint).toEqual({ voters: [1, 2, 4], votersOutgoing: [1, 2, 3], learners: [], learnersNext: [3], autoLeave: true });
    expect(refused(() => new Changer(t, 10).enterJoint(false, [v(5)]))).toBe(true);
    expect(refused(() => new Changer(t, 10).simple([v(5)]))).toBe(true);
    const left = apply(t, (c) => c.leaveJoint());
    expect(left).toEqual({ voters: [1, 2, 4], votersOutgoing: [], learners: [3], learnersNext: [], autoLeave: false });
    expect(refused(() => new Changer(t, 10).leaveJoint())).toBe(true);
  });

  it('keeps a removed outgoing voter replicating until the joint config is left', () => {
    const t = trackerWith({ voters: [1, 2, 3] });
    apply(t, (c) => c.enterJoint(false, [r(3)]));
    expect(t.progress.has(3)).toBe(true);
    apply(t, (c) => c.leaveJoint());
    expect(t.progress.has(3)).toBe(false);
  });

  it('restoreConfig reproduces any reachable ConfState', () => {
    const rng = new Xoshiro128(3);
    for (let iter = 0; iter < 300; iter++) {
      const t = trackerWith({ voters: [1] });
      for (let step = 0; step < 6; step++) {
        const id = 1 + rng.int(6);
        const cc = rng.pick([v, l, r])(id);
        try {
          if (t.config.voters.isJoint()) apply(t, (c) => c.leaveJoint());
          else if (rng.chance(0.5)) apply(t, (c) => c.enterJoint(rng.chance(0.5), [cc, rng.pick([v, l, r])(1 + rng.int(6))]));
          else apply(t, (c) => c.simple([cc]));
        } catch (err) {
          if (!isRaftError(err, 'RAFT_INVALID_CONF_CHANGE')) throw err;
        }
        const cs = t.confState();
        expect(trackerWith(cs).confState()).toEqual(cs);
      }
    }
  });
});

describe('ConfChange encoding', () => {
  it('round-trips and decodes empty data as leave-joint', () => {
    const cc: ConfChange = { transition: 'explicit', changes: [v(4), l(5), r(2)], context: new Uint8Array([1, 2, 3]) };
    expect(decodeConfChange(encodeConfChange(cc))).toEqual(cc);
    expect(decodeConfChange(new Uint8Array(0))).toEqual({ transition: 'auto', changes: [], context: new Uint8Array(0) });
  });

  it('rejects garbage with a coded error instead of crashing', () => {
    expect(refused(() => decodeConfChange(new Uint8Array([9, 9, 9])))).toBe(true);
    expect(refused(() => decodeConfChange(new Uint8Array([1, 0, 0, 0, 0, 5])))).toBe(true);
  });
});
