// bench/context owns what every scenario shares during one run: the plan, the server under
// test (replaced on restart), the baselines, the load generators, the admin client for set-up
// requests, the rows reported so far and raw figures for the JSON file. Scenarios get it and
// add rows; bench/run creates and tears it down. Imports: internal/testserver (the test HTTPS
// client), load/*, report/rows, support/*, targets/*.

import { ApiClient } from '../internal/testserver/api-client.js';
import type { GeneratorProcess } from './load/generator.js';
import type { EtcdJob, HttpJob, HttpLoadResult, TlsMaterial } from './load/protocol.js';
import type { BenchPlan } from './plan.js';
import type { Row } from './report/rows.js';
import { mergeConcurrent, mergeSequential, weighted } from './load/merge.js';
import { cpuMeter, machineMeter } from './support/proc-stats.js';
import type { Progress } from './support/progress.js';
import type { CeilingProcess } from './targets/ceiling-process.js';
import type { ClusterdProcess } from './targets/clusterd-process.js';
import type { EtcdProcess } from './targets/etcd-process.js';
import { podManifest, podTemplate, type PodOptions } from './scenarios/fixtures.js';

/** Statuses of a successful create: the spec says 200 (§4.4 item 5), upstream answers 201. */
export const CREATED = [200, 201];

/** A load phase's result with the CPU the processes involved used meanwhile (in cores). */
export interface Measured {
  result: HttpLoadResult;
  /** The process under load (server, ceiling or etcd). */
  targetCpu: number | undefined;
  /** The busiest single generator process: near 1 means the generator limited the figure. */
  maxGeneratorCpu: number;
  /** Everything else on the machine (other users' processes included). */
  otherCpu: number | undefined;
  /** Each generator's own result when several ran at once (measure with split, measureSpread). */
  parts?: HttpLoadResult[];
}

/** A generator at or above this share of a core is taken as the bottleneck of its phase. */
export const SATURATED_GENERATOR = 0.9;

/** The round number a phase is called with for its unmeasured JIT warm-up (BenchContext.warmUp). */
export const WARMUP_ROUND = -1;

/** A phase's label suffix: its round, or that it is the warm-up. */
export function roundLabel(round: number): string {
  return round === WARMUP_ROUND ? 'JIT warm-up (not measured)' : `round ${round + 1}`;
}

export class BenchContext {
  readonly rows: Row[] = [];
  readonly raw: Record<string, unknown> = {};
  /** Pods the scenarios stored on the main server; the count when a list cannot tell it. */
  storedPods = 0;
  /** Bytes of one bench pod as the server returns it (JSON), once known. */
  podBytes = 0;
  /** Padding that brings a bench pod to the target size as served (see calibratePodSize). */
  podPadding = 0;
  /** RSS of the idle server after start with nothing stored, once measured. */
  idleRssBytes: number | undefined;
  admin: ApiClient;
  /** The busiest generator process of every measured phase, for the generator check row. */
  readonly generatorPeaks: { label: string; cpu: number }[] = [];
  /** What scenarios started and have not stopped yet (see track). */
  readonly stoppers = new Set<() => Promise<unknown>>();

  constructor(
    readonly plan: BenchPlan,
    readonly progress: Progress,
    public server: ClusterdProcess,
    readonly ceiling: CeilingProcess,
    readonly etcd: EtcdProcess | undefined,
    /** Runs closed-loop jobs and the watch writer. */
    readonly gen: GeneratorProcess,
    /**
     * Hold the watchers of the watch scenario, split between them (one process decrypting and
     * parsing a gigabyte a second of fan-out would be the bottleneck, not the server); the first
     * is also the second generator of split reads.
     */
    readonly watchGens: readonly GeneratorProcess[],
    readonly scratchDir: string,
  ) {
    this.admin = this.newAdminClient();
  }

  get tls(): TlsMaterial {
    return this.server.adminTls();
  }

  private newAdminClient(): ApiClient {
    const t = this.server.adminTls();
    return new ApiClient(this.server.url, { caPem: t.ca, certPem: t.cert, keyPem: t.key });
  }

  /** Puts `server` in the place of the server under test (the caller stopped the old one). */
  replaceServer(server: ClusterdProcess): void {
    this.admin.close();
    this.server = server;
    this.admin = this.newAdminClient();
  }

  /** Restarts the server (same data directory and port); returns spawn-to-ready ms. */
  async restartServer(): Promise<number> {
    this.admin.close();
    const { server, readyMs } = await this.server.restart();
    this.server = server;
    this.admin = this.newAdminClient();
    return readyMs;
  }

  /**
   * Waits (at most `maxMs`) until the server is idle — below 15% of a core over half a
   * second (the plan's settle time when shorter) — so the backlog of one scenario (a saturated watch fan-out) does not spill into
   * the next one's figures.
   */
  async quiesce(maxMs = 20_000): Promise<void> {
    const deadline = performance.now() + maxMs;
    while (performance.now() < deadline) {
      const meter = cpuMeter(this.server.pid);
      await new Promise((r) => setTimeout(r, Math.min(500, this.plan.settleMs)));
      const used = meter.stop();
      if (used === undefined || used < 0.15) return;
    }
    this.progress.step(`the server is still busy after ${maxMs / 1000} s; going on`);
  }

  /** A row saying whether any load generator process was what limited a figure. */
  addGeneratorCheck(): void {
    if (this.generatorPeaks.length === 0) return;
    const busiest = this.generatorPeaks.reduce((a, b) => (b.cpu > a.cpu ? b : a));
    const saturated = this.generatorPeaks.filter((p) => p.cpu >= SATURATED_GENERATOR).map((p) => p.label);
    this.add({
      scenario: 'load generator check',
      figure: 'busiest generator process',
      unit: '% of a core',
      value: busiest.cpu * 100,
      target: `< ${SATURATED_GENERATOR * 100}% in every phase`,
      holds: saturated.length === 0,
      note: saturated.length
        ? `generator-bound phases (their figure is a lower bound for that system): ${saturated.join('; ')}`
        : `busiest in "${busiest.label}"; no phase was limited by its generator`,
    });
  }

  add(row: Row): void {
    this.rows.push(row);
  }

  /**
   * Runs a load job, measuring the CPU of process `targetPid` and of the machine meanwhile.
   * `split` runs it from both generator processes at once, half the connections each (for
   * reads fast enough that one generator process could be what limits them; the job must not
   * depend on request numbers).
   */
  async measure(label: string, job: HttpJob | EtcdJob, targetPid: number, options: { split?: boolean } = {}): Promise<Measured> {
    const what = job.requests !== undefined ? `${job.requests} requests` : `${(job.durationMs ?? 0) / 1000} s`;
    const conns = job.kind === 'etcd' ? `${job.inFlight} in flight` : job.streamsPerConnection !== undefined ? `${job.connections} HTTP/2 streams, ${job.streamsPerConnection} per connection` : `${job.connections} connections`;
    const split = options.split === true && job.kind === 'http' && job.connections >= 2;
    this.progress.step(`${label}: ${what}, ${conns}${split ? ' from two generator processes' : ''}`);
    if (split && job.kind === 'http') {
      const half = Math.floor(job.connections / 2);
      return this.runMeasured(label, [[this.gen, { ...job, connections: half }], [this.watchGens[0]!, { ...job, connections: job.connections - half }]], [targetPid]);
    }
    return this.runMeasured(label, [[this.gen, job]], [targetPid]);
  }

  /** Every generator process: the main one, then the watch generators. */
  get generators(): GeneratorProcess[] {
    return [this.gen, ...this.watchGens];
  }

  /**
   * Runs several jobs at once, job i from generator process i (at most one job per process;
   * for load spread over the replicas of a cluster), measuring the CPU of `targetPids`
   * together (a cluster's processes: "target" CPU is then their sum).
   */
  async measureSpread(label: string, jobs: (HttpJob | EtcdJob)[], targetPids: number[]): Promise<Measured> {
    const gens = this.generators;
    if (jobs.length > gens.length) throw new Error(`${jobs.length} jobs but ${gens.length} generator processes`);
    const first = jobs[0]!;
    const what = first.requests !== undefined ? `${jobs.reduce((a, j) => a + (j.requests ?? 0), 0)} requests` : `${(first.durationMs ?? 0) / 1000} s`;
    const conns = jobs.map((j) => (j.kind === 'http' ? j.connections : j.inFlight)).join('+');
    this.progress.step(`${label}: ${what}, ${conns} in flight from ${jobs.length} generator processes`);
    return this.runMeasured(label, jobs.map((j, i) => [gens[i]!, j]), targetPids);
  }

  private async runMeasured(label: string, runs: [GeneratorProcess, HttpJob | EtcdJob][], targetPids: number[]): Promise<Measured> {
    const targets = targetPids.map((pid) => cpuMeter(pid));
    const machine = machineMeter();
    const results: HttpLoadResult[] = await Promise.all(runs.map(([g, job]) => g.run(job)));
    const targetShares = targets.map((t) => t.stop());
    const targetCpu = targetShares.some((x) => x === undefined) ? undefined : targetShares.reduce<number>((a, x) => a + x!, 0);
    const machineCpu = machine.stop();
    const result = mergeConcurrent(results);
    const measured: Measured = {
      result,
      targetCpu,
      maxGeneratorCpu: Math.max(...results.map((r) => r.generatorCpu)),
      otherCpu: machineCpu === undefined || targetCpu === undefined ? undefined : Math.max(0, machineCpu - targetCpu - result.generatorCpu),
      ...(results.length > 1 ? { parts: results } : {}),
    };
    this.generatorPeaks.push({ label, cpu: measured.maxGeneratorCpu });
    const errors = Object.entries(result.errors).map(([k, v]) => `${k}×${v}`).join(', ');
    this.progress.step(`  ${Math.round(result.okPerSecond)}/s ok, p50 ${result.latency.p50Ms} ms, p99 ${result.latency.p99Ms} ms; CPU: target ${pct(targetCpu)}, generators ${pct(result.generatorCpu)}, others ${pct(measured.otherCpu)}${errors ? `; errors ${errors} (${result.firstError})` : ''}`);
    const { histogram: _histogram, ...shown } = result;
    this.raw[label] = [...((this.raw[label] as unknown[]) ?? []), { ...shown, targetCpu, otherCpu: measured.otherCpu }];
    return measured;
  }

  /**
   * Registers a process group a scenario started (a cluster), so that an interrupted run stops
   * it too; returns the function that unregisters it once the scenario stopped it itself.
   */
  track(stop: () => Promise<unknown>): () => void {
    this.stoppers.add(stop);
    return () => void this.stoppers.delete(stop);
  }

  /**
   * Runs the phases in turn, `rounds` times over (a, b, a, b, …), and merges each phase's
   * rounds: compared systems then see the same background load from other processes on
   * average, not whatever happened to run during one long phase.
   */
  async alternate(rounds: number, phases: ((round: number) => Promise<Measured>)[]): Promise<Measured[]> {
    const runs: Measured[][] = phases.map(() => []);
    for (let r = 0; r < rounds; r++) for (let p = 0; p < phases.length; p++) runs[p]!.push(await phases[p]!(r));
    return runs.map(mergeRounds);
  }

  /**
   * Runs each phase once with round WARMUP_ROUND, in order, when the plan has a JIT warm-up
   * (BenchPlan.jitWarmupMs): a phase called so runs its load for that long with no warm-up
   * window of its own (warmUpTiming) and its result is not a row. Returns the results.
   */
  async warmUp(phases: ((round: number) => Promise<Measured>)[]): Promise<Measured[]> {
    const out: Measured[] = [];
    if (this.plan.jitWarmupMs > 0) for (const phase of phases) out.push(await phase(WARMUP_ROUND));
    return out;
  }

  /** The timing of a closed-loop job in `round`: the measured rounds' `timed`, or the warm-up's. */
  timing<T extends { warmupMs: number; durationMs: number }>(round: number, timed: T): T {
    return round === WARMUP_ROUND ? { ...timed, warmupMs: 0, durationMs: this.plan.jitWarmupMs } : timed;
  }

  /** An HTTP job against the server under test with the admin's credentials. */
  serverJob(partial: Omit<HttpJob, 'kind' | 'baseUrl' | 'tls'>): HttpJob {
    return { kind: 'http', baseUrl: this.server.url, tls: this.tls, ...partial };
  }

  async ensureNamespace(name: string): Promise<void> {
    const r = await this.admin.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    if (!CREATED.includes(r.status) && r.status !== 409) throw new Error(`creating namespace ${name}: ${r.status} ${r.text()}`);
  }

  /** A bench pod body (JSON template), padded to the calibrated size. */
  pod(o: Omit<PodOptions, 'padding'>): string {
    return podTemplate({ ...o, padding: this.podPadding });
  }

  /**
   * Finds the padding that makes a bench pod `targetBytes` long as the server serves it
   * (defaults and managedFields included), by creating, reading and deleting probe pods.
   */
  async calibratePodSize(namespace: string, targetBytes: number): Promise<void> {
    await this.ensureNamespace(namespace);
    let padding = 0;
    for (let round = 0; round < 3; round++) {
      const name = `calibrate-${round}`;
      const created = await this.admin.post(`/api/v1/namespaces/${namespace}/pods`, podManifest({ namespace, name, padding }));
      if (!CREATED.includes(created.status)) throw new Error(`calibration pod: ${created.status} ${created.text().slice(0, 300)}`);
      const served = (await this.admin.get(`/api/v1/namespaces/${namespace}/pods/${name}`, { accept: 'application/json' })).body.length;
      await this.admin.delete(`/api/v1/namespaces/${namespace}/pods/${name}`);
      // The size of the last pod served, so rows that need it hold under --only too.
      this.podBytes = served;
      const missing = targetBytes - served;
      if (Math.abs(missing) < 16 || (padding === 0 && missing < 0)) break;
      // The padding annotation's key and managedFields entry cost bytes of their own.
      padding = Math.max(1, padding + missing - (padding === 0 ? 48 : 0));
    }
    this.podPadding = padding;
  }

  /** Creates `count` bench pods named `<prefix>{n}` in `namespace` as fast as the server takes them. */
  async fillPods(namespace: string, prefix: string, count: number, extra: { labels?: Record<string, string> } = {}): Promise<void> {
    if (count <= 0) return;
    await this.ensureNamespace(namespace);
    const body = this.pod({ namespace, name: `${prefix}{n}`, ...extra });
    const { result } = await this.measure(`fill ${namespace}`, this.serverJob({ connections: 64, warmupMs: 0, requests: count, request: { method: 'POST', path: `/api/v1/namespaces/${namespace}/pods`, body: { template: body } }, okStatus: CREATED }), this.server.pid);
    this.storedPods += result.ok;
    if (result.ok !== count) throw new Error(`filling ${namespace}: ${result.ok} of ${count} created (${result.firstError})`);
  }

  /** The resourceVersion of a collection now (a one-item list), to watch from. */
  async listResourceVersion(path: string): Promise<string> {
    const r = await this.admin.get(`${path}${path.includes('?') ? '&' : '?'}limit=1`);
    if (r.status !== 200) throw new Error(`list ${path}: ${r.status} ${r.text()}`);
    return r.json<{ metadata: { resourceVersion: string } }>().metadata.resourceVersion;
  }
}

/** Percent of one core, for notes. */
export function pct(fraction: number | undefined): string {
  return fraction === undefined ? '?' : `${Math.round(fraction * 100)}%`;
}

function mergeRounds(rounds: Measured[]): Measured {
  if (rounds.length === 1) return rounds[0]!;
  const w = (f: (m: Measured) => number | undefined) => weighted(rounds.map((m) => [f(m), m.result.elapsedMs]));
  return {
    result: mergeSequential(rounds.map((m) => m.result)),
    targetCpu: w((m) => m.targetCpu),
    maxGeneratorCpu: Math.max(...rounds.map((m) => m.maxGeneratorCpu)),
    otherCpu: w((m) => m.otherCpu),
  };
}

/** The CPU part of a note: who used how much of the machine during a measurement. */
export function cpuNote(name: string, m: Measured): string {
  const saturated = m.maxGeneratorCpu >= SATURATED_GENERATOR ? ' (a generator process was saturated: this figure is a lower bound)' : '';
  return `${name} CPU ${pct(m.targetCpu)}, generators ${pct(m.result.generatorCpu)}${saturated}, other processes ${pct(m.otherCpu)}`;
}
