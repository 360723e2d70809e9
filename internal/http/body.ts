// internal/http/body owns reading request bodies: the size limit (3 MiB, 413 beyond it,
// decided from Content-Length when given and enforced while reading otherwise) and decoding
// by Content-Type into a plain object. Malformed input is a 400 naming where it broke.
// Imports: apierrors, negotiation.

import { errors } from '../apierrors/status.js';
import { requestMediaType } from './negotiation.js';

export const MAX_REQUEST_BODY_BYTES = 3 * 1024 * 1024;

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

/** Line and column (1-based) of a byte offset, for error messages. */
export function lineColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let last = -1;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      last = i;
    }
  }
  return { line, column: offset - last };
}

export type BodyDecoder = (bytes: Buffer) => { value: unknown; duplicateFields: string[] };

/** The built-in JSON decoder: a 400 with line and column for malformed input. */
export const decodeJsonBody: BodyDecoder = (bytes) => {
  const text = bytes.toString('utf8');
  try {
    return { value: JSON.parse(text), duplicateFields: [] };
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    const m = /position (\d+)/.exec(message);
    const where = m ? lineColumn(text, Number(m[1])) : undefined;
    throw errors.badRequest(
      `json parse error${where ? ` at line ${where.line}, column ${where.column}` : ''}: ${message.replace(/ in JSON at position \d+.*$/, '')}`,
    );
  }
};

export interface DecodedBody {
  value: Record<string, unknown>;
  duplicateFields: string[];
  mediaType: string;
}

/** Decodes an object body with the decoder registered for its Content-Type (415 when none). */
export function decodeObjectBody(bytes: Buffer, contentType: string | undefined, decoders: ReadonlyMap<string, BodyDecoder>): DecodedBody {
  const { mediaType } = requestMediaType(contentType);
  const decoder = decoders.get(mediaType);
  if (!decoder) throw errors.unsupportedMediaType(mediaType, [...decoders.keys()]);
  if (bytes.length === 0) throw errors.badRequest('the request body is empty: an object is required');
  const { value, duplicateFields } = decoder(bytes);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw errors.badRequest(`the request body must be an object, not ${Array.isArray(value) ? 'an array' : value === null ? 'null' : typeof value}`);
  }
  return { value: value as Record<string, unknown>, duplicateFields, mediaType };
}
