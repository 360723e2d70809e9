// Property tests: the quorum math against a naive version that enumerates candidates, over
// random configs and acknowledgements from a seeded generator.
import { describe, expect, it } from 'vitest';
import { JointConfig, MajorityConfig, NO_LIMIT, VoteResult } from './quorum.js';
import { Xoshiro128 } from '../sim/prng.js';

/** Naive: the largest index i such that a strict majority has acked >= i. */
function naiveCommitted(ids: number[], acked: Map<number, number>): number {
  if (ids.length === 0) return NO_LIMIT;
  const candidates = new Set<number>([0, ...ids.map((id) => acked.get(id) ?? 0)]);
  let best = 0;
  for (const c of candidates) {
    const n = ids.filter((id) => (acked.get(id) ?? 0) >= c).length;
    if (n * 2 > ids.length && c > best) best = c;
  }
  return best;
}

/** Naive: try every way of filling the missing votes; Won/Lost if all outcomes agree. */
function naiveVote(configs: number[][], votes: Map<number, boolean>): VoteResult {
  const all = [...new Set(configs.flat())];
  const missing = all.filter((id) => !votes.has(id));
  const outcomes = new Set<boolean>();
  for (let mask = 0; mask < 1 << missing.length; mask++) {
    const v = new Map(votes);
    missing.forEach((id, i) => v.set(id, (mask & (1 << i)) !== 0));
    const won = configs.every((ids) => ids.length === 0 || ids.filter((id) => v.get(id)).length * 2 > ids.length);
    outcomes.add(won);
  }
  if (outcomes.size === 2) return VoteResult.Pending;
  return outcomes.has(true) ? VoteResult.Won : VoteResult.Lost;
}

function randomIds(rng: Xoshiro128, max: number): number[] {
  const n = rng.int(max + 1);
  const ids = new Set<number>();
  while (ids.size < n) ids.add(1 + rng.int(9));
  return [...ids];
}

describe('quorum math matches a naive implementation', () => {
  it('committedIndex for majority and joint configs', () => {
    const rng = new Xoshiro128(7);
    for (let iter = 0; iter < 5000; iter++) {
      const a = randomIds(rng, 7);
      const b = rng.int(2) === 0 ? [] : randomIds(rng, 7);
      const acked = new Map<number, number>();
      for (const id of new Set([...a, ...b])) if (rng.int(5) > 0) acked.set(id, rng.int(10));
      const idx = (id: number) => acked.get(id);
      expect(new MajorityConfig(a).committedIndex(idx)).toBe(naiveCommitted(a, acked));
      const joint = new JointConfig(new MajorityConfig(a), new MajorityConfig(b));
      expect(joint.committedIndex(idx)).toBe(Math.min(naiveCommitted(a, acked), naiveCommitted(b, acked)));
    }
  });

  it('voteResult for majority and joint configs', () => {
    const rng = new Xoshiro128(11);
    for (let iter = 0; iter < 5000; iter++) {
      const a = randomIds(rng, 7);
      const b = rng.int(2) === 0 ? [] : randomIds(rng, 5);
      const votes = new Map<number, boolean>();
      for (const id of new Set([...a, ...b])) {
        const r = rng.int(3);
        if (r < 2) votes.set(id, r === 0);
      }
      expect(new MajorityConfig(a).voteResult(votes)).toBe(naiveVote([a], votes));
      expect(new JointConfig(new MajorityConfig(a), new MajorityConfig(b)).voteResult(votes)).toBe(naiveVote([a, b], votes));
    }
  });

  it('an empty config imposes no constraint', () => {
    expect(new MajorityConfig().committedIndex(() => 5)).toBe(NO_LIMIT);
    expect(new MajorityConfig().voteResult(new Map())).toBe(VoteResult.Won);
  });
});
