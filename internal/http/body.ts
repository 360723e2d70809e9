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
}

/** Reads the body of a request, from the Node stream when given (the fast path) or the web Request. */
export async function readRequestBody(node: NodeRequestStream | undefined, req: () => Request, limit = MAX_REQUEST_BODY_BYTES): Promise<Buffer> {
  if (!node) return readBody(req(), limit);
  const declared = Number(node.headers['content-length'] ?? NaN);
  if (Number.isFinite(declared) && declared > limit) throw errors.requestEntityTooLarge(limit);
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
