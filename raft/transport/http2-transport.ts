// raft/transport/http2-transport.ts owns Raft messaging between processes over mutual TLS.
// Every member runs one listener (an HTTP/2 server); to reach a peer it keeps one long-lived
// message pipe on which each batch is one frame (frame-codec.ts): the TLS socket itself
// (tls-pipe.ts: a hello, then frames), or with a member of an earlier version that refuses
// that, a long-lived HTTP/2 POST stream. Each snapshot upload opens a separate HTTP/2
// connection so that many megabytes of snapshot never queue behind, or ahead of, heartbeats.
// Both ends verify the other's certificate against the cluster CA; optionally the peer's
// certificate must also name the member id it claims.
//
// Flow: send() → per-peer bounded PeerQueue → flush in a microtask → pipe.write(frame).
// When HTTP/2 flow control pushes back the queue absorbs, then drops (reportUnreachable).
// A broken pipe drops what is queued, reports the peer unreachable and reconnects after an
// exponential backoff.
//
// Liveness: a peer that vanishes without a reset (a black-holed link, a paused VM) leaves a
// TCP connection that looks open forever. Every client connection therefore has a connect
// deadline (TLS up and the pipe accepted in connectTimeoutMs) and a PING (the pipe's empty
// frame, or HTTP/2's) every keepaliveIntervalMs that must be answered within
// keepaliveTimeoutMs; a connection that misses either is destroyed and replaced (etcd's peer
// dial timeout and keepalive).
//
// Removed members: a sender announces its applied log index when it connects (the hello, or a
// header). One whose removal from the cluster this member applied at a later index than that
// (TransportHandler.removedAt: it was stopped or cut off when it was removed, and still thinks
// it is a member) is refused, with the index: "removed member at index N" on the pipe, 410 and
// x-raft-removed-at on HTTP/2 (etcd's rafthttp answers a removed member 410 too). The refused
// sender reports it (reportRemoved) and does not reconnect to that peer until it has a message
// for it, so a removed process does not handshake with every peer every backoff forever.

import { open as openFile, rm, type FileHandle } from 'node:fs/promises';
import * as http2 from 'node:http2';
import { isIP } from 'node:net';
import { join } from 'node:path';
import type { Writable } from 'node:stream';
import * as tls from 'node:tls';
import { CodecError } from '../codec/codec-error.js';
import { MessageType, type Message, type NodeId } from '../types.js';
import { Backoff } from './backoff.js';
import type { TlsMaterial } from './cluster-ca.js';
import { FrameDecoder, SnapshotUploadDecoder, encodeFrame, encodeSnapshotHeader } from './frame-codec.js';
import { PeerQueue, type PeerQueueLimits } from './peer-queue.js';
import { AnswerReader, encodeHello, encodeRefusal, HelloReader, PIPE_ACCEPT, PIPE_PING, removedIndexOf, removedRefusal } from './tls-pipe.js';
import { encodeSnapshotRef, snapshotDataChunks, spoolFileName } from '../storage/snapshot-ref.js';
import type { SnapshotStatus, Transport, TransportHandler } from './transport.js';

const STREAM_PATH = '/raft/v1/stream';
const SNAPSHOT_PATH = '/raft/v1/snapshot';
const H_FROM = 'x-raft-from';
const H_TO = 'x-raft-to';
const H_CLUSTER = 'x-raft-cluster';
/** The sender's applied log index (see removedAt). */
const H_APPLIED = 'x-raft-applied';
/** With a 410: the log index at which the receiver applied the sender's removal. */
const H_REMOVED_AT = 'x-raft-removed-at';
const WINDOW_BYTES = 8 << 20;

export interface TransportTimers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const realTimers: TransportTimers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
};

export interface Http2TransportOptions {
  /** This member's id: incoming streams must be addressed to it. */
  id: NodeId;
  /** Streams from another cluster are refused, so that misconfigured members cannot mix. */
  clusterId: string;
  /** Where to listen; port 0 picks a free port (see url()). */
  listen: { host: string; port: number };
  tls: TlsMaterial;
  handler: TransportHandler;
  /**
   * When set, a peer must present a certificate whose subject CN equals peerCommonName(id) for
   * the member id it claims (for example cluster-ca.ts's memberCommonName); without it any
   * certificate issued by the cluster CA may speak for any member.
   */
  peerCommonName?: (id: NodeId) => string;
  queue?: Partial<PeerQueueLimits>;
  /** Largest message-stream frame accepted (and the receive-side guard). Default 64 MiB. */
  maxFrameBytes?: number;
  /** Largest snapshot accepted. Default 4 GiB. */
  maxSnapshotBytes?: number;
  /** Snapshot upload chunk size. Default 1 MiB. */
  snapshotChunkBytes?: number;
  /** A snapshot upload not acknowledged within this time fails. Default 5 minutes. */
  snapshotTimeoutMs?: number;
  /**
   * Where received snapshots are written as they arrive (the log store's snapshot directory,
   * which adopts them: LevelLogStoreOptions.snapshotRefs); the message delivered then carries
   * a reference to the file (snapshot-ref.ts). Without it a snapshot is collected in memory.
   */
  snapshotSpoolDir?: string;
  backoff?: { initialMs?: number; maxMs?: number };
  /** A connection whose pipe (or snapshot upload) has no response within this time is replaced. Default 3 s. */
  connectTimeoutMs?: number;
  /** How often an idle or busy session is probed with an HTTP/2 PING. Default 1 s. */
  keepaliveIntervalMs?: number;
  /** A PING not acknowledged within this time marks the session dead. Default 3 s. */
  keepaliveTimeoutMs?: number;
  random?: () => number;
  timers?: TransportTimers;
  /** Diagnostics for refused connections and decode errors. Default: silent. */
  log?: (line: string) => void;
}

/** Counters for tests and metrics. */
export interface PeerStats {
  framesSent: number;
  messagesSent: number;
  messagesDropped: number;
  snapshotsSent: number;
  snapshotsFailed: number;
  connects: number;
  /** Sessions given up because they did not come up, or stopped answering PINGs, in time. */
  timeouts: number;
  /** Whether the current pipe is the TLS socket itself (false: an HTTP/2 stream, or none). */
  tlsPipe: boolean;
}

export class Http2Transport implements Transport {
  private readonly opts: Required<Omit<Http2TransportOptions, 'peerCommonName' | 'queue' | 'backoff' | 'snapshotSpoolDir'>> &
    Pick<Http2TransportOptions, 'peerCommonName' | 'snapshotSpoolDir'>;
  readonly queueLimits: PeerQueueLimits;
  readonly backoffLimits: { initialMs: number; maxMs: number };
  private readonly peers = new Map<NodeId, PeerSender>();
  private readonly sessions = new Set<http2.ServerHttp2Session>();
  /** Received pipes on bare TLS sockets (tls-pipe.ts). */
  private readonly pipes = new Set<tls.TLSSocket>();
  /** The accepted ones, by sender (see removePeer). */
  private readonly pipesFrom = new Map<NodeId, Set<tls.TLSSocket>>();
  private server: http2.Http2SecureServer | null = null;
  private port = 0;
  private stopped = false;

  constructor(options: Http2TransportOptions) {
    this.opts = {
      maxFrameBytes: 64 << 20,
      maxSnapshotBytes: 4 * 1024 ** 3,
      snapshotChunkBytes: 1 << 20,
      snapshotTimeoutMs: 5 * 60_000,
      connectTimeoutMs: 3000,
      keepaliveIntervalMs: 1000,
      keepaliveTimeoutMs: 3000,
      random: Math.random,
      timers: realTimers,
      log: () => undefined,
      ...options,
    };
    this.queueLimits = { maxMessages: 4096, maxBytes: 64 << 20, ...options.queue };
    this.backoffLimits = { initialMs: 50, maxMs: 2000, ...options.backoff };
  }

  /** The URL peers use to reach this member (valid after start()). */
  url(): string {
    return `https://${this.opts.listen.host}:${this.port}`;
  }

  async start(): Promise<void> {
    if (this.server) return;
    const server = http2.createSecureServer({
      key: this.opts.tls.key,
      cert: this.opts.tls.cert,
      ca: this.opts.tls.ca,
      requestCert: true,
      rejectUnauthorized: true,
      allowHTTP1: false,
      settings: { initialWindowSize: WINDOW_BYTES },
    });
    server.on('session', (session) => {
      this.sessions.add(session);
      session.on('close', () => this.sessions.delete(session));
      session.on('error', () => undefined);
      session.on('connect', () => session.setLocalWindowSize(WINDOW_BYTES * 4));
    });
    server.on('stream', (stream, headers) => this.onStream(stream, headers));
    // A client that offers no ALPN protocol opens a bare TLS pipe (tls-pipe.ts).
    server.on('unknownProtocol', (socket) => this.onPipe(socket as tls.TLSSocket));
    server.on('tlsClientError', (err) => this.opts.log(`raft transport: refused TLS client: ${err.message}`));
    server.on('sessionError', () => undefined);
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.opts.listen.port, this.opts.listen.host, () => {
        server.off('error', reject);
        const addr = server.address();
        this.port = typeof addr === 'object' && addr ? addr.port : this.opts.listen.port;
        resolve();
      });
    });
  }

  send(messages: readonly Message[]): void {
    if (this.stopped) return;
    for (const m of messages) {
      const peer = this.peers.get(m.to);
      if (!peer) {
        // Unknown peer: nothing to retry against. Tell the core so a leader stops waiting.
        if (m.type === MessageType.Snap) this.opts.handler.reportSnapshot(m.to, 'failure');
        this.opts.handler.reportUnreachable(m.to);
        continue;
      }
      peer.enqueue(m);
    }
  }

  addPeer(id: NodeId, url: string): void {
    if (this.stopped || this.peers.has(id) || id === this.opts.id) return;
    const peer = new PeerSender(id, url, this);
    this.peers.set(id, peer);
    peer.connect();
  }

  removePeer(id: NodeId): void {
    // A member leaving the membership: the pipes it opened to this member close too, so that,
    // reconnecting, it is told whether it was removed (senderRefusal) rather than go on
    // talking to a member that no longer answers it. (Pipes on HTTP/2 streams, from members of
    // earlier versions, stay: those would not understand the refusal.)
    for (const socket of this.pipesFrom.get(id) ?? []) socket.destroy();
    this.pipesFrom.delete(id);
    const peer = this.peers.get(id);
    if (!peer) return;
    this.peers.delete(id);
    peer.close();
  }

  updatePeer(id: NodeId, url: string): void {
    this.peers.get(id)?.setUrl(url);
  }

  /**
   * Frames and messages written to every peer since start (peers removed since included): a
   * frame is one socket write of a batch, so frames per message tells how well sends coalesce.
   */
  readonly totals = { framesSent: 0, messagesSent: 0 };

  stats(id: NodeId): PeerStats | undefined {
    const p = this.peers.get(id);
    return p ? { ...p.stats } : undefined;
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    for (const peer of this.peers.values()) peer.close();
    this.peers.clear();
    const server = this.server;
    if (!server) return;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const s of this.sessions) s.destroy();
    for (const p of this.pipes) p.destroy();
    await closed;
  }

  // ---- used by PeerSender -------------------------------------------------------------------

  /** @internal */ get options(): typeof this.opts {
    return this.opts;
  }

  /** @internal */ isStopped(): boolean {
    return this.stopped;
  }

  /** @internal Handler calls are suppressed after stop(). */
  report(kind: 'unreachable' | 'down', id: NodeId): void;
  report(kind: 'snapshot', id: NodeId, status: SnapshotStatus): void;
  report(kind: 'unreachable' | 'down' | 'snapshot', id: NodeId, status?: SnapshotStatus): void {
    if (this.stopped) return;
    if (kind === 'unreachable') this.opts.handler.reportUnreachable(id);
    else if (kind === 'down') this.opts.handler.reportPeerDown(id);
    else this.opts.handler.reportSnapshot(id, status!);
  }

  /** @internal A peer refused this member as removed from the cluster at `removedAt`. */
  reportRemoved(id: NodeId, removedAt: number): void {
    if (this.stopped) return;
    this.opts.log(`raft transport: peer ${id} refused this member: removed from the cluster at index ${removedAt}`);
    this.opts.handler.reportRemoved?.(id, removedAt);
  }

  /** @internal This member's applied index, announced when connecting (undefined: the handler does not say). */
  appliedIndex(): number | undefined {
    return this.opts.handler.appliedIndex?.();
  }

  /** @internal */ clientSettings(): http2.SecureClientSessionOptions {
    return {
      ca: this.opts.tls.ca,
      cert: this.opts.tls.cert,
      key: this.opts.tls.key,
      settings: { initialWindowSize: WINDOW_BYTES },
    };
  }

  /** @internal */ requestHeaders(path: string, to: NodeId): http2.OutgoingHttpHeaders {
    const applied = this.appliedIndex();
    return {
      ':method': 'POST',
      ':path': path,
      [H_FROM]: String(this.opts.id),
      [H_TO]: String(to),
      [H_CLUSTER]: this.opts.clusterId,
      ...(applied === undefined ? {} : { [H_APPLIED]: String(applied) }),
    };
  }

  // ---- receiving ----------------------------------------------------------------------------

  private refuse(stream: http2.ServerHttp2Stream, status: number, why: string, headers: http2.OutgoingHttpHeaders = {}): void {
    this.opts.log(`raft transport: refused stream: ${why}`);
    if (!stream.headersSent && !stream.destroyed) stream.respond({ ':status': status, ...headers }, { endStream: true });
    else stream.close(http2.constants.NGHTTP2_REFUSED_STREAM);
  }

  private deliver(m: Message): void {
    if (this.stopped) return;
    try {
      this.opts.handler.process(m);
    } catch (err) {
      // The handler's contract is not to throw; a bug there must not take the listener down.
      this.opts.log(`raft transport: handler threw: ${(err as Error).message}`);
    }
  }

  private spoolSnapshot(stream: http2.ServerHttp2Stream, from: number, valid: (m: Message) => boolean, dir: string): void {
    spoolSnapshotInto(
      { deliver: (m) => this.deliver(m), refuse: (st, status, why) => this.refuse(st, status, why), maxSnapshotBytes: this.opts.maxSnapshotBytes },
      stream,
      from,
      valid,
      dir,
    );
  }

  /**
   * Why a pipe from `from` to `to` in `cluster` over `socket` is refused, or null; `fromApplied`
   * is the applied index the sender announced (undefined: it did not). A removed member is told
   * only once its certificate is checked: the refusal is for that member alone.
   */
  private senderRefusal(
    from: number,
    to: number,
    cluster: unknown,
    socket: tls.TLSSocket | undefined,
    fromApplied: number | undefined,
  ): { status: number; why: string; removedAt?: number } | null {
    if (cluster !== this.opts.clusterId) return { status: 403, why: 'cluster id mismatch' };
    if (!Number.isSafeInteger(from) || from <= 0) return { status: 400, why: 'bad sender id' };
    if (to !== this.opts.id) return { status: 404, why: `stream for member ${String(to)}, this is ${this.opts.id}` };
    if (this.opts.peerCommonName) {
      const cn = socket?.getPeerCertificate()?.subject?.CN;
      if (cn !== this.opts.peerCommonName(from)) return { status: 403, why: `certificate ${String(cn)} cannot speak for member ${from}` };
    }
    if (fromApplied !== undefined && this.opts.handler.removedAt) {
      let removedAt: number | undefined;
      try {
        removedAt = this.opts.handler.removedAt(from, fromApplied);
      } catch (err) {
        // The handler's contract is not to throw; a bug there must not take the listener down.
        this.opts.log(`raft transport: handler threw: ${(err as Error).message}`);
      }
      if (removedAt !== undefined) return { status: 410, why: `member ${from} (applied index ${fromApplied}) was removed from the cluster at index ${removedAt}`, removedAt };
    }
    return null;
  }

  /** Decodes and delivers the frames a chunk completes; a bad frame or a spoofed message calls `abort`. */
  private receiveFrames(decoder: FrameDecoder, chunk: Uint8Array, from: number, abort: () => void): void {
    let batches: Message[][];
    try {
      batches = decoder.push(chunk);
    } catch (err) {
      this.opts.log(`raft transport: bad frame from ${from}: ${(err as Error).message}`);
      return abort();
    }
    for (const batch of batches) {
      for (const m of batch) {
        if (m.from !== from || m.to !== this.opts.id) {
          this.opts.log(`raft transport: message ${m.from}→${m.to} on stream from ${from}`);
          return abort();
        }
        this.deliver(m);
      }
    }
  }

  /**
   * A bare TLS pipe (tls-pipe.ts), its certificate already verified by the handshake: reads the
   * hello within the connect deadline, checks it as a stream's headers are checked, accepts,
   * then delivers frames and answers PINGs.
   */
  private onPipe(socket: tls.TLSSocket): void {
    socket.on('error', () => undefined);
    if (this.stopped) return void socket.destroy();
    this.pipes.add(socket);
    socket.on('close', () => this.pipes.delete(socket));
    socket.setNoDelay(true);
    const { timers } = this.opts;
    const refuse = (why: string): void => {
      this.opts.log(`raft transport: refused pipe: ${why}`);
      socket.end(encodeRefusal(why));
    };
    let deadline: unknown = timers.setTimeout(() => {
      deadline = null;
      this.opts.log('raft transport: refused pipe: no hello in time');
      socket.destroy();
    }, this.opts.connectTimeoutMs);
    const hello = new HelloReader();
    let decoder: FrameDecoder | null = null;
    let from = 0;
    socket.on('data', (chunk: Buffer) => {
      if (socket.destroyed) return;
      if (decoder) return this.receiveFrames(decoder, chunk, from, () => socket.destroy());
      let got: ReturnType<HelloReader['push']>;
      try {
        got = hello.push(chunk);
      } catch (err) {
        got = undefined;
        refuse((err as Error).message);
      }
      if (!got || deadline === null) return;
      timers.clearTimeout(deadline);
      deadline = null;
      const refused = this.senderRefusal(got.hello.from, got.hello.to, got.hello.cluster, socket, got.hello.applied);
      if (refused?.removedAt !== undefined) {
        this.opts.log(`raft transport: refused pipe: ${refused.why}`);
        return void socket.end(encodeRefusal(removedRefusal(refused.removedAt)));
      }
      if (refused) return refuse(refused.why);
      from = got.hello.from;
      decoder = new FrameDecoder(this.opts.maxFrameBytes, () => socket.write(PIPE_PING));
      socket.write(PIPE_ACCEPT);
      const sender = from;
      const fromSender = this.pipesFrom.get(sender) ?? this.pipesFrom.set(sender, new Set()).get(sender)!;
      fromSender.add(socket);
      socket.on('close', () => {
        fromSender.delete(socket);
        if (fromSender.size === 0 && this.pipesFrom.get(sender) === fromSender) this.pipesFrom.delete(sender);
      });
      if (got.rest.length > 0) this.receiveFrames(decoder, got.rest, from, () => socket.destroy());
    });
    socket.on('close', () => {
      if (deadline !== null) timers.clearTimeout(deadline);
    });
  }

  private onStream(stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders): void {
    stream.on('error', () => undefined);
    if (this.stopped) return this.refuse(stream, 503, 'stopping');
    const path = headers[':path'];
    if (headers[':method'] !== 'POST' || (path !== STREAM_PATH && path !== SNAPSHOT_PATH)) {
      return this.refuse(stream, 404, `${String(headers[':method'])} ${String(path)}`);
    }
    const from = Number(headers[H_FROM]);
    const appliedHeader = headers[H_APPLIED];
    const fromApplied = appliedHeader === undefined ? undefined : Number(appliedHeader);
    if (fromApplied !== undefined && (!Number.isSafeInteger(fromApplied) || fromApplied < 0)) return this.refuse(stream, 400, `bad ${H_APPLIED} header`);
    const refused = this.senderRefusal(from, Number(headers[H_TO]), headers[H_CLUSTER], stream.session?.socket as tls.TLSSocket | undefined, fromApplied);
    if (refused) return this.refuse(stream, refused.status, refused.why, refused.removedAt === undefined ? {} : { [H_REMOVED_AT]: String(refused.removedAt) });
    // Every message must be from the authenticated sender and to this member.
    const valid = (m: Message): boolean => m.from === from && m.to === this.opts.id;

    if (path === STREAM_PATH) {
      stream.respond({ ':status': 200 });
      const decoder = new FrameDecoder(this.opts.maxFrameBytes);
      stream.on('data', (chunk: Buffer) => {
        if (!stream.destroyed) this.receiveFrames(decoder, chunk, from, () => stream.close(http2.constants.NGHTTP2_PROTOCOL_ERROR));
      });
      stream.on('end', () => {
        try {
          decoder.finish();
        } catch {
          /* the peer went away mid-frame: nothing to deliver */
        }
        if (!stream.destroyed) stream.end();
      });
      return;
    }

    if (this.opts.snapshotSpoolDir) return this.spoolSnapshot(stream, from, valid, this.opts.snapshotSpoolDir);
    const upload = new SnapshotUploadDecoder(1 << 20, this.opts.maxSnapshotBytes);
    let message: Message | null = null;
    stream.on('data', (chunk: Buffer) => {
      if (stream.destroyed) return;
      try {
        message = upload.push(chunk) ?? message;
      } catch (err) {
        const status = err instanceof CodecError && err.code === 'CODEC_TOO_LARGE' ? 413 : 400;
        this.refuse(stream, status, `bad snapshot upload from ${from}: ${(err as Error).message}`);
        stream.close(http2.constants.NGHTTP2_CANCEL);
      }
    });
    stream.on('end', () => {
      if (stream.destroyed || stream.headersSent) return;
      if (!message) return this.refuse(stream, 400, 'snapshot upload ended early');
      if (!valid(message)) return this.refuse(stream, 400, 'snapshot message not from the sender');
      this.deliver(message);
      stream.respond({ ':status': 200 }, { endStream: true });
    });
  }
}

/**
 * Receives a snapshot upload into a file of `dir` as it arrives (never whole in memory), with
 * back-pressure on the stream while the disk catches up; once the data is complete and
 * fsynced, delivers the message with a reference to the file. A failed or cut upload deletes
 * its file (and the log store removes leftovers of a crash when it opens).
 */
function spoolSnapshotInto(
  t: { deliver(m: Message): void; refuse(stream: http2.ServerHttp2Stream, status: number, why: string): void; maxSnapshotBytes: number },
  stream: http2.ServerHttp2Stream,
  from: number,
  valid: (m: Message) => boolean,
  dir: string,
): void {
  const path = join(dir, spoolFileName());
  let file: Promise<FileHandle> | null = null;
  let writing: Promise<unknown> = Promise.resolve();
  let pending = 0;
  let failed = false;
  const fail = (status: number, why: string): void => {
    if (failed) return;
    failed = true;
    t.refuse(stream, status, why);
    stream.close(http2.constants.NGHTTP2_CANCEL);
    void writing.catch(() => undefined).then(async () => {
      await (await file?.catch(() => null))?.close().catch(() => undefined);
      await rm(path, { force: true });
    });
  };
  const upload = new SnapshotUploadDecoder(1 << 20, t.maxSnapshotBytes, (chunk) => {
    file ??= openFile(path, 'wx', 0o600);
    const f = file;
    pending += chunk.length;
    if (pending > SPOOL_HIGH_WATER) stream.pause();
    writing = writing.then(async () => {
      await (await f).write(chunk);
      pending -= chunk.length;
      if (pending <= SPOOL_HIGH_WATER / 2) stream.resume();
    });
    writing.catch((err: unknown) => fail(500, `cannot write snapshot from ${from}: ${(err as Error).message}`));
  });
  let message: Message | null = null;
  stream.on('data', (chunk: Buffer) => {
    if (failed || stream.destroyed) return;
    try {
      message = upload.push(chunk) ?? message;
    } catch (err) {
      fail(err instanceof CodecError && err.code === 'CODEC_TOO_LARGE' ? 413 : 400, `bad snapshot upload from ${from}: ${(err as Error).message}`);
    }
  });
  stream.on('close', () => {
    if (!message && !failed) fail(400, 'snapshot upload ended early');
  });
  stream.on('end', () => {
    if (failed || stream.destroyed || stream.headersSent) return;
    const m: Message | null = message;
    if (!m) return fail(400, 'snapshot upload ended early');
    if (!valid(m)) return fail(400, 'snapshot message not from the sender');
    void (async () => {
      try {
        await writing;
        const fh = await (file ??= openFile(path, 'wx', 0o600));
        await fh.sync();
        await fh.close();
      } catch (err) {
        return fail(500, `cannot write snapshot from ${from}: ${(err as Error).message}`);
      }
      if (stream.destroyed) {
        await rm(path, { force: true });
        return;
      }
      t.deliver({ ...m, snapshot: { metadata: m.snapshot!.metadata, data: encodeSnapshotRef({ path, size: upload.length }) } });
      stream.respond({ ':status': 200 }, { endStream: true });
    })();
  });
}

/** Bytes of a received snapshot waiting for the disk before the upload is paused. */
const SPOOL_HIGH_WATER = 16 << 20;

/** What guardSession probes: an HTTP/2 client session, or a bare TLS pipe's PING. */
interface Pingable {
  readonly destroyed: boolean;
  /** Sends a probe; `answered` is called when it is answered. False: the connection is closing. */
  ping(answered: (err: Error | null) => void): boolean;
}

/**
 * Watches one client connection: `dead(why)` is called once if `responded()` is not called
 * within the connect deadline, or if a PING is not acknowledged within the keepalive timeout.
 * PINGs start once the connection is up and go on until stop() (called when it is closed for
 * any other reason). The timers are the transport's, so tests may drive them.
 */
function guardSession(
  session: Pingable,
  o: { timers: TransportTimers; connectTimeoutMs: number; keepaliveIntervalMs: number; keepaliveTimeoutMs: number },
  dead: (why: string) => void,
): { responded(): void; stop(): void } {
  const { timers } = o;
  let stopped = false;
  let pingTimer: unknown = null;
  let ackTimer: unknown = null;
  let connectTimer: unknown = timers.setTimeout(() => fail(`no response within ${o.connectTimeoutMs} ms`), o.connectTimeoutMs);
  const clear = (): void => {
    for (const t of [connectTimer, pingTimer, ackTimer]) if (t !== null) timers.clearTimeout(t);
    connectTimer = pingTimer = ackTimer = null;
  };
  const fail = (why: string): void => {
    if (stopped) return;
    stopped = true;
    clear();
    dead(why);
  };
  const schedulePing = (): void => {
    pingTimer = timers.setTimeout(() => {
      pingTimer = null;
      if (stopped || session.destroyed) return;
      ackTimer = timers.setTimeout(() => fail(`PING not acknowledged within ${o.keepaliveTimeoutMs} ms`), o.keepaliveTimeoutMs);
      let sent: boolean;
      try {
        sent = session.ping((err) => {
          if (stopped) return;
          if (ackTimer !== null) timers.clearTimeout(ackTimer);
          ackTimer = null;
          // An error here means the session is closing: its close event reports that.
          if (!err) schedulePing();
        });
      } catch {
        sent = false; // the session is closing
      }
      if (!sent) fail('PING refused by the session');
    }, o.keepaliveIntervalMs);
  };
  return {
    responded() {
      if (stopped || connectTimer === null) return;
      timers.clearTimeout(connectTimer);
      connectTimer = null;
      schedulePing();
    },
    stop() {
      stopped = true;
      clear();
    },
  };
}

/** The sending side towards one peer: its queue, its message pipe and its snapshot uploads. */
class PeerSender {
  readonly stats: PeerStats = { framesSent: 0, messagesSent: 0, messagesDropped: 0, snapshotsSent: 0, snapshotsFailed: 0, connects: 0, timeouts: 0, tlsPipe: false };
  private readonly queue: PeerQueue;
  private readonly backoff: Backoff;
  private session: http2.ClientHttp2Session | null = null;
  private socket: tls.TLSSocket | null = null;
  /** Where frames go: the TLS socket, or the HTTP/2 stream with a member without bare pipes. */
  private stream: Writable | null = null;
  /** The peer answered a bare TLS pipe as a member of an earlier version does: use HTTP/2. */
  private legacy = false;
  private guard: { responded(): void; stop(): void } | null = null;
  private connected = false;
  private blocked = false;
  private flushScheduled = false;
  private retryTimer: unknown = null;
  private closed = false;
  /** Bumped on every (re)connect so that events from an old connection are ignored. */
  private generation = 0;
  private snapshotAbort: (() => void) | null = null;
  /** The current connection was refused as a removed member's (see the module header). */
  private refusedAsRemoved = false;
  /** Not reconnecting after such a refusal until a message is queued. */
  private dormant = false;

  constructor(
    readonly id: NodeId,
    private url: string,
    private readonly t: Http2Transport,
  ) {
    this.queue = new PeerQueue(t.queueLimits);
    this.backoff = new Backoff({ ...t.backoffLimits, jitter: 0.2, random: t.options.random });
  }

  enqueue(m: Message): void {
    if (this.closed) return;
    if (m.type === MessageType.Snap) {
      this.sendSnapshot(m);
      return;
    }
    if (!this.queue.push(m)) {
      this.stats.messagesDropped++;
      this.t.report('unreachable', this.id);
      return;
    }
    if (this.dormant) {
      this.dormant = false;
      this.connect();
    }
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      queueMicrotask(() => this.flush());
    }
  }

  setUrl(url: string): void {
    if (url === this.url) return;
    this.url = url;
    this.backoff.reset();
    this.disconnect(false);
    this.connect();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.queue.clear();
    this.disconnect(false);
    this.snapshotAbort?.();
  }

  connect(): void {
    if (this.closed || this.session || this.socket) return;
    if (this.retryTimer !== null) {
      this.t.options.timers.clearTimeout(this.retryTimer);
      this.retryTimer = null;
    }
    if (this.legacy) this.connectHttp2();
    else this.connectPipe();
  }

  /** The pipe on the TLS socket itself (tls-pipe.ts). */
  private connectPipe(): void {
    const gen = ++this.generation;
    const url = new URL(this.url);
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const { ca, cert, key } = this.t.clientSettings();
    // No ALPN offered: that is what tells the listener this is a bare pipe. The server's
    // certificate is checked against the address as HTTPS would (checkServerIdentity).
    const socket = tls.connect({ host, port: Number(url.port), ca, cert, key, ...(isIP(host) ? {} : { servername: host }) });
    this.socket = socket;
    socket.setNoDelay(true);
    // Before watch()'s listener, which moves on to the next generation.
    let secured = false;
    socket.once('secureConnect', () => (secured = true));
    socket.once('error', (err: NodeJS.ErrnoException) => this.refused(gen, err, secured));
    const fail = (): void => {
      if (gen === this.generation) this.onBroken();
    };
    const pongs: Array<(err: Error | null) => void> = [];
    this.guard = this.guarded(gen, {
      get destroyed() {
        return socket.destroyed;
      },
      ping: (answered) => {
        if (socket.destroyed || !socket.writable) return false;
        pongs.push(answered);
        socket.write(PIPE_PING);
        return true;
      },
    });
    socket.once('secureConnect', () => {
      if (gen === this.generation) socket.write(encodeHello({ from: this.t.options.id, to: this.id, cluster: this.t.options.clusterId, applied: this.t.appliedIndex() }));
    });
    const answers = new AnswerReader();
    socket.on('data', (chunk: Buffer) => {
      if (gen !== this.generation) return;
      for (const a of answers.push(chunk)) {
        if (a.kind === 'pong') pongs.shift()?.(null);
        else if (a.kind === 'accepted') this.pipeUp(socket, true);
        else if (a.kind === 'legacy') {
          // A member of an earlier version: it speaks only the HTTP/2 pipe. Straight there.
          this.legacy = true;
          this.disconnect(false);
          this.connect();
          return;
        } else {
          if (a.kind === 'refused') {
            const removedAt = removedIndexOf(a.reason);
            if (removedAt !== undefined) this.removed(removedAt);
            else this.t.options.log(`raft transport: peer ${this.id} at ${this.url} refused the pipe: ${a.reason}`);
          }
          return fail();
        }
      }
    });
    this.watch(socket, gen, fail);
  }

  /** The pipe as a long-lived HTTP/2 POST stream (members without bare pipes). */
  private connectHttp2(): void {
    const gen = ++this.generation;
    const session = http2.connect(this.url, this.t.clientSettings());
    this.session = session;
    const fail = (): void => {
      if (gen === this.generation) this.onBroken();
    };
    let secured = false;
    session.once('connect', () => (secured = true));
    session.once('error', (err: NodeJS.ErrnoException) => this.refused(gen, err, secured));
    session.on('error', fail);
    session.on('close', fail);
    session.on('goaway', fail);
    this.guard = this.guarded(gen, session);
    const stream = session.request(this.t.requestHeaders(STREAM_PATH, this.id), { endStream: false });
    stream.on('response', (headers) => {
      if (gen !== this.generation) return;
      if (headers[':status'] !== 200) {
        const removedAt = headers[':status'] === 410 ? removedAtHeader(headers) : undefined;
        if (removedAt !== undefined) this.removed(removedAt);
        return fail();
      }
      this.pipeUp(stream, false);
    });
    this.watch(stream, gen, fail);
    // The receiver never sends a body on the pipe; consume to keep flow control moving.
    stream.resume();
  }

  /** The peer refused this member as removed at `removedAt`: say so; the failure that follows leaves this sender dormant. */
  private removed(removedAt: number): void {
    this.refusedAsRemoved = true;
    this.t.reportRemoved(this.id, removedAt);
  }

  /**
   * Connection `gen` failed with `err`. A refused connection says the peer's process is gone;
   * so does a reset before the TLS handshake completed, which is what a TCP proxy in front of a
   * dead peer answers (it accepts, finds its backend refusing, and resets). A reset of a
   * connection that was up is not: a peer that closes one live connection may well be alive.
   */
  private refused(gen: number, err: NodeJS.ErrnoException, secured: boolean): void {
    if (gen !== this.generation) return;
    if (err.code === 'ECONNREFUSED' || (err.code === 'ECONNRESET' && !secured)) this.t.report('down', this.id);
  }

  /** Probes connection `gen` (guardSession); one that fails the probe is replaced. */
  private guarded(gen: number, probed: Pingable): { responded(): void; stop(): void } {
    return guardSession(probed, this.t.options, (why) => {
      if (gen !== this.generation) return;
      this.stats.timeouts++;
      this.t.options.log(`raft transport: peer ${this.id} at ${this.url}: ${why}; replacing the connection`);
      this.onBroken();
    });
  }

  /** The pipe is accepted by the peer: frames go to `pipe` from now on. */
  private pipeUp(pipe: Writable, bare: boolean): void {
    this.guard?.responded();
    this.stream = pipe;
    this.connected = true;
    this.stats.connects++;
    this.stats.tlsPipe = bare;
    this.backoff.reset();
    this.flush();
  }

  /** A drained pipe of connection `gen` takes frames again; an error or close breaks it. */
  private watch(pipe: Writable, gen: number, fail: () => void): void {
    pipe.on('drain', () => {
      if (gen !== this.generation) return;
      this.blocked = false;
      this.flush();
    });
    pipe.on('error', fail);
    pipe.on('close', fail);
  }

  private flush(): void {
    this.flushScheduled = false;
    if (this.closed || !this.connected || this.blocked || !this.stream) return;
    const maxBatch = Math.max(1, Math.floor(this.t.options.maxFrameBytes / 4));
    while (this.queue.length > 0) {
      const batch = this.queue.takeBatch(maxBatch);
      const ok = this.stream.write(encodeFrame(batch));
      this.stats.framesSent++;
      this.stats.messagesSent += batch.length;
      this.t.totals.framesSent++;
      this.t.totals.messagesSent += batch.length;
      if (!ok) {
        this.blocked = true;
        return;
      }
    }
  }

  private disconnect(_reconnect: boolean): void {
    this.generation++;
    this.connected = false;
    this.blocked = false;
    this.guard?.stop();
    this.guard = null;
    this.stream = null;
    this.stats.tlsPipe = false;
    this.socket?.destroy();
    this.socket = null;
    this.session?.destroy();
    this.session = null;
    if (this.retryTimer !== null) {
      this.t.options.timers.clearTimeout(this.retryTimer);
      this.retryTimer = null;
    }
  }

  /** The pipe broke or never came up: drop what is queued, tell the core, retry later. */
  private onBroken(): void {
    this.disconnect(true);
    // A peer restarted in between may be of a newer version: try the bare pipe again.
    this.legacy = false;
    const dropped = this.queue.clear();
    this.stats.messagesDropped += dropped;
    this.t.report('unreachable', this.id);
    if (this.closed || this.t.isStopped()) return;
    if (this.refusedAsRemoved) {
      // The peer will refuse again as long as this member has not applied its own removal
      // (and then it has nothing to say to the peer): try again only with a message to send.
      this.refusedAsRemoved = false;
      this.dormant = true;
      return;
    }
    const delay = this.backoff.next();
    this.retryTimer = this.t.options.timers.setTimeout(() => {
      this.retryTimer = null;
      this.connect();
    }, delay);
  }

  /**
   * Uploads one snapshot on its own connection. At most one upload per peer is in flight;
   * a second one fails at once (the leader retries once the first is reported).
   */
  private sendSnapshot(m: Message): void {
    if (this.snapshotAbort) {
      this.stats.snapshotsFailed++;
      this.t.report('snapshot', this.id, 'failure');
      return;
    }
    const { timers, snapshotChunkBytes, snapshotTimeoutMs } = this.t.options;
    const session = http2.connect(this.url, this.t.clientSettings());
    session.on('error', () => undefined);
    const req = session.request(this.t.requestHeaders(SNAPSHOT_PATH, this.id), { endStream: false });
    let settled = false;
    // The upload's response comes only at its end, so the connect deadline is met by the
    // session's TLS handshake here; PINGs then catch a receiver that went silent mid-upload
    // long before the whole-upload timeout would.
    const guard = guardSession(session, this.t.options, (why) => {
      this.stats.timeouts++;
      this.t.options.log(`raft transport: snapshot upload to peer ${this.id}: ${why}`);
      settle('failure');
    });
    session.once('connect', () => guard.responded());
    const settle = (status: SnapshotStatus): void => {
      if (settled) return;
      settled = true;
      this.snapshotAbort = null;
      guard.stop();
      timers.clearTimeout(timer);
      req.close();
      if (status === 'finish') session.close();
      else session.destroy();
      if (status === 'finish') this.stats.snapshotsSent++;
      else this.stats.snapshotsFailed++;
      if (status === 'failure') this.t.report('unreachable', this.id);
      this.t.report('snapshot', this.id, status);
    };
    const timer = timers.setTimeout(() => settle('failure'), snapshotTimeoutMs);
    this.snapshotAbort = () => settle('failure');
    req.on('response', (headers) => {
      const removedAt = headers[':status'] === 410 ? removedAtHeader(headers) : undefined;
      if (removedAt !== undefined && !settled) this.t.reportRemoved(this.id, removedAt);
      settle(headers[':status'] === 200 ? 'finish' : 'failure');
    });
    req.on('error', () => settle('failure'));
    req.on('close', () => settle('failure'));
    session.on('close', () => settle('failure'));
    req.resume();

    // Inline data, or the file a reference names, read as the stream drains (snapshot-ref.ts).
    const chunks = snapshotDataChunks(m.snapshot!.data, snapshotChunkBytes);
    const pump = async (): Promise<void> => {
      if (!req.write(encodeSnapshotHeader(m))) await new Promise((r) => req.once('drain', r));
      for await (const chunk of chunks) {
        if (settled) return;
        if (!req.write(chunk)) await new Promise((r) => req.once('drain', r));
      }
      if (!settled) req.end();
    };
    pump().catch(() => settle('failure'));
  }
}

/** The removal index a 410 answer carries (x-raft-removed-at), or undefined. */
function removedAtHeader(headers: http2.IncomingHttpHeaders): number | undefined {
  const index = Number(headers[H_REMOVED_AT]);
  return Number.isSafeInteger(index) && index > 0 ? index : undefined;
}
