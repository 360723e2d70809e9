// SIGTERM to a real server process (what `docker stop` sends the image's PID 1): a request in
// flight when the signal arrives is answered, an open watch ends with a clean close (the stream
// ends normally, every line a whole event), the process exits 0, and its data directory opens
// again with the write that was in flight.
import { connect, constants as h2 } from 'node:http2';
import { request as httpsRequest } from 'node:https';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startServerProcess } from './support/server-process.js';
import { sleep } from './support/cluster-process.js';

describe('SIGTERM', () => {
  it('finishes the request in flight, ends the watch cleanly, exits 0, and the data directory reopens', async () => {
    const server = await startServerProcess();
    const pki = join(server.dataDir, 'pki');
    const tls = { ca: readFileSync(join(pki, 'ca.crt')), cert: readFileSync(join(pki, 'admin.crt')), key: readFileSync(join(pki, 'admin.key')) };
    const exited = new Promise<number | null>((resolve) => server.child.once('exit', (code) => resolve(code)));

    // An open watch over HTTP/2, as kubectl's.
    const session = connect(server.url, tls);
    const watch = session.request({ ':path': '/api/v1/namespaces/default/configmaps?watch=1', accept: 'application/json' });
    let watchBody = '';
    watch.setEncoding('utf8').on('data', (d: string) => (watchBody += d));
    const watchStatus = new Promise<number>((resolve) => watch.once('response', (h) => resolve(Number(h[':status']))));
    const watchEnded = new Promise<{ ended: boolean; rstCode: number | undefined; error: string | undefined }>((resolve) => {
      let ended = false;
      let error: string | undefined;
      watch.on('end', () => (ended = true));
      watch.on('error', (e) => (error = e.message));
      watch.on('close', () => resolve({ ended, rstCode: watch.rstCode, error }));
    });
    expect(await watchStatus).toBe(200);

    // A slow create over HTTP/1.1: headers and half the body now, the rest after the signal.
    const body = Buffer.from(JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'in-flight' }, data: { sent: 'across SIGTERM' } }));
    const slow = httpsRequest(`${server.url}/api/v1/namespaces/default/configmaps`, {
      ...tls,
      method: 'POST',
      agent: false,
      headers: { 'content-type': 'application/json', 'content-length': String(body.length), accept: 'application/json' },
    });
    const slowAnswer = new Promise<{ status: number; body: string }>((resolve, reject) => {
      slow.on('response', (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (d: string) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      });
      slow.on('error', reject);
    });
    slow.write(body.subarray(0, 20));
    await sleep(500);

    server.child.kill('SIGTERM');
    await sleep(1000);
    slow.end(body.subarray(20));

    const answer = await slowAnswer;
    // The spec (api-conventions §4.4) answers a create with 200.
    expect(answer.status, answer.body).toBe(200);
    const watchEnd = await watchEnded;
    expect(watchEnd).toEqual({ ended: true, rstCode: h2.NGHTTP2_NO_ERROR, error: undefined });
    // Whatever the watch delivered before it ended is whole events.
    for (const line of watchBody.split('\n').filter(Boolean)) expect(JSON.parse(line)).toHaveProperty('type');
    session.close();

    expect(await exited).toBe(0);
    expect(server.logs()).toMatch(/"msg":"stopped"/);

    // The store was closed, not abandoned: the same directory opens and holds the write.
    const again = await startServerProcess([], server.dataDir);
    try {
      const got = await again.admin.get('/api/v1/namespaces/default/configmaps/in-flight');
      expect(got.status).toBe(200);
      expect(got.json<{ data: Record<string, string> }>().data).toEqual({ sent: 'across SIGTERM' });
    } finally {
      expect(await again.stop()).toBe(0);
    }
  }, 120_000);
});
