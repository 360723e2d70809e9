// internal/http/body owns reading request bodies: the size limit (3 MiB, 413 beyond it,
// decided from Content-Length when given and enforced while reading otherwise) and decoding
// by Content-Type into a plain object (the codecs report malformed input as 400 with position).
// Imports: apierrors, negotiation.

import { errors } from '../apierrors/status.js';
import { requestMediaType } from './negotiation.js';

export const MAX_REQUEST_BODY_BYTES = 3 * 1024 * 1024;

/** The Node request stream, when the adapter exposes it (reading it directly skips web streams). */
export interface NodeRequestStream extends AsyncIterable<Buffer | string> {
  headers: Record<string, string | string[] | undefined>;
  readableEnded?: boolean;
  destroyed?: boolean;
  errored?: unknown;
  // Listener arguments as Node's own typings declare them (any[]), so a real stream fits.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  on?(event: string, listener: (...args: any[]) => void): unknown;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  off?(event: string, listener: (...args: any[]) => void): unknown;
  destroy?(): unknown;
}

/** Reads the body of a request, from the Node stream when given (the fast path) or the web Request. */
export function readRequestBody(node: NodeRequestStream | undefined, req: () => Request, limit = MAX_REQUEST_BODY_BYTES): Promise<Buffer> {
  if (!node) return readBody(req(), limit);
  const declared = Number(node.headers['content-length'] ?? NaN);
  if (Number.isFinite(declared) && declared > limit) return Promise.reject(errors.requestEntityTooLarge(limit));
  // A stream in its ordinary state is read through its events: an async iterator costs a
  // promise and an end-of-stream watcher per request, which showed in every write's profile.
  // Anything else (already ended, destroyed or errored) goes the iterator's way.
  if (node.on && node.off && node.destroy && !node.readableEnded && !node.destroyed && !node.errored) return readEvents(node as EventedStream, limit);
  return readIterating(node, limit);
}

type EventedStream = NodeRequestStream & Required<Pick<NodeRequestStream, 'on' | 'off' | 'destroy'>>;

/**
 * What iterating the stream gives, from its events: the chunks up to 'end'; the stream's error;
 * a premature-close error when it closes before its end; past the limit a 413, the stream
 * destroyed as leaving the iteration early destroys it.
 */
function readEvents(node: EventedStream, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (): void => {
      node.off('data', onData);
      node.off('end', onEnd);
      node.off('error', onError);
      node.off('close', onClose);
    };
    const onData = (chunk: Buffer | string): void => {
      const b = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      size += b.length;
      if (size > limit) {
        done();
        node.destroy();
        reject(errors.requestEntityTooLarge(limit));
        return;
      }
      chunks.push(b);
    };
    const onEnd = (): void => {
      done();
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    };
    const onError = (e: Error): void => {
      done();
      reject(e);
    };
    const onClose = (): void => {
      done();
      reject(Object.assign(new Error('Premature close'), { code: 'ERR_STREAM_PREMATURE_CLOSE' }));
    };
    node.on('data', onData);
    node.on('end', onEnd);
    node.on('error', onError);
    node.on('close', onClose);
  });
}

async function readIterating(node: NodeRequestStream, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of node) {
    const b = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    size += b.length;
    if (size > limit) throw errors.requestEntityTooLarge(limit);
    chunks.push(b);
  }
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
}

export async function readBody(req: Request, limit = MAX_REQUEST_BODY_BYTES): Promise<Buffer> {
  const declared = Number(req.headers.get('content-length') ?? NaN);
  if (Number.isFinite(declared) && declared > limit) throw errors.requestEntityTooLarge(limit);
  if (!req.body) return Buffer.alloc(0);
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = req.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      throw errors.requestEntityTooLarge(limit);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks, size);
}

/** Reads a body in one media type; `schemaName` is the kind's (protobuf needs it). */
export type BodyDecoder = (bytes: Buffer, schemaName: string | undefined) => { value: unknown; duplicateFields: string[] };

export interface DecodedBody {
  value: Record<string, unknown>;
  duplicateFields: string[];
  mediaType: string;
}

/** Decodes an object body with the decoder registered for its Content-Type (415 when none). */
export function decodeObjectBody(bytes: Buffer, contentType: string | undefined, decoders: ReadonlyMap<string, BodyDecoder>, schemaName?: string): DecodedBody {
  const { mediaType } = requestMediaType(contentType, [...decoders.keys()]);
  const decoder = decoders.get(mediaType);
  if (!decoder) throw errors.unsupportedMediaType([...decoders.keys()]);
  if (bytes.length === 0) throw errors.badRequest('the request body is empty: an object is required');
  const { value, duplicateFields } = decoder(bytes, schemaName);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw errors.badRequest(`the request body must be an object, not ${Array.isArray(value) ? 'an array' : value === null ? 'null' : typeof value}`);
  }
  return { value: value as Record<string, unknown>, duplicateFields, mediaType };
}
