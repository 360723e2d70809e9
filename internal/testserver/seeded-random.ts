// internal/testserver/seeded-random owns the seeded random numbers of randomized tests, so a
// failing seed replays exactly. Test-only. Imports: nothing from the project.

/** A small seeded generator (mulberry32): the same seed, the same sequence of numbers in [0, 1). */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
