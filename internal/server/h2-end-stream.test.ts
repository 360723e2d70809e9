// Tests endStreamWithData on a real node:http2 server (cleartext, so that the frames the server
// sends can be read on the way): which DATA frame carries END_STREAM.
import { connect as h2connect, createServer, type Http2Server, type Http2ServerRequest, type Http2ServerResponse } from 'node:http2';
import * as net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { endStreamWithData } from './h2-end-stream.js';

const DATA = 0x0;
const HEADERS = 0x1;
const END_STREAM = 0x1;

interface Frame {
  type: number;
  flags: number;
  stream: number;
  length: number;
}

/** A TCP proxy in front of `port` that parses the frames the server sends (its side of h2c). */
async function frameRecordingProxy(port: number): Promise<{ port: number; frames: Frame[]; close: () => void }> {
  const frames: Frame[] = [];
  const sockets = new Set<net.Socket>();
  const proxy = net.createServer((client) => {
    const upstream = net.connect(port, '127.0.0.1');
    sockets.add(client).add(upstream);
    let pending = Buffer.alloc(0);
    client.pipe(upstream);
    upstream.on('data', (chunk: Buffer) => {
      client.write(chunk);
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 9) {
        const length = pending.readUIntBE(0, 3);
        if (pending.length < 9 + length) break;
        frames.push({ length, type: pending[3]!, flags: pending[4]!, stream: pending.readUInt32BE(5) & 0x7fffffff });
        pending = pending.subarray(9 + length);
      }
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  return {
    port: (proxy.address() as net.AddressInfo).port,
    frames,
    close: () => {
      for (const s of sockets) s.destroy();
      proxy.close();
    },
  };
}

describe('endStreamWithData', () => {
  let server: Http2Server | undefined;
  let closeProxy: (() => void) | undefined;
  afterEach(() => {
    closeProxy?.();
    server?.close();
  });

  /** Serves one compat response the way the hono adapter writes it; returns the server's frames for it. */
  async function respond(patched: boolean, handler: (res: Http2ServerResponse) => void): Promise<{ body: string; frames: Frame[] }> {
    server = createServer((req: Http2ServerRequest, res: Http2ServerResponse) => {
      if (patched) endStreamWithData(res);
      req.resume();
      req.on('end', () => handler(res));
    });
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
    const proxy = await frameRecordingProxy((server.address() as net.AddressInfo).port);
    closeProxy = proxy.close;
    const session = h2connect(`http://127.0.0.1:${proxy.port}`);
    try {
      const body = await new Promise<string>((resolve, reject) => {
        const r = session.request({ ':method': 'GET', ':path': '/' });
        let text = '';
        r.setEncoding('utf8');
        r.on('data', (d: string) => (text += d));
        r.on('end', () => resolve(text));
        r.on('error', reject);
        r.end();
      });
      return { body, frames: proxy.frames.filter((f) => f.stream === 1) };
    } finally {
      session.close();
    }
  }

  const writeHeadEnd = (res: Http2ServerResponse) => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': '11' });
    res.end(Buffer.from('{"a":"xyz"}'));
  };

  it('ends the stream on the DATA frame that carries the body (writeHead, end(body))', async () => {
    const { body, frames } = await respond(true, writeHeadEnd);
    expect(body).toBe('{"a":"xyz"}');
    expect(frames.map((f) => [f.type, f.length, f.flags & END_STREAM])).toEqual([
      [HEADERS, frames[0]!.length, 0],
      [DATA, 11, END_STREAM],
    ]);
  });

  it('without it, node:http2 sends the end of the stream as a frame of its own', async () => {
    const { frames } = await respond(false, writeHeadEnd);
    expect(frames.map((f) => [f.type, f.length, f.flags & END_STREAM])).toEqual([
      [HEADERS, frames[0]!.length, 0],
      [DATA, 11, 0],
      [DATA, 0, END_STREAM],
    ]);
  });

  it('a streamed body (writes, then end) still arrives whole and ends the stream', async () => {
    const { body, frames } = await respond(true, (res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"type":"ADDED"}\n');
      setTimeout(() => {
        res.write('{"type":"MODIFIED"}\n');
        res.end();
      }, 20);
    });
    expect(body).toBe('{"type":"ADDED"}\n{"type":"MODIFIED"}\n');
    expect(frames.filter((f) => f.flags & END_STREAM)).toHaveLength(1);
    expect(frames.at(-1)!.flags & END_STREAM).toBe(END_STREAM);
  });

  it('an empty body ends the stream with the headers or one empty frame', async () => {
    const { body, frames } = await respond(true, (res) => {
      res.writeHead(204);
      res.end();
    });
    expect(body).toBe('');
    expect(frames.filter((f) => f.flags & END_STREAM)).toHaveLength(1);
    expect(frames.filter((f) => f.type === DATA && f.length > 0)).toHaveLength(0);
  });
});
