// bench/plan owns the sizes of a bench run for each mode: `full` (the figures),
// `quick` (a subset in a few minutes) and `tiny` (seconds; the smoke test's proof that the
// harness works end to end — its numbers mean nothing). Imports: none.

export type BenchMode = 'full' | 'quick' | 'tiny';

export interface BenchPlan {
  mode: BenchMode;
  /** Measured time per system in a closed-loop comparison, after `warmupMs` per round. */
  durationMs: number;
  /** Compared systems alternate this many times (each round gets durationMs / rounds). */
  rounds: number;
  warmupMs: number;
  getConnections: number;
  writeInFlight: number;
  /** Pods in the listed collection. */
  listPods: number;
  /**
   * Lists each figure averages (split over the rounds in the list row): in quick mode as in
   * full, since a mean of three 40 ms lists was at the mercy of one descheduled list.
   */
  listRepeats: number;
  watchers: number;
  watchWritesPerSec: number;
  watchDurationMs: number;
  /**
   * The watchers' client: `native` (bench/native/h2watch, nghttp2 + OpenSSL) costs a fraction
   * of the CPU of `node` (node:http2), whose receiving cost the server's two cores otherwise pay.
   */
  watchClient: 'native' | 'node';
  /** Stored pods for the startup and memory rows, on a server of their own (0: the main server with whatever the earlier scenarios left). */
  storedPods: number;
  ssaDeployments: number;
  /** RBAC objects of other users in the authorized-reads row. */
  rbacObjects: number;
  /** Quiet time before a memory figure is read, so garbage of the previous step can go. */
  settleMs: number;
  /** Restarts with nothing stored; the median is reported. */
  startupRestarts: number;
  /** Run raft/bench when it is built. */
  raft: boolean;
  /** Run the second (CBOR-gated) server for the CBOR encoding rows. */
  cborServer: boolean;
  /**
   * Run the multi-replica scenarios (cluster-*, one-member) without being named in --only: each
   * starts clusters of its own, tens of seconds before anything is measured.
   */
  clusterScenarios: boolean;
  /**
   * Warm-up of each round of the multi-replica rows, which count completions in the window
   * (countBy): long enough for hundreds in flight at seconds of latency to reach steady state.
   */
  clusterWarmupMs: number;
  /**
   * Unmeasured load on every compared system before the first round of the GET row and the write rows (single
   * server and three replicas): a fresh Node process spends a large share of its CPU compiling
   * hot functions for its first tens of seconds under load (about 30 % of a replica's CPU 8–20 s
   * in, 9 % after a minute, in a perf profile), which the rows would otherwise measure instead of
   * the steady state; etcd, a Go binary, has no such phase but gets the same load. 0 = none
   * (--jit-warmup 0, the figures of earlier runs).
   */
  jitWarmupMs: number;
  /** Creates in flight, each level a row, through three replicas and three etcd members. */
  clusterWriteInFlight: number[];
  /** Pods a replica reads (consistent GET of one of them, consistent LIST of all). */
  clusterReadPods: number;
  /** Connections of the consistent-LIST rows (each list is clusterReadPods pods). */
  clusterListConnections: number;
  /** kill -9 of the leader, measured this many times per system (median and max reported). */
  failoverRounds: number;
}

export function planFor(mode: BenchMode): BenchPlan {
  switch (mode) {
    case 'full':
      return { mode, durationMs: 12_000, rounds: 3, warmupMs: 1_000, getConnections: 64, writeInFlight: 32, listPods: 10_000, listRepeats: 10, watchers: 1_000, watchWritesPerSec: 500, watchDurationMs: 10_000, watchClient: 'native', storedPods: 50_000, ssaDeployments: 16, rbacObjects: 10_000, startupRestarts: 5, settleMs: 2_000, raft: true, cborServer: true, clusterScenarios: true, clusterWarmupMs: 2_000, jitWarmupMs: 15_000, clusterWriteInFlight: [32, 256], clusterReadPods: 1_000, clusterListConnections: 4, failoverRounds: 7 };
    case 'quick':
      return { mode, durationMs: 3_000, rounds: 2, warmupMs: 500, getConnections: 64, writeInFlight: 32, listPods: 10_000, listRepeats: 10, watchers: 1_000, watchWritesPerSec: 500, watchDurationMs: 3_000, watchClient: 'native', storedPods: 0, ssaDeployments: 16, rbacObjects: 10_000, startupRestarts: 3, settleMs: 2_000, raft: false, cborServer: false, clusterScenarios: true, clusterWarmupMs: 1_000, jitWarmupMs: 5_000, clusterWriteInFlight: [32, 256], clusterReadPods: 1_000, clusterListConnections: 4, failoverRounds: 3 };
    case 'tiny':
      return { mode, durationMs: 300, rounds: 1, warmupMs: 100, getConnections: 8, writeInFlight: 4, listPods: 100, listRepeats: 2, watchers: 10, watchWritesPerSec: 50, watchDurationMs: 300, watchClient: 'native', storedPods: 0, ssaDeployments: 2, rbacObjects: 40, startupRestarts: 1, settleMs: 200, raft: false, cborServer: false, clusterScenarios: false, clusterWarmupMs: 100, jitWarmupMs: 0, clusterWriteInFlight: [4, 8], clusterReadPods: 50, clusterListConnections: 2, failoverRounds: 1 };
  }
}
