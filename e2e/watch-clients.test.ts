// The bench's two watch clients (bench/load/watch-load's node:http2 WatchFleet and the native
// h2watch behind NativeWatchFleet) against one scripted HTTP/2 server over real TLS with a
// client certificate: both must count, parse and time the same stream the same way, including
// events split across DATA frames, events without a send time, warm-up, acknowledgements that
// arrive before and after their events, a watch answered 403 and a stream the server ends.
// Latencies are checked against offsets of seconds written into the events, so the bounds
// are wide and the test does not depend on the machine's speed.
import { createSecureServer, type Http2SecureServer, type ServerHttp2Stream } from 'node:http2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NativeWatchFleet } from '../bench/load/native-watch.js';
import { wallClockMs, type TlsMaterial, type WatchJob } from '../bench/load/protocol.js';
import { WatchFleet } from '../bench/load/watch-load.js';
import { createCertificateAuthority, issueCertificate } from '../internal/pki/certificates.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function event(type: string, rv: number, sentAt?: number): string {
  const annotations = sentAt === undefined ? {} : { 'bench/sent-at': String(sentAt) };
  return `${JSON.stringify({ type, object: { kind: 'Pod', apiVersion: 'v1', metadata: { name: `p-${rv}`, resourceVersion: String(rv), annotations }, spec: { nodeName: 'n' } } })}\n`;
}

describe('bench watch clients', () => {
  let server: Http2SecureServer;
  let tls: TlsMaterial;
  let port = 0;
  const streams = new Map<string, ServerHttp2Stream>();

  beforeAll(async () => {
    const ca = await createCertificateAuthority('watch-clients-test-ca');
    const serving = await issueCertificate(ca, { commonName: 'server', ipAddresses: ['127.0.0.1'], usage: 'server' });
    const client = await issueCertificate(ca, { commonName: 'bench', usage: 'client' });
    tls = { ca: ca.certPem, cert: client.certPem, key: client.keyPem };
    server = createSecureServer({ cert: serving.certPem, key: serving.keyPem, ca: ca.certPem, requestCert: true, rejectUnauthorized: true });
    server.on('stream', (stream, headers) => {
      const path = String(headers[':path']);
      if (path.endsWith('/3')) {
        stream.respond({ ':status': 403 });
        stream.end('{"kind":"Status","code":403}');
        return;
      }
      stream.respond({ ':status': 200, 'content-type': 'application/json' });
      streams.set(path, stream);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
  });

  afterAll(async () => {
    for (const s of streams.values()) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it.each(['node', 'native'] as const)('the %s client counts, parses and times events as the scenario expects', async (client) => {
    streams.clear();
    const job: WatchJob = { kind: 'watch', baseUrl: `https://127.0.0.1:${port}`, tls, watchers: 4, path: '/watch/{w}', firstIndex: 1, protocol: 'http2', streamsPerSession: 3, client };
    const fleet = client === 'native' ? new NativeWatchFleet(job) : new WatchFleet(job);
    const opened = await fleet.open();
    expect(opened).toMatchObject({ established: 3, failed: 1 });
    expect(opened.firstError).toContain('/watch/3 answered 403');
    expect([...streams.keys()].sort()).toEqual(['/watch/1', '/watch/2', '/watch/4']);

    const t0 = wallClockMs();
    fleet.warmUntil(t0 - 10_000);
    fleet.acks([[101, t0 - 2_000]]); // before its event: latency counted at receipt
    const a = event('ADDED', 101, t0 - 1_000);
    const cut1 = a.indexOf('"resourceVersion":"') + 22; // inside the resourceVersion value
    const cut2 = a.indexOf('bench/sent-at') + 5; // inside the annotation's key
    for (const s of streams.values()) {
      // Three DATA frames for one event: the middle one carries no newline at all.
      s.write(a.slice(0, cut1));
      s.write(a.slice(cut1, cut2));
      s.write(a.slice(cut2) + event('MODIFIED', 102, t0 - 1_500) + '{"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"102"}}}\n');
      s.write(event('ADDED', 103) + event('ERROR', 0) + event('ADDED', 104, t0 - 20_000));
    }
    await sleep(300);
    fleet.acks([[102, t0 - 3_000]]); // after its event arrived: counted when the ack comes
    streams.get('/watch/2')!.end();
    await sleep(100);

    const r = await fleet.finish(9, 10_000);
    expect(r.established).toBe(3);
    expect(r.failedToEstablish).toBe(1);
    expect(r.events).toEqual({ ADDED: 9, MODIFIED: 3, BOOKMARK: 3, ERROR: 3 });
    // 101, 102 and 104 carry a send time (104 is before the warm-up: delivered, not measured).
    expect(r.delivered).toBe(9);
    // The stream ended above and the 403's (its body ends it): both ended before `finish`.
    expect(r.closedEarly).toBe(2);
    expect(r.fromSend.count).toBe(6);
    expect(r.fromSend.p50Ms).toBeGreaterThanOrEqual(1_000);
    expect(r.fromSend.p50Ms).toBeLessThan(1_300);
    expect(r.fromSend.maxMs).toBeGreaterThanOrEqual(1_500);
    expect(r.fromSend.maxMs).toBeLessThan(2_000);
    expect(r.fromAck.count).toBe(6);
    expect(r.fromAck.p50Ms).toBeGreaterThanOrEqual(2_000);
    expect(r.fromAck.p50Ms).toBeLessThan(2_500);
    expect(r.fromAck.maxMs).toBeGreaterThanOrEqual(3_000);
    expect(r.fromAck.maxMs).toBeLessThan(3_500);
    // The histograms merge exactly with other processes' (same buckets as LatencyRecorder).
    const buckets = Object.values(r.fromAckHistogram.buckets).reduce((n, c) => n + c, 0);
    expect(buckets).toBe(6);
  });

  it('the native client explains its flags and refuses a bad command line', async () => {
    const { spawnSync } = await import('node:child_process');
    const { nativeWatchBinary } = await import('../bench/load/native-watch.js');
    const help = spawnSync(nativeWatchBinary(), ['--help'], { encoding: 'utf8' });
    expect(help.status).toBe(0);
    for (const flag of ['--host', '--port', '--ca', '--cert', '--key', '--path', '--watchers', '--first-index', '--streams-per-session']) expect(help.stdout).toContain(flag);
    const bad = spawnSync(nativeWatchBinary(), ['--port', '1'], { encoding: 'utf8' });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('usage');
  });
});
