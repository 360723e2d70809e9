// bench/load/etcd-load owns the closed-loop etcd load generator: the `etcd3` client (gRPC over
// one HTTP/2 TLS connection, as etcd's own clients talk to it) with `inFlight` puts or
// deletes outstanding. Runs inside a generator process. Imports: load/protocol,
// load/request-template, support/latency.

import { Etcd3 } from 'etcd3';
import { LatencyRecorder } from '../support/latency.js';
import type { EtcdJob, HttpLoadResult } from './protocol.js';
import { compileKey } from './request-template.js';

export async function runEtcdLoad(job: EtcdJob): Promise<HttpLoadResult> {
  const client = new Etcd3({
    hosts: job.endpoint,
    credentials: {
      rootCertificate: Buffer.from(job.tls.ca),
      ...(job.tls.cert ? { certChain: Buffer.from(job.tls.cert) } : {}),
      ...(job.tls.key ? { privateKey: Buffer.from(job.tls.key) } : {}),
    },
  });
  const key = compileKey(job.key, job.modulo ?? 1);
  const value = job.value ?? '';
  const latency = new LatencyRecorder();
  const errors: Record<string, number> = {};
  let firstError: string | undefined;
  let next = job.startIndex ?? 0;
  const last = job.requests === undefined ? Infinity : next + job.requests;
  let measured = 0;
  let ok = 0;
  try {
    // The first call opens the channel; keep connection set-up out of the measurement.
    await client.get('bench/none').string();
    const t0 = performance.now();
    const fixedCount = job.requests !== undefined;
    const measureFrom = fixedCount ? t0 : t0 + job.warmupMs;
    const stopAt = fixedCount ? Infinity : measureFrom + (job.durationMs ?? 10_000);
    const byCompletion = !fixedCount && job.countBy === 'completion';
    let cpuAtStart = fixedCount ? process.cpuUsage() : undefined;
    let windowStart = fixedCount ? t0 : NaN;
    // Counting completions, the window opens at measureFrom even when no request starts then
    // (every connection still waiting on one sent during the warm-up).
    const opener = byCompletion
      ? setTimeout(() => {
          if (cpuAtStart !== undefined) return;
          cpuAtStart = process.cpuUsage();
          windowStart = performance.now();
        }, Math.max(0, measureFrom - performance.now()))
      : undefined;
    const loop = async () => {
      for (;;) {
        const now = performance.now();
        if (now >= stopAt || next >= last) return;
        if (cpuAtStart === undefined && now >= measureFrom) {
          cpuAtStart = process.cpuUsage();
          windowStart = now;
        }
        const k = key(next++);
        const started = performance.now();
        let failed: string | undefined;
        try {
          if (job.op === 'put') await client.put(k).value(value).exec();
          else await client.delete().key(k).exec();
        } catch (e) {
          failed = (e as Error).name || 'error';
          firstError ??= (e as Error).message;
        }
        const ended = performance.now();
        if (byCompletion ? ended < measureFrom || ended > stopAt : started < measureFrom) continue;
        measured++;
        latency.record(ended - started);
        if (failed === undefined) ok++;
        else errors[failed] = (errors[failed] ?? 0) + 1;
      }
    };
    await Promise.all(Array.from({ length: job.inFlight }, loop));
    clearTimeout(opener);
    const end = performance.now();
    const cpu = process.cpuUsage(cpuAtStart);
    // The generator's CPU is over the whole measured span (the drain included), whatever is counted.
    const spanMs = Number.isNaN(windowStart) ? 0 : end - windowStart;
    const elapsedMs = byCompletion ? stopAt - measureFrom : spanMs;
    return {
      requests: measured,
      ok,
      errors,
      ...(firstError ? { firstError } : {}),
      elapsedMs,
      okPerSecond: elapsedMs > 0 ? (ok * 1000) / elapsedMs : 0,
      latency: latency.summary(),
      histogram: latency.toJSON(),
      bytesIn: 0,
      nextIndex: next,
      generatorCpu: spanMs > 0 ? (cpu.user + cpu.system) / 1000 / spanMs : 0,
    };
  } finally {
    client.close();
  }
}
