// raft/sim/run-seed.ts owns how a seed number becomes one simulation run: the cluster size,
// protocol options and fault budget are all drawn from the seed, so RAFT_SIM_SEED=<n> replays
// exactly the run that failed.

import { type SimObserver, Simulation, type SimApplication, type SimOptions } from './cluster.js';
import { Xoshiro128 } from './prng.js';

export interface SeedRunOptions {
  faultTicks?: number;
  livenessTicks?: number;
  trace?: boolean;
  appFactory?: () => SimApplication;
  observer?: SimObserver;
  proposeRate?: number;
  unsafeSkipSync?: boolean;
  unsafeGrantStaleVotes?: boolean;
}

export function simOptionsForSeed(seed: number, o: SeedRunOptions = {}): SimOptions {
  // A separate stream for the run's shape, so the shape does not shift the fault stream.
  const shape = new Xoshiro128(seed ^ 0x5eed5eed);
  return {
    seed,
    nodes: shape.chance(0.5) ? 3 : 5,
    preVote: shape.chance(0.5),
    checkQuorum: shape.chance(0.5),
    membershipChanges: shape.chance(0.7),
    faultRate: shape.pick([0.03, 0.06, 0.1]),
    maxSizePerMsg: shape.pick([40, 256, 4096]),
    faultTicks: o.faultTicks ?? 300,
    livenessTicks: o.livenessTicks ?? 400,
    proposeRate: o.proposeRate ?? 0.5,
    appFactory: o.appFactory,
    observer: o.observer,
    trace: o.trace ?? false,
    unsafeSkipSync: o.unsafeSkipSync ?? false,
    unsafeGrantStaleVotes: o.unsafeGrantStaleVotes ?? false,
  };
}

export function runSeed(seed: number, o: SeedRunOptions = {}): Simulation {
  const sim = new Simulation(simOptionsForSeed(seed, o));
  sim.run();
  return sim;
}
