// e2e/support/failover-scenario owns the failover-under-load run shared by
// e2e/cluster-failover.test.ts (a few faults) and e2e/cluster-chaos.test.ts (hundreds, behind
// `make test-chaos`): three replicas; load processes doing consistent reads and
// compare-and-set writes of ConfigMaps through every replica; retrying watchers on every
// replica; faults injected one after another (kill -9 of the leader and restart, a follower cut
// off from its peers; in chaos mode also followers killed, SIGTERM restarts, the leader cut
// off, processes frozen with SIGSTOP, the whole cluster killed at once); then everything is
// healed and the recorded history, the watchers' streams and the replicas' final states are
// judged by history-analysis. Test-only.

import { ClusterProcess, sleep } from './cluster-process.js';
import { finalLists, waitWatchersCaughtUp } from './final-state.js';
import { analyzeHistory, type HistoryAnalysis } from './history-analysis.js';
import { LoadClients } from './load-clients.js';
import { RetryingWatcher } from './retrying-watcher.js';

export type FaultKind =
  | 'kill-leader'
  | 'kill-follower'
  | 'term-restart'
  | 'isolate-follower'
  | 'isolate-leader'
  | 'pause'
  | 'kill-all'
  | 'isolate-and-kill-leader';

export interface FailoverOptions {
  mode: 'failover' | 'chaos';
  /** failover: leader kills; chaos: fault rounds (a round may inject two faults). */
  rounds: number;
  clients?: number;
  workersPerClient?: number;
  keys?: number;
  seed?: number;
  log: (line: string) => void;
}

export interface FailoverReport {
  faults: Partial<Record<FaultKind, number>>;
  faultsTotal: number;
  analysis: HistoryAnalysis;
  watchers: Array<{ id: string; events: number; resumes: number; relists: number; expired: number; streamsBy: Record<string, number> }>;
  problems: string[];
  elapsedMs: number;
  summary: string;
}

const NAMESPACE = 'failover';

export async function runFailoverScenario(o: FailoverOptions): Promise<FailoverReport> {
  const started = Date.now();
  const log = (line: string): void => o.log(`[${((Date.now() - started) / 1000).toFixed(1)}s] ${line}`);
  let seed = (o.seed ?? 20261125) >>> 0;
  const rand = (n: number): number => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return Math.floor((seed / 2 ** 32) * n);
  };
  const faults: Partial<Record<FaultKind, number>> = {};
  const count = (f: FaultKind): void => {
    faults[f] = (faults[f] ?? 0) + 1;
  };
  const problems: string[] = [];
  const cluster = await ClusterProcess.create({ log });
  let load: LoadClients | undefined;
  const watchers: RetryingWatcher[] = [];
  try {
    // The load processes load while the cluster starts; they begin once the namespace exists.
    const keys = Array.from({ length: o.keys ?? 8 }, (_, i) => `k${i}`);
    load = new LoadClients(
      Array.from({ length: o.clients ?? 3 }, (_, c) => ({
        clientId: c + 1,
        workers: o.workersPerClient ?? 3,
        replicas: Object.fromEntries(cluster.names.map((n) => [n, cluster.url(n)])),
        pkiDir: cluster.pkiDir,
        namespace: NAMESPACE,
        keys,
        seed: (o.seed ?? 1) * 100 + c + 1,
        requestTimeoutMs: 20_000,
        thinkMs: 0,
      })),
    );
    await cluster.startAll();
    await cluster.waitAllReady();
    const first = await cluster.waitForLeader();
    log(`cluster up, leader ${first}`);
    const ns = await cluster.http.request(cluster.url(first), 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } });
    if (ns.status !== 201 && ns.status !== 200) throw new Error(`creating namespace: ${ns.status} ${ns.body}`);

    const replicas = (): Array<[string, string]> => cluster.names.map((n) => [n, cluster.url(n)]);
    for (const [i, name] of [...cluster.names, cluster.names[0]!].entries()) {
      const w = new RetryingWatcher({ id: `w${i}@${name}`, replicas, preferred: name, creds: cluster.creds, path: `/api/v1/namespaces/${NAMESPACE}/configmaps` });
      await w.start();
      watchers.push(w);
    }

    load.begin();
    const acked = (): number => load!.acknowledged();
    for (let waited = 0; acked() < 20; waited += 100) {
      if (waited > 60_000) throw new Error(`no load got through in 60 s: ${load.errors.slice(0, 5).join('; ')} ${JSON.stringify(load.records.slice(-5))}`);
      await sleep(100);
    }
    log(`load running (${acked()} writes acknowledged)`);

    const restore = async (): Promise<void> => {
      cluster.network.healAll();
      for (const n of cluster.names) cluster.resume(n);
      await Promise.all(cluster.names.filter((n) => !cluster.isRunning(n)).map((n) => cluster.start(n)));
      await cluster.waitAllReady(90_000);
    };
    const followerOf = (leader: string): string => {
      const others = cluster.names.filter((n) => n !== leader);
      return others[rand(others.length)]!;
    };

    const inject = async (kind: FaultKind, round: number): Promise<void> => {
      const leader = await cluster.waitForLeader(60_000);
      const any = cluster.names[rand(cluster.names.length)]!;
      const target = kind === 'kill-leader' || kind === 'isolate-leader' ? leader : kind === 'kill-follower' || kind === 'isolate-follower' ? followerOf(leader) : any;
      log(`round ${round}: ${kind} ${kind === 'kill-all' || kind === 'isolate-and-kill-leader' ? '' : target} (leader ${leader}; ${acked()} acknowledged)`);
      if (kind === 'isolate-and-kill-leader') {
        count('isolate-follower');
        count('kill-leader');
      } else if (kind === 'kill-all') {
        for (let i = 0; i < cluster.names.length; i++) count('kill-all');
      } else count(kind);
      switch (kind) {
        case 'kill-leader':
        case 'kill-follower':
          await cluster.kill(target);
          await sleep(rand(1500));
          await cluster.start(target);
          break;
        case 'term-restart': {
          const code = await cluster.stop(target);
          if (code !== 0) problems.push(`round ${round}: SIGTERM of ${target} exited with ${String(code)}`);
          await cluster.start(target);
          break;
        }
        case 'isolate-follower':
        case 'isolate-leader':
          cluster.isolate(target);
          await sleep(1000 + rand(3000));
          cluster.heal(target);
          break;
        case 'pause':
          cluster.pause(target);
          await sleep(500 + rand(2500));
          cluster.resume(target);
          break;
        case 'kill-all':
          await Promise.all(cluster.names.map((n) => cluster.kill(n)));
          await sleep(rand(1000));
          await Promise.all(cluster.names.map((n) => cluster.start(n)));
          break;
        case 'isolate-and-kill-leader': {
          // A follower cut off while the leader dies: no quorum until the leader is back.
          const f = followerOf(leader);
          log(`round ${round}: (isolating ${f}, killing ${leader})`);
          cluster.isolate(f);
          await sleep(500 + rand(1000));
          await cluster.kill(leader);
          await sleep(500 + rand(1000));
          await cluster.start(leader);
          await sleep(rand(2000));
          cluster.heal(f);
          break;
        }
      }
      await cluster.waitAllReady(90_000);
    };

    if (o.mode === 'failover') {
      for (let round = 0; round < o.rounds; round++) {
        await sleep(2000);
        if (round === 1) {
          // A follower cut off for a while, alone.
          await inject('isolate-follower', round);
          await sleep(1000);
        }
        if (round === 3) {
          await inject('isolate-and-kill-leader', round);
          continue;
        }
        await inject('kill-leader', round);
      }
    } else {
      const menu: Array<[FaultKind, number]> = [
        ['kill-leader', 30],
        ['kill-follower', 15],
        ['term-restart', 15],
        ['isolate-follower', 15],
        ['isolate-leader', 12],
        ['pause', 10],
        ['kill-all', 3],
        ['isolate-and-kill-leader', 8],
      ];
      const total = menu.reduce((s, [, w]) => s + w, 0);
      for (let round = 0; round < o.rounds; round++) {
        let pick = rand(total);
        let kind: FaultKind = 'kill-leader';
        for (const [k, w] of menu) {
          if (pick < w) {
            kind = k;
            break;
          }
          pick -= w;
        }
        await sleep(300 + rand(1200));
        await inject(kind, round);
        if (round % 10 === 9) log(`${round + 1} rounds, ${Object.values(faults).reduce((s, n) => s + (n ?? 0), 0)} faults, ${acked()} writes acknowledged, ${load.records.length} operations`);
      }
    }

    await restore();
    log(`faults done; healed and ready (${acked()} acknowledged)`);
    await sleep(1500);
    await load.stop();
    log(`load stopped: ${load.records.length} operations`);
    problems.push(...load.errors.map((e) => `load: ${e}`));

    const finals = await finalLists(cluster, NAMESPACE);
    if (!(await waitWatchersCaughtUp(watchers, finals[0]!))) log('some watcher did not catch up with the final state in 60 s');
    await Promise.all(watchers.map((w) => w.stop()));
    log('watchers stopped; checking the history');

    const analysis = analyzeHistory(load.records, finals, watchers);
    problems.push(...analysis.problems);
    for (const e of cluster.unexpectedExits) problems.push(`replica ${e.name} exited unexpectedly (${String(e.code)}, ${String(e.signal)}):\n${e.tail}`);
    for (const l of cluster.fatalLines()) problems.push(`fatal: ${l}`);

    const faultsTotal = Object.values(faults).reduce((s, n) => s + (n ?? 0), 0);
    const c = analysis.counts;
    const w = watchers.map((x) => ({ id: x.id, events: x.events.length, resumes: x.resumes, relists: x.relists, expired: x.expired, streamsBy: Object.fromEntries(x.streamsBy) }));
    const summary = [
      `faults injected: ${faultsTotal} ${JSON.stringify(faults)}`,
      `operations: ${c.operations} (reads ${c.reads}, failed reads ${c.readsFailed}; writes ${c.writes})`,
      `writes acknowledged: ${c.acknowledged}; conflicts ${c.conflicts}; already-exists ${c.alreadyExists}; certainly failed ${c.failedCertainly}; create refused with 404 ${c.refused404}; unknown outcome ${c.unknown} (applied ${c.unknownApplied}, not applied ${c.unknownNotApplied})`,
      `writes lost: ${c.lost}`,
      `linearizability: ${analysis.linearizability} (${analysis.checkerSteps} checker steps)`,
      `watchers: ${w.map((x) => `${x.id} ${x.events} events, ${x.resumes} resumes ${JSON.stringify(x.streamsBy)}, ${x.relists} relists, ${x.expired} × 410`).join('; ')}`,
      `peer proxy: ${JSON.stringify(cluster.network.stats())}`,
      `non-acknowledged write outcomes: ${JSON.stringify(analysis.outcomes)}`,
      `problems: ${problems.length}`,
    ].join('\n');
    log(`\n${summary}`);
    return { faults, faultsTotal, analysis, watchers: w, problems, elapsedMs: Date.now() - started, summary };
  } catch (e) {
    o.log(`--- diagnosis ---\n${await cluster.diagnose().catch((d: unknown) => String(d))}`);
    for (const n of cluster.names) o.log(`--- ${n} log tail ---\n${cluster.logs(n).split('\n').slice(-25).join('\n')}`);
    throw e;
  } finally {
    load?.kill();
    await Promise.all(watchers.map((w) => w.stop().catch(() => undefined)));
    await cluster.destroy(process.env.CLUSTERD_E2E_KEEP === '1');
  }
}
