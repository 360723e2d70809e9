// Integration tests of acknowledgements under a wide watch fan-out (delivery-rounds:
// afterDueRound, generic-registry): with many watchers of a collection, a write's response
// follows its watch events on the wire, and a watcher that stops reading holds nothing back
// (in-process server, real TLS, one HTTP/2 connection as kubectl and client-go use).
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { connect as h2connect, type ClientHttp2Session, type ClientHttp2Stream } from 'node:http2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pkiPaths } from '../pki/pki.js';
import { startTestServer, type TestServer } from '../testserver/test-server.js';

const WATCHERS = 300;
const NS = 'fanout';

describe('acknowledgements under a wide watch fan-out', () => {
  let t: TestServer;
  let session: ClientHttp2Session;

  beforeAll(async () => {
    t = await startTestServer();
    const ns = await t.admin.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    expect(ns.status, ns.text()).toBe(200);
    const p = pkiPaths(t.dataDir);
    session = h2connect(t.server.url, { ca: readFileSync(p.caCert), cert: readFileSync(p.adminCert), key: readFileSync(p.adminKey) });
    await once(session, 'connect');
    // As Go's HTTP/2 client (client-go, kubectl) opens its connections: a 1 GiB connection
    // window, so that the connection's flow control does not hold back the watch streams' data
    // (node's default 64 KiB would stop it after about 150 of these events).
    session.setLocalWindowSize(1 << 30);
  });

  afterAll(async () => {
    session?.destroy();
    await t?.stop();
  });

  /** A watch of the namespace's ConfigMaps from the current state on, once its headers arrived. */
  async function openWatch(seen: (text: string) => void): Promise<ClientHttp2Stream> {
    const list = await t.admin.get(`/api/v1/namespaces/${NS}/configmaps`);
    const rv = (list.json() as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
    const stream = session.request({ ':path': `/api/v1/namespaces/${NS}/configmaps?watch=1&resourceVersion=${rv}`, accept: 'application/json' });
    stream.setEncoding('utf8');
    stream.on('data', seen);
    stream.on('error', () => undefined);
    const [headers] = (await once(stream, 'response')) as [Record<string, string | number>];
    expect(headers[':status']).toBe(200);
    return stream;
  }

  function create(name: string, data = 'x'): Promise<number> {
    const req = session.request({ ':path': `/api/v1/namespaces/${NS}/configmaps`, ':method': 'POST', 'content-type': 'application/json', accept: 'application/json' });
    req.end(JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { d: data } }));
    req.resume();
    return new Promise((resolve, reject) => {
      req.on('response', (h) => resolve(Number(h[':status'])));
      req.on('error', reject);
    });
  }

  it(`sends a create's response after its event reached all ${WATCHERS} watchers of one connection`, async () => {
    const received: string[] = Array.from({ length: WATCHERS }, () => '');
    const streams: ClientHttp2Stream[] = [];
    for (let i = 0; i < WATCHERS; i++) streams.push(await openWatch((text) => (received[i] += text)));
    try {
      // Frames of one connection arrive in the order the server sent them, and node:http2
      // emits each as it is read: a watcher without the event when the response arrives got
      // it after the acknowledgement.
      const req = session.request({ ':path': `/api/v1/namespaces/${NS}/configmaps`, ':method': 'POST', 'content-type': 'application/json', accept: 'application/json' });
      req.end(JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'first' }, data: { d: 'x' } }));
      req.resume();
      const [headers] = (await once(req, 'response')) as [Record<string, string | number>];
      const withEventAtResponse = received.filter((r) => r.includes('"name":"first"')).length;
      expect(headers[':status']).toBe(200);
      expect(withEventAtResponse).toBe(WATCHERS);
    } finally {
      for (const s of streams) s.close();
    }
  });

  it('is not held back by a watcher that stopped reading (its flow-control window full)', async () => {
    const streams: ClientHttp2Stream[] = [];
    for (let i = 0; i < WATCHERS; i++) streams.push(await openWatch(() => undefined));
    const stalled = streams[0]!;
    // Past HTTP/2's default 64 KiB window: the stalled stream's server side fills and pauses.
    stalled.pause();
    try {
      const big = 'y'.repeat(4096);
      for (let i = 0; i < 40; i++) expect(await create(`stalled-${i}`, big)).toBe(200);
    } finally {
      for (const s of streams) s.close();
    }
  });
});
