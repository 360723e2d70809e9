// bench/load/etcd-load owns the closed-loop etcd load generator: the `etcd3` client (gRPC over
// one HTTP/2 TLS connection, as etcd's own clients talk to it) with `inFlight` puts or
// deletes outstanding. Runs inside a generator process. Imports: load/protocol,
// load/request-template, support/latency.

import { Etcd3 } from 'etcd3';
import { LatencyRecorder } from '../support/latency.js';
import type { EtcdJob, HttpLoadResult } from './protocol.js';
import { MeasurementWindow } from './measurement-window.js';
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
    const measuring = new MeasurementWindow(job);
    const loop = async () => {
      for (;;) {
        const now = performance.now();
        if (next >= last || !measuring.beforeRequest(now)) return;
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
        if (!measuring.counts(started, ended)) continue;
        measured++;
        latency.record(ended - started);
        if (failed === undefined) ok++;
        else errors[failed] = (errors[failed] ?? 0) + 1;
      }
    };
    await Promise.all(Array.from({ length: job.inFlight }, loop));
    const { elapsedMs, generatorCpu } = measuring.close();
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
      generatorCpu,
    };
  } finally {
    client.close();
  }
}
