// The HTTP/2 mutual-TLS transport over real loopback sockets: delivery and batching, snapshot
// streaming, refusal of peers without a valid certificate (or claiming another member's id),
// bounded queues, hostile frames, reconnection. No sleeps: tests wait for the events they expect.

import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import * as http2 from 'node:http2';
import * as net from 'node:net';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { EntryType, MessageType, type Message, type NodeId } from '../types.js';
import { createClusterCa, memberCommonName, type ClusterCa, type TlsMaterial } from './cluster-ca.js';
import { encodeFrame } from './frame-codec.js';
import { connect as tlsConnect } from 'node:tls';
import { encodeHello } from './tls-pipe.js';
import { Http2Transport, type Http2TransportOptions } from './http2-transport.js';
import type { SnapshotStatus, TransportHandler } from './transport.js';
import { decodeSnapshotRef, encodeSnapshotRef, isSpoolFileName, readSnapshotData } from '../storage/snapshot-ref.js';

/** A handler that records everything and lets a test await a condition. */
class Recorder implements TransportHandler {
  messages: Message[] = [];
  unreachable: NodeId[] = [];
  snapshots: [NodeId, SnapshotStatus][] = [];
  private waiters: { cond: () => boolean; resolve: () => void }[] = [];
  process(m: Message): void {
    this.messages.push(m);
    this.poke();
  }
  reportUnreachable(id: NodeId): void {
    this.unreachable.push(id);
    this.poke();
  }
  reportSnapshot(id: NodeId, status: SnapshotStatus): void {
    this.snapshots.push([id, status]);
    this.poke();
  }
  down: NodeId[] = [];
  reportPeerDown(id: NodeId): void {
    this.down.push(id);
    this.poke();
  }
  /** Members this one applied the removal of (id → index), and the applied index it announces. */
  removals = new Map<NodeId, number>();
  applied = 0;
  removedReports: [NodeId, number][] = [];
  removedAt(from: NodeId, fromApplied: number): number | undefined {
    const at = this.removals.get(from);
    return at !== undefined && fromApplied < at ? at : undefined;
  }
  appliedIndex(): number {
    return this.applied;
  }
  reportRemoved(by: NodeId, at: number): void {
    this.removedReports.push([by, at]);
    this.poke();
  }
  until(cond: () => boolean): Promise<void> {
    if (cond()) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ cond, resolve }));
  }
  private poke(): void {
    this.waiters = this.waiters.filter((w) => (w.cond() ? (w.resolve(), false) : true));
  }
}

function app(from: NodeId, to: NodeId, index: number, data = `cmd-${index}`): Message {
  return {
    type: MessageType.App, from, to, term: 1, logTerm: 1, index, commit: 0, reject: false, rejectHint: 0,
    context: new Uint8Array(0),
    entries: [{ index: index + 1, term: 1, type: EntryType.Normal, data: new TextEncoder().encode(data) }],
  };
}

let ca: ClusterCa;
const tls = new Map<NodeId, TlsMaterial>();
const running: Http2Transport[] = [];

beforeAll(async () => {
  ca = await createClusterCa();
  for (const id of [1, 2, 3]) tls.set(id, await ca.issueMember(id));
});

afterEach(async () => {
  await Promise.all(running.splice(0).map((t) => t.stop()));
});

/**
 * A TCP proxy in front of a member that can black-hole the link as a pulled cable would:
 * bytes are read and dropped, nothing is closed or reset, and new connections are accepted
 * and held without a backend. restore() forwards new connections again but leaves the
 * black-holed ones silent, so a sender only recovers if it notices on its own.
 */
class BlackHoleProxy {
  private server: net.Server | null = null;
  private dropping = false;
  readonly links = new Set<{ client: net.Socket; backend?: net.Socket }>();
  accepted = 0;
  constructor(private readonly backendPort: number) {}

  async start(): Promise<string> {
    const server = net.createServer((client) => this.accept(client));
    this.server = server;
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    return `https://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  }

  blackhole(): void {
    this.dropping = true;
    for (const l of this.links) this.silence(l);
  }

  restore(): void {
    this.dropping = false;
  }

  async close(): Promise<void> {
    for (const l of this.links) {
      l.client.destroy();
      l.backend?.destroy();
    }
    await new Promise<void>((r) => (this.server ? this.server.close(() => r()) : r()));
  }

  private accept(client: net.Socket): void {
    this.accepted++;
    client.on('error', () => undefined);
    const link: { client: net.Socket; backend?: net.Socket } = { client };
    this.links.add(link);
    client.on('close', () => {
      this.links.delete(link);
      link.backend?.destroy();
    });
    if (this.dropping) return this.silence(link);
    const backend = net.connect(this.backendPort, '127.0.0.1');
    link.backend = backend;
    backend.on('error', () => undefined);
    backend.on('close', () => client.destroy());
    client.pipe(backend);
    backend.pipe(client);
  }

  private silence(link: { client: net.Socket; backend?: net.Socket }): void {
    link.client.unpipe();
    link.backend?.unpipe();
    link.client.on('data', () => undefined);
    link.backend?.on('data', () => undefined);
    link.client.resume();
    link.backend?.resume();
  }
}

async function member(id: NodeId, extra: Partial<Http2TransportOptions> = {}): Promise<{ t: Http2Transport; rec: Recorder }> {
  const rec = new Recorder();
  const t = new Http2Transport({
    id,
    clusterId: 'test-cluster',
    listen: { host: '127.0.0.1', port: 0 },
    tls: tls.get(id)!,
    handler: rec,
    peerCommonName: memberCommonName,
    backoff: { initialMs: 5, maxMs: 20 },
    ...extra,
  });
  await t.start();
  running.push(t);
  return { t, rec };
}

describe('Http2Transport', () => {
  it('delivers messages both ways, in order, one frame per batch', async () => {
    const a = await member(1);
    const b = await member(2);
    a.t.addPeer(2, b.t.url());
    b.t.addPeer(1, a.t.url());
    const batch = Array.from({ length: 100 }, (_, i) => app(1, 2, i + 1));
    a.t.send(batch);
    await b.rec.until(() => b.rec.messages.length === 100);
    expect(b.rec.messages.map((m) => m.index)).toEqual(batch.map((m) => m.index));
    expect(b.rec.messages[7]).toEqual(batch[7]);
    expect(a.t.stats(2)!.framesSent).toBe(1);
    expect(a.t.totals).toEqual({ framesSent: 1, messagesSent: 100 });
    // The pipe is the TLS socket itself, not an HTTP/2 stream (tls-pipe.ts).
    expect(a.t.stats(2)!.tlsPipe).toBe(true);
    b.t.send([app(2, 1, 1)]);
    await a.rec.until(() => a.rec.messages.length === 1);
  });

  it('falls back to the HTTP/2 pipe with a member that refuses bare pipes, and back when the peer restarts', async () => {
    const a = await member(1);
    const b = await member(2);
    // A member of an earlier version has no 'unknownProtocol' listener: Node's HTTP/2 server
    // then answers a socket without ALPN with an HTTP/1.0 403 and ends it, leaving it unread
    // for 10 s (which would hold stop() below); here it reads on, so the client's close ends it.
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the listener is private; replacing it is the earlier version
    const server = (b.t as any).server as http2.Http2SecureServer;
    server.removeAllListeners('unknownProtocol');
    server.on('unknownProtocol', (socket: import('node:net').Socket) => {
      socket.end('HTTP/1.0 403 Forbidden\r\nContent-Length: 0\r\n\r\n');
      socket.resume();
    });
    a.t.addPeer(2, b.t.url());
    a.t.send([app(1, 2, 1)]);
    await b.rec.until(() => b.rec.messages.length === 1);
    expect(a.t.stats(2)!.tlsPipe).toBe(false);
    expect(a.t.stats(2)!.connects).toBe(1);
    expect(a.rec.unreachable).toEqual([]);

    // The peer comes back on the same address with bare pipes: the next connection uses one.
    const port = Number(new URL(b.t.url()).port);
    await b.t.stop();
    const b2 = await member(2, { listen: { host: '127.0.0.1', port } });
    let delivered = false;
    void b2.rec.until(() => b2.rec.messages.length > 0).then(() => (delivered = true));
    for (let i = 0; !delivered; i++) {
      a.t.send([app(1, 2, 10 + i)]);
      await new Promise((r) => setTimeout(r, 10));
    }
    // The first connection after the restart may have been made before b2 listened (then it
    // failed and was retried); whichever delivered, the pipe in use now is a bare one.
    while (!a.t.stats(2)!.tlsPipe) await new Promise((r) => setTimeout(r, 10));
    const before = b2.rec.messages.length;
    a.t.send([app(1, 2, 5000)]);
    await b2.rec.until(() => b2.rec.messages.length > before);
  });

  it('answers a bare pipe: refuses a hello for another cluster, another member or another certificate, and garbage', async () => {
    const b = await member(2);
    const { port } = new URL(b.t.url());
    /** Opens a bare pipe as member `certOf`, sends `bytes`, and returns what came back until the close. */
    const exchange = (certOf: NodeId, bytes: Uint8Array): Promise<Buffer> =>
      new Promise((resolve, reject) => {
        const m = tls.get(certOf)!;
        const sock = tlsConnect({ host: '127.0.0.1', port: Number(port), ca: m.ca, cert: m.cert, key: m.key }, () => sock.write(bytes));
        const got: Buffer[] = [];
        sock.on('data', (c: Buffer) => got.push(c));
        sock.on('error', reject);
        sock.on('close', () => resolve(Buffer.concat(got)));
      });
    const refusal = async (certOf: NodeId, bytes: Uint8Array): Promise<string> => {
      const answer = await exchange(certOf, bytes);
      expect(answer.subarray(0, 4).toString('latin1')).toBe('RFTE');
      return answer.subarray(8).toString('utf8');
    };
    expect(await refusal(1, encodeHello({ from: 1, to: 2, cluster: 'other' }))).toBe('cluster id mismatch');
    expect(await refusal(1, encodeHello({ from: 1, to: 3, cluster: 'test-cluster' }))).toMatch(/for member 3, this is 2/);
    expect(await refusal(3, encodeHello({ from: 1, to: 2, cluster: 'test-cluster' }))).toMatch(/cannot speak for member 1/);
    expect(await refusal(1, new TextEncoder().encode('GET / HTTP/1.1\r\n\r\n'))).toBe('not a raft pipe hello');
    // Accepted, then a garbage frame closes the pipe; a spoofed sender likewise; nothing delivered.
    const hello = encodeHello({ from: 1, to: 2, cluster: 'test-cluster' });
    const garbage = await exchange(1, Buffer.concat([hello, new Uint8Array([0, 0, 0, 8, 1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff])]));
    expect(garbage.toString('latin1')).toBe('RFTA');
    const spoofed = await exchange(1, Buffer.concat([hello, encodeFrame([app(3, 2, 1)])]));
    expect(spoofed.toString('latin1')).toBe('RFTA');
    expect(b.rec.messages).toEqual([]);
  });

  it('streams a large snapshot on its own channel and reports finish', async () => {
    const a = await member(1);
    const b = await member(2);
    a.t.addPeer(2, b.t.url());
    const data = new Uint8Array(12 << 20).map((_, i) => (i * 31) % 256);
    const snap: Message = {
      ...app(1, 2, 0),
      type: MessageType.Snap,
      entries: [],
      snapshot: { metadata: { index: 500, term: 4, confState: { voters: [1, 2, 3], learners: [], votersOutgoing: [], learnersNext: [], autoLeave: false } }, data },
    };
    a.t.send([snap, app(1, 2, 501)]);
    await a.rec.until(() => a.rec.snapshots.length === 1);
    expect(a.rec.snapshots).toEqual([[2, 'finish']]);
    const got = b.rec.messages.find((m) => m.type === MessageType.Snap)!;
    expect(got.snapshot!.metadata.index).toBe(500);
    expect(Buffer.compare(Buffer.from(got.snapshot!.data), Buffer.from(data))).toBe(0);
    await b.rec.until(() => b.rec.messages.some((m) => m.index === 501));
  });

  it('streams a snapshot held in a file and spools a received one into a file of its own', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'raft-spool-'));
    try {
      const a = await member(1);
      const b = await member(2, { snapshotSpoolDir: dir });
      a.t.addPeer(2, b.t.url());
      const data = new Uint8Array((5 << 20) + 12345).map((_, i) => (i * 7) % 251);
      const source = join(dir, 'source.img');
      await writeFile(source, data);
      const snap: Message = {
        ...app(1, 2, 0),
        type: MessageType.Snap,
        entries: [],
        snapshot: { metadata: { index: 70, term: 2, confState: { voters: [1, 2], learners: [], votersOutgoing: [], learnersNext: [], autoLeave: false } }, data: encodeSnapshotRef({ path: source, size: data.length }) },
      };
      a.t.send([snap]);
      await a.rec.until(() => a.rec.snapshots.length === 1);
      expect(a.rec.snapshots).toEqual([[2, 'finish']]);
      const got = b.rec.messages.find((m) => m.type === MessageType.Snap)!;
      expect(got.snapshot!.metadata.index).toBe(70);
      // Delivered as a reference to a spool file holding exactly the bytes sent.
      const ref = decodeSnapshotRef(got.snapshot!.data)!;
      expect(ref.size).toBe(data.length);
      expect(dirname(ref.path)).toBe(dir);
      expect(isSpoolFileName(basename(ref.path))).toBe(true);
      expect(Buffer.compare(await readFile(ref.path), Buffer.from(data))).toBe(0);
      expect(Buffer.compare(Buffer.from(await readSnapshotData(got.snapshot!.data)), Buffer.from(data))).toBe(0);

      // A refused upload (too large) leaves no spool file behind.
      const c = await member(3, { snapshotSpoolDir: dir, maxSnapshotBytes: 1 << 20 });
      a.t.addPeer(3, c.t.url());
      a.t.send([{ ...snap, to: 3 }]);
      await a.rec.until(() => a.rec.snapshots.length === 2);
      expect(a.rec.snapshots[1]).toEqual([3, 'failure']);
      expect(c.rec.messages).toEqual([]);
      const spooled = (await readdir(dir)).filter(isSpoolFileName);
      expect(spooled).toEqual([basename(ref.path)]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('reports a snapshot failure when the receiver refuses it', async () => {
    const a = await member(1);
    const b = await member(2, { maxSnapshotBytes: 1000 });
    a.t.addPeer(2, b.t.url());
    const snap: Message = {
      ...app(1, 2, 0),
      type: MessageType.Snap,
      entries: [],
      snapshot: { metadata: { index: 5, term: 1, confState: { voters: [1, 2], learners: [], votersOutgoing: [], learnersNext: [], autoLeave: false } }, data: new Uint8Array(5000) },
    };
    a.t.send([snap]);
    await a.rec.until(() => a.rec.snapshots.length === 1);
    expect(a.rec.snapshots).toEqual([[2, 'failure']]);
    expect(b.rec.messages).toEqual([]);
  });

  it('refuses a peer whose certificate comes from another CA', async () => {
    const b = await member(2);
    const rogueCa = await createClusterCa({ name: 'rogue' });
    tls.set(9, await rogueCa.issueMember(1)); // claims to be member 1, with a foreign cert
    const rogue = await member(9, { tls: tls.get(9)!, id: 1 });
    rogue.t.addPeer(2, b.t.url());
    rogue.t.send([app(1, 2, 1)]);
    await rogue.rec.until(() => rogue.rec.unreachable.length >= 2);
    expect(b.rec.messages).toEqual([]);
  });

  it('refuses a valid member speaking for another member id', async () => {
    const b = await member(2);
    // Member 3's certificate, but the transport claims id 1.
    const liar = await member(1, { tls: tls.get(3)! });
    liar.t.addPeer(2, b.t.url());
    liar.t.send([app(1, 2, 1)]);
    await liar.rec.until(() => liar.rec.unreachable.length >= 2);
    expect(b.rec.messages).toEqual([]);
  });

  it('never blocks: a full queue drops and reports the peer unreachable', async () => {
    const a = await member(1, { queue: { maxMessages: 10 } });
    // Nothing listens on this port: the pipe never comes up.
    a.t.addPeer(2, 'https://127.0.0.1:1');
    const started = performance.now();
    a.t.send(Array.from({ length: 1000 }, (_, i) => app(1, 2, i + 1)));
    expect(performance.now() - started).toBeLessThan(500);
    expect(a.t.stats(2)!.messagesDropped).toBeGreaterThanOrEqual(990);
    expect(a.rec.unreachable.length).toBeGreaterThanOrEqual(990);
  });

  it('reconnects with backoff after the peer restarts', async () => {
    const a = await member(1);
    const b = await member(2);
    a.t.addPeer(2, b.t.url());
    a.t.send([app(1, 2, 1)]);
    await b.rec.until(() => b.rec.messages.length === 1);
    const port = Number(new URL(b.t.url()).port);
    await b.t.stop();
    await a.rec.until(() => a.rec.unreachable.length >= 1);
    const b2 = await member(2, { listen: { host: '127.0.0.1', port } });
    // Keep sending until the pipe is back; each attempt is one message.
    let delivered = false;
    void b2.rec.until(() => b2.rec.messages.length > 0).then(() => (delivered = true));
    for (let i = 0; !delivered && i < 2000; i++) {
      a.t.send([app(1, 2, 100 + i)]);
      await new Promise((r) => setImmediate(r));
    }
    expect(delivered).toBe(true);
    expect(a.t.stats(2)!.connects).toBeGreaterThanOrEqual(2);
  });

  it('reports a peer down when its address refuses connections, and never one that is only silent', async () => {
    const a = await member(1);
    const b = await member(2);
    const c = await member(3);
    const proxy = new BlackHoleProxy(Number(new URL(c.t.url()).port));
    a.t.addPeer(2, b.t.url());
    a.t.addPeer(3, await proxy.start());
    a.t.send([app(1, 2, 1), app(1, 3, 1)]);
    await b.rec.until(() => b.rec.messages.length === 1);
    await c.rec.until(() => c.rec.messages.length === 1);
    proxy.blackhole();
    await b.t.stop();
    // The pipe to 2 breaks; its reconnect finds nothing listening.
    await a.rec.until(() => a.rec.down.includes(2));
    // The black-holed link to 3 takes new connections and holds them: a connect timeout, at
    // most unreachable, but never down.
    await a.rec.until(() => a.rec.down.filter((id) => id === 2).length >= 3);
    expect(a.rec.down.filter((id) => id !== 2)).toEqual([]);
    await proxy.close();
  });

  it('reports a peer down behind a TCP proxy that accepts and resets, as one in front of a dead peer does', async () => {
    const a = await member(1);
    const resetting = net.createServer((socket) => socket.resetAndDestroy());
    await new Promise<void>((r) => resetting.listen(0, '127.0.0.1', () => r()));
    a.t.addPeer(2, `https://127.0.0.1:${(resetting.address() as net.AddressInfo).port}`);
    await a.rec.until(() => a.rec.down.includes(2));
    await new Promise<void>((r) => resetting.close(() => r()));
  });

  it('closes the pipe on a garbage frame and keeps serving others', async () => {
    const b = await member(2);
    const session = http2.connect(b.t.url(), { ca: tls.get(1)!.ca, cert: tls.get(1)!.cert, key: tls.get(1)!.key });
    session.on('error', () => undefined);
    const stream = session.request({ ':method': 'POST', ':path': '/raft/v1/stream', 'x-raft-from': '1', 'x-raft-to': '2', 'x-raft-cluster': 'test-cluster' });
    stream.on('error', () => undefined);
    const closed = new Promise<void>((r) => stream.on('close', () => r()));
    stream.write(new Uint8Array([0, 0, 0, 8, 1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]));
    await closed;
    expect(stream.rstCode).toBe(http2.constants.NGHTTP2_PROTOCOL_ERROR);
    // A well-formed message whose `from` is not the stream's sender is refused the same way.
    const spoof = session.request({ ':method': 'POST', ':path': '/raft/v1/stream', 'x-raft-from': '1', 'x-raft-to': '2', 'x-raft-cluster': 'test-cluster' });
    spoof.on('error', () => undefined);
    const spoofClosed = new Promise<void>((r) => spoof.on('close', () => r()));
    spoof.write(encodeFrame([app(3, 2, 1)]));
    await spoofClosed;
    expect(spoof.rstCode).toBe(http2.constants.NGHTTP2_PROTOCOL_ERROR);
    session.destroy();
    expect(b.rec.messages).toEqual([]);
    // The listener still serves well-behaved members.
    const a = await member(1);
    a.t.addPeer(2, b.t.url());
    a.t.send([app(1, 2, 7)]);
    await b.rec.until(() => b.rec.messages.length === 1);
    expect(b.rec.messages[0]!.index).toBe(7);
  });

  it('refuses streams for another cluster or another member', async () => {
    const b = await member(2);
    const session = http2.connect(b.t.url(), { ca: tls.get(1)!.ca, cert: tls.get(1)!.cert, key: tls.get(1)!.key });
    session.on('error', () => undefined);
    const status = (headers: http2.OutgoingHttpHeaders): Promise<number> =>
      new Promise((resolve) => {
        const s = session.request({ ':method': 'POST', ...headers });
        s.on('error', () => undefined);
        s.on('response', (h) => resolve(Number(h[':status'])));
        s.end();
      });
    expect(await status({ ':path': '/raft/v1/stream', 'x-raft-from': '1', 'x-raft-to': '2', 'x-raft-cluster': 'other' })).toBe(403);
    expect(await status({ ':path': '/raft/v1/stream', 'x-raft-from': '1', 'x-raft-to': '3', 'x-raft-cluster': 'test-cluster' })).toBe(404);
    expect(await status({ ':path': '/nope', 'x-raft-from': '1', 'x-raft-to': '2', 'x-raft-cluster': 'test-cluster' })).toBe(404);
    session.destroy();
  });

  it('refuses a removed sender that has applied less than its removal, with the index, on the pipe (closing its open one on removePeer), on snapshot uploads and on the HTTP/2 stream; accepts members and senders never removed', async () => {
    const a = await member(1);
    const b = await member(2);
    const c = await member(3);
    // b applied the removal of 1 at index 50; 1 restarted with applied index 10.
    b.rec.removals.set(1, 50);
    a.rec.applied = 10;
    a.t.addPeer(2, b.t.url());
    a.t.send([app(1, 2, 1)]);
    await a.rec.until(() => a.rec.removedReports.length === 1);
    expect(a.rec.removedReports).toEqual([[2, 50]]);
    // The refused sender stays away until it has something to send, then is refused again.
    a.t.send([app(1, 2, 2)]);
    await a.rec.until(() => a.rec.removedReports.length === 2);
    // A snapshot upload is refused likewise.
    const snap: Message = {
      ...app(1, 2, 0),
      type: MessageType.Snap,
      entries: [],
      snapshot: { metadata: { index: 9, term: 1, confState: { voters: [1, 2], learners: [], votersOutgoing: [], learnersNext: [], autoLeave: false } }, data: new Uint8Array(100) },
    };
    a.t.send([snap]);
    await a.rec.until(() => a.rec.snapshots.length === 1 && a.rec.removedReports.length === 3);
    expect(a.rec.snapshots).toEqual([[2, 'failure']]);
    expect(a.rec.removedReports).toEqual([[2, 50], [2, 50], [2, 50]]);
    expect(b.rec.messages).toEqual([]);

    // A sender that applied past its removal (added again under the same id) is accepted.
    a.rec.applied = 50;
    a.t.send([app(1, 2, 3)]);
    await b.rec.until(() => b.rec.messages.length === 1);
    expect(b.rec.messages[0]!.index).toBe(3);
    // b applies a later removal of 1 (at 60) while 1's pipe is open: removePeer closes the pipe,
    // and 1, reconnecting, is refused.
    b.rec.removals.set(1, 60);
    b.t.removePeer(1);
    await a.rec.until(() => a.rec.removedReports.some(([, at]) => at === 60));
    // So is one never removed, whatever it applied (a joiner whose admission b has not applied yet).
    c.t.addPeer(2, b.t.url());
    c.t.send([app(3, 2, 4)]);
    await b.rec.until(() => b.rec.messages.length === 2);
    expect(c.rec.removedReports).toEqual([]);

    // The HTTP/2 stream (members without bare pipes): 410 with the index; a sender that does not
    // announce its applied index (an earlier version) is accepted; a bad one is a 400.
    const session = http2.connect(b.t.url(), { ca: tls.get(1)!.ca, cert: tls.get(1)!.cert, key: tls.get(1)!.key });
    session.on('error', () => undefined);
    const answer = (extra: http2.OutgoingHttpHeaders): Promise<http2.IncomingHttpHeaders> =>
      new Promise((resolve) => {
        const st = session.request({ ':method': 'POST', ':path': '/raft/v1/stream', 'x-raft-from': '1', 'x-raft-to': '2', 'x-raft-cluster': 'test-cluster', ...extra });
        st.on('error', () => undefined);
        st.on('response', (h) => {
          resolve(h);
          st.close();
        });
      });
    const removed = await answer({ 'x-raft-applied': '10' });
    expect([removed[':status'], removed['x-raft-removed-at']]).toEqual([410, '60']);
    expect((await answer({}))[':status']).toBe(200);
    expect((await answer({ 'x-raft-applied': '60' }))[':status']).toBe(200);
    expect((await answer({ 'x-raft-applied': 'x' }))[':status']).toBe(400);
    session.destroy();
  });

  it('a sender on the HTTP/2 pipe (the peer refuses bare pipes) recognises the 410 of a removed member and reports its index', async () => {
    const a = await member(1);
    const b = await member(2);
    // As in the fallback test above: b answers a bare pipe as a member of an earlier version.
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the listener is private; replacing it is the earlier version
    const server = (b.t as any).server as http2.Http2SecureServer;
    server.removeAllListeners('unknownProtocol');
    server.on('unknownProtocol', (socket: import('node:net').Socket) => {
      socket.end('HTTP/1.0 403 Forbidden\r\nContent-Length: 0\r\n\r\n');
      socket.resume();
    });
    b.rec.removals.set(1, 50);
    a.rec.applied = 10;
    a.t.addPeer(2, b.t.url());
    a.t.send([app(1, 2, 1)]);
    await a.rec.until(() => a.rec.removedReports.length === 1);
    expect(a.rec.removedReports).toEqual([[2, 50]]);
    expect(b.rec.messages).toEqual([]);
    // Past its removal (admitted again), it is accepted on the HTTP/2 pipe.
    a.rec.applied = 50;
    a.t.send([app(1, 2, 2)]);
    await b.rec.until(() => b.rec.messages.length === 1);
    expect(a.t.stats(2)!.tlsPipe).toBe(false);
  });

  describe('a black-holed peer (no reset, nothing answers)', () => {
    const snapOf = (bytes: number): Message => ({
      ...app(1, 2, 0),
      type: MessageType.Snap,
      entries: [],
      snapshot: { metadata: { index: 9, term: 1, confState: { voters: [1, 2], learners: [], votersOutgoing: [], learnersNext: [], autoLeave: false } }, data: new Uint8Array(bytes) },
    });
    const liveness = { connectTimeoutMs: 300, keepaliveIntervalMs: 50, keepaliveTimeoutMs: 200 };
    let proxy: BlackHoleProxy | null = null;
    afterEach(async () => {
      await proxy?.close();
      proxy = null;
    });

    it('is detected by PING, the sender never blocks, and it recovers when the peer answers again', async () => {
      const a = await member(1, liveness);
      const b = await member(2);
      proxy = new BlackHoleProxy(Number(new URL(b.t.url()).port));
      a.t.addPeer(2, await proxy.start());
      a.t.send([app(1, 2, 1)]);
      await b.rec.until(() => b.rec.messages.length === 1);
      expect(a.t.stats(2)!.timeouts).toBe(0);

      proxy.blackhole();
      // Sends go on returning at once; the dead session is found by its unanswered PING and
      // dropped (the core hears "unreachable"), and the reconnections that follow are held by
      // the black hole and given up at the connect deadline.
      const unreachableBefore = a.rec.unreachable.length;
      for (let i = 0; a.t.stats(2)!.timeouts < 3; i++) {
        a.t.send([app(1, 2, 10 + i)]);
        await new Promise((r) => setTimeout(r, 20));
      }
      expect(a.rec.unreachable.length).toBeGreaterThan(unreachableBefore);
      expect(proxy.accepted).toBeGreaterThanOrEqual(2);
      expect(b.rec.messages.length).toBe(1);

      proxy.restore();
      // Nothing is closed by the proxy: the sender's own deadlines bring it back.
      const connectsBefore = a.t.stats(2)!.connects;
      let delivered = false;
      void b.rec.until(() => b.rec.messages.some((m) => m.index >= 1000)).then(() => (delivered = true));
      for (let i = 0; !delivered; i++) {
        a.t.send([app(1, 2, 1000 + i)]);
        await new Promise((r) => setTimeout(r, 20));
      }
      expect(a.t.stats(2)!.connects).toBeGreaterThan(connectsBefore);
    });

    it('fails a snapshot upload to a silent peer long before the upload timeout', async () => {
      const a = await member(1, { ...liveness, snapshotTimeoutMs: 10 * 60_000 });
      const b = await member(2);
      proxy = new BlackHoleProxy(Number(new URL(b.t.url()).port));
      a.t.addPeer(2, await proxy.start());
      proxy.blackhole();
      a.t.send([snapOf(4 << 20)]);
      await a.rec.until(() => a.rec.snapshots.length === 1);
      expect(a.rec.snapshots).toEqual([[2, 'failure']]);
      expect(a.t.stats(2)!.timeouts).toBeGreaterThanOrEqual(1);
      expect(b.rec.messages).toEqual([]);
    });

    it('fails the upload when the peer stops answering in the middle of it', async () => {
      const a = await member(1, { ...liveness, snapshotTimeoutMs: 10 * 60_000 });
      const b = await member(2);
      proxy = new BlackHoleProxy(Number(new URL(b.t.url()).port));
      a.t.addPeer(2, await proxy.start());
      a.t.send([app(1, 2, 1)]);
      await b.rec.until(() => b.rec.messages.length === 1);
      a.t.send([snapOf(64 << 20)]);
      // Cut the link once the upload's connection is up and bytes flow.
      while (proxy.links.size < 2) await new Promise((r) => setTimeout(r, 5));
      proxy.blackhole();
      await a.rec.until(() => a.rec.snapshots.length === 1);
      expect(a.rec.snapshots).toEqual([[2, 'failure']]);
    });
  });
});
