// bench/scenarios/cluster-failover owns the rows "3 replicas: leader failover": kill -9 of the
// leader of a three-replica clusterd (default timeouts: 100 ms heartbeat, 1 s election
// timeout) to the first write acknowledged by a surviving replica, repeated (the killed replica
// is restarted and the cluster is ready again before the next kill), next to a three-member
// etcd (the same defaults) measured the same way in alternating turns. From the moment of the
// kill the bench sends a small write every PROBE_INTERVAL_MS, alternating between the
// survivors, without waiting for earlier ones (a write the dead leader took may hang until it
// times out); the figure is the time from the kill to the first success. clusterd gets
// ConfigMap creates, etcd puts through its v3 JSON gateway, both over keep-alive HTTPS opened
// before the kill. These are control requests from the bench process, not load.
// Target: median ≤ 1.5 s. Imports: context, report/rows, scenarios/cluster-setup,
// support/https-call, targets/*.

import { Agent } from 'node:https';
import type { BenchContext } from '../context.js';
import { ratioOf } from '../report/rows.js';
import { httpsCall } from '../support/https-call.js';
import type { ClusterdCluster } from '../targets/clusterd-cluster.js';
import type { EtcdCluster } from '../targets/etcd-process.js';
import { adminClient, ensureNamespace, median, withClusters } from './cluster-setup.js';

const NAMESPACE = 'bench-failover';
// Each probe that waits holds a connection, so the next opens another (a TLS handshake on a
// survivor busy electing): every 20 ms keeps that cost small at a resolution of 20 ms.
const PROBE_INTERVAL_MS = 20;
const PROBE_TIMEOUT_MS = 10_000;
const GIVE_UP_MS = 30_000;
const TARGET_MS = 1_500;

/** One system as a failover round sees it. */
interface FailoverTarget {
  name: string;
  /** Client TLS for the writes. */
  tls: { ca: string; cert?: string; key?: string };
  ready(): Promise<void>;
  leader(): Promise<string>;
  running(): string[];
  kill(member: string): Promise<void>;
  restart(member: string): Promise<void>;
  /** One write on `member`: true when acknowledged, else what went wrong (a status or error code, and the start of the answer). */
  write(agent: Agent, member: string, key: string): Promise<true | Failure>;
}

interface Failure {
  code: string;
  detail?: string;
}

interface Round {
  killed: string;
  ms: number;
  by: string;
  probes: number;
  failures: Record<string, number>;
  /** The first answer seen for each failure code. */
  details: Record<string, string>;
  newLeader: string;
  restartMs: number;
}

export async function clusterFailoverScenario(ctx: BenchContext): Promise<void> {
  const rounds = ctx.plan.failoverRounds;
  await withClusters(ctx, 'cluster-failover', { etcd: true }, async (clusterd, etcd) => {
    const client = adminClient(clusterd, await clusterd.leader());
    try {
      await ensureNamespace(client, NAMESPACE);
    } finally {
      client.close();
    }
    const targets = [clusterdTarget(clusterd), ...(etcd ? [etcdTarget(etcd)] : [])];
    const results = targets.map((): Round[] => []);
    for (let r = 0; r < rounds; r++) {
      for (const [i, t] of targets.entries()) {
        const round = await failoverRound(ctx, t, `r${r}`);
        ctx.progress.step(`cluster-failover: ${t.name}, kill ${r + 1}/${rounds}: killed leader ${round.killed}, first write acknowledged by ${round.by} after ${Math.round(round.ms)} ms (new leader ${round.newLeader}; ${round.probes} probes sent; killed one ready again in ${Math.round(round.restartMs)} ms)`);
        results[i]!.push(round);
      }
    }
    ctx.raw['cluster-failover'] = Object.fromEntries(targets.map((t, i) => [t.name, results[i]]));
    const [ours, theirs] = results;
    const figures = (xs: Round[] | undefined) => (xs ? { median: median(xs.map((x) => x.ms)), max: xs.some((x) => !Number.isFinite(x.ms)) ? null : Math.max(...xs.map((x) => x.ms)) } : undefined);
    const o = figures(ours)!;
    const e = figures(theirs);
    const list = (xs: Round[]) => xs.map((x) => (Number.isFinite(x.ms) ? Math.round(x.ms) : 'none')).join(', ');
    const failed = (xs: Round[]) => {
      const all: Record<string, number> = {};
      const details: Record<string, string> = {};
      for (const x of xs) for (const [k, v] of Object.entries(x.failures)) all[k] = (all[k] ?? 0) + v;
      for (const x of xs) for (const [k, v] of Object.entries(x.details)) details[k] ??= v;
      return Object.entries(all).map(([k, v]) => `${k}×${v}${details[k] ? ` (${details[k]})` : ''}`).join(', ') || 'none';
    };
    const scenario = `3 replicas: leader failover, kill -9 → first acknowledged write on a survivor (100 ms heartbeat, 1 s election timeout)`;
    const note = [
      `${rounds} kills each, the killed replica restarted (and every replica ready) before the next; a write every ${PROBE_INTERVAL_MS} ms alternating between the survivors from the kill on`,
      `clusterd (ms): ${list(ours!)}; failed probes before the first success: ${failed(ours!)}; the killed replica was ready again after a median ${Math.round(median(ours!.map((x) => x.restartMs)) ?? NaN)} ms`,
      theirs ? `etcd (ms): ${list(theirs)}; failed probes: ${failed(theirs)}` : 'etcd not installed',
    ].join('; ');
    const baseline = (v: number | null | undefined) => (e ? { baseline: { name: 'etcd ×3', value: v ?? null } } : {});
    ctx.add({ scenario, figure: `median of ${rounds}`, unit: 'ms', value: o.median, ...baseline(e?.median), ratio: ratioOf(o.median, e?.median), target: `≤ ${TARGET_MS} ms`, holds: o.median === null ? null : o.median <= TARGET_MS, note });
    ctx.add({ scenario, figure: `max of ${rounds}`, unit: 'ms', value: o.max, ...baseline(e?.max), ratio: ratioOf(o.max, e?.max), target: 'reported', holds: null });
  });
}

async function failoverRound(ctx: BenchContext, t: FailoverTarget, tag: string): Promise<Round> {
  await t.ready();
  // Let the last restart settle (heartbeats, catching up) so every kill starts from the same state.
  await new Promise((r) => setTimeout(r, 500));
  const leader = await t.leader();
  const survivors = t.running().filter((n) => n !== leader);
  const agent = new Agent({ ...t.tls, keepAlive: true, maxSockets: Infinity });
  try {
    // Open connections to the survivors (and prove they take writes) before the kill.
    for (const s of survivors) {
      const warm = await Promise.all(Array.from({ length: 4 }, (_, k) => t.write(agent, s, `${tag}-warm-${s}-${k}`)));
      const bad = warm.find((w) => w !== true);
      if (bad !== undefined) throw new Error(`${t.name}: a write on ${s} before the kill failed: ${bad.code} ${bad.detail ?? ''}`);
    }
    const killedAt = performance.now();
    await t.kill(leader);
    const first = await new Promise<{ ms: number; by: string; probes: number; failures: Record<string, number>; details: Record<string, string> }>((resolve) => {
      let sent = 0;
      let done = false;
      const failures: Record<string, number> = {};
      const details: Record<string, string> = {};
      const finish = (ms: number, by: string) => {
        if (done) return;
        done = true;
        clearInterval(timer);
        clearTimeout(giveUp);
        resolve({ ms, by, probes: sent, failures, details });
      };
      const fire = () => {
        const member = survivors[sent % survivors.length]!;
        const key = `${tag}-${sent++}`;
        t.write(agent, member, key).then(
          (r) => {
            if (r === true) return finish(performance.now() - killedAt, member);
            if (done) return;
            failures[r.code] = (failures[r.code] ?? 0) + 1;
            if (r.detail) details[r.code] ??= `on ${member}: ${r.detail}`;
          },
          () => undefined,
        );
      };
      const timer = setInterval(fire, PROBE_INTERVAL_MS);
      const giveUp = setTimeout(() => finish(NaN, 'nobody'), GIVE_UP_MS);
      fire();
    });
    const newLeader = await t.leader().catch(() => 'none');
    const restartStarted = performance.now();
    await t.restart(leader);
    return { killed: leader, ...first, newLeader, restartMs: performance.now() - restartStarted };
  } finally {
    agent.destroy();
  }
}

function clusterdTarget(c: ClusterdCluster): FailoverTarget {
  return {
    name: 'clusterd',
    tls: c.tls,
    ready: () => c.allReady(),
    leader: () => c.leader(),
    running: () => c.running(),
    kill: (m) => c.kill(m),
    restart: async (m) => void (await c.restart(m)),
    write: async (agent, m, key) => {
      const body = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `fo-${key}`, namespace: NAMESPACE }, data: { k: 'v' } });
      try {
        const r = await httpsCall(agent, `${c.url(m)}/api/v1/namespaces/${NAMESPACE}/configmaps`, { method: 'POST', body, timeoutMs: PROBE_TIMEOUT_MS });
        return r.status === 201 || r.status === 200 ? true : { code: String(r.status), detail: answer(r.body) };
      } catch (e) {
        return { code: errorCode(e) };
      }
    },
  };
}

function etcdTarget(e: EtcdCluster): FailoverTarget {
  return {
    name: 'etcd',
    tls: { ca: e.tls.ca, cert: e.tls.clientCert, key: e.tls.clientKey },
    ready: () => e.allHealthy(),
    leader: () => e.leader(),
    running: () => e.running(),
    kill: (m) => e.kill(m),
    restart: (m) => e.restart(m),
    write: async (agent, m, key) => {
      const body = JSON.stringify({ key: Buffer.from(`/bench/failover/${key}`).toString('base64'), value: Buffer.from('v').toString('base64') });
      try {
        const r = await httpsCall(agent, `${e.url(m)}/v3/kv/put`, { method: 'POST', body, timeoutMs: PROBE_TIMEOUT_MS });
        if (r.status !== 200) return { code: String(r.status), detail: answer(r.body) };
        // The gateway answers errors as JSON with an `error` field (not always with a non-200 status).
        return (JSON.parse(r.body.toString('utf8')) as { error?: string }).error === undefined ? true : { code: 'error', detail: answer(r.body) };
      } catch (err) {
        return { code: errorCode(err) };
      }
    },
  };
}

/** The message of a Status (or the start of any other body), for notes. */
function answer(body: Buffer): string {
  const text = body.toString('utf8');
  try {
    const j = JSON.parse(text) as { message?: string; error?: string };
    return (j.message ?? j.error ?? text).slice(0, 160);
  } catch {
    return text.slice(0, 160);
  }
}

function errorCode(e: unknown): string {
  const code = (e as NodeJS.ErrnoException).code;
  if (code) return code;
  return /timed out/.test(String((e as Error).message)) ? 'timeout' : 'error';
}
