// raft/core/random.ts owns the random-source seam. The core has no randomness of its own:
// the only random choice Raft needs (the election timeout in [electionTick, 2*electionTick))
// comes from this injected source, so a seeded source makes every run reproducible.

export interface RandomSource {
  /**
   * A uniformly distributed integer in [0, n). n is a positive integer. Implementations must
   * be deterministic for a given seed; the core calls this once per election-timer reset.
   */
  int(n: number): number;
}
