// readRequestBody reads a Node stream through its events, or through its async iterator when
// the stream is not in its ordinary state; both ways must give the same outcome.
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { StatusError } from '../apierrors/status.js';
import { readRequestBody, type NodeRequestStream } from './body.js';

type Script = (s: PassThrough) => void;

function stream(headers: Record<string, string> = {}): PassThrough & NodeRequestStream {
  return Object.assign(new PassThrough(), { headers });
}

/** The same stream seen only as an async iterable (the iterator path). */
const iterableOnly = (s: PassThrough & NodeRequestStream): NodeRequestStream => ({ headers: s.headers, [Symbol.asyncIterator]: () => s[Symbol.asyncIterator]() });

async function outcome(read: (s: PassThrough & NodeRequestStream) => Promise<Buffer>, script: Script, headers?: Record<string, string>): Promise<{ body?: string; error?: string; destroyed: boolean }> {
  const s = stream(headers);
  const p = read(s);
  script(s);
  try {
    const b = await p;
    return { body: b.toString('utf8'), destroyed: s.destroyed };
  } catch (e) {
    return { error: e instanceof StatusError ? `${e.code} ${e.message}` : ((e as { code?: string }).code ?? String(e)), destroyed: s.destroyed };
  }
}

const noRequest = (): Request => {
  throw new Error('the web Request is not read when the Node stream is given');
};

describe('readRequestBody', () => {
  it.each<[string, Script, Record<string, string>?]>([
    ['one chunk', (s) => s.end('{"a":1}')],
    ['several chunks, strings and buffers', (s) => {
      s.write('{"a":');
      s.write(Buffer.from('[1,2'));
      setImmediate(() => s.end(']}'));
    }],
    ['an empty body', (s) => s.end()],
    ['past the limit while reading', (s) => {
      s.write('x'.repeat(8));
      s.write('x'.repeat(8));
      s.end();
    }],
    ['past the limit by Content-Length', (s) => s.end('x'), { 'content-length': '100' }],
    ['a stream error', (s) => {
      s.write('x');
      setImmediate(() => s.destroy(new Error('boom')));
    }],
    ['closed before its end', (s) => {
      s.write('x');
      setImmediate(() => s.destroy());
    }],
  ])('%s: events and iterator agree', async (_name, script, headers) => {
    const viaEvents = await outcome((s) => readRequestBody(s, noRequest, 10), script, headers);
    const viaIterator = await outcome((s) => readRequestBody(iterableOnly(s), noRequest, 10), script, headers);
    expect(viaEvents).toStrictEqual(viaIterator);
  });

  it('gives the chunks in order and a 413 past the limit', async () => {
    expect((await outcome((s) => readRequestBody(s, noRequest, 10), (s) => s.end('hello'))).body).toBe('hello');
    const over = await outcome((s) => readRequestBody(s, noRequest, 10), (s) => s.end('x'.repeat(11)));
    expect(over).toStrictEqual({ error: expect.stringMatching(/^413 /), destroyed: true });
  });

  it('reads an already ended stream as empty', async () => {
    const s = stream();
    s.end();
    s.resume();
    await new Promise((r) => s.once('end', r));
    expect((await readRequestBody(s, noRequest)).length).toBe(0);
  });
});
