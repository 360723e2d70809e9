// internal/server/h2-end-stream owns one detail of how HTTP/2 responses leave the server: the
// end of the stream rides on the body's last DATA frame. node:http2's compatibility response
// (what the hono adapter writes to) always responds with waitForTrailers, so after the body's
// write has gone out it sends the (empty) trailers as one more frame: a second TLS record and
// socket write for every response, and one more read for the client (kubectl, client-go).
// The API server never sends trailers, so its responses do not wait for them.
// Imports: node only.

import type { Http2ServerRequest, Http2ServerResponse } from 'node:http2';
import type { IncomingMessage, ServerResponse } from 'node:http';

type Listener = (req: IncomingMessage | Http2ServerRequest, res: ServerResponse | Http2ServerResponse) => unknown;
type RespondOptions = Parameters<Http2ServerResponse['stream']['respond']>[1];

/**
 * Makes an HTTP/2 response end with its last DATA frame instead of a trailers frame of its own.
 * Trailers added with `addTrailers` are not sent (nothing here adds any). HTTP/1.1 responses
 * are left alone.
 */
export function endStreamWithData(res: ServerResponse | Http2ServerResponse): void {
  if (!('stream' in res) || !res.stream) return;
  const stream = res.stream;
  const respond = stream.respond;
  stream.respond = function (this: typeof stream, headers, options?: RespondOptions) {
    return respond.call(this, headers, options?.waitForTrailers ? { ...options, waitForTrailers: false } : options);
  };
}

/** `listener` with every HTTP/2 response ending on its last DATA frame (endStreamWithData). */
export function withEndStreamOnData(listener: Listener): Listener {
  return (req, res) => {
    endStreamWithData(res);
    return listener(req, res);
  };
}
