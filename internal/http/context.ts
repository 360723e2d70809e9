// internal/http/context owns what travels with a request through the handler chain (hono's
// typed variables): the parsed request info, the authenticated (and possibly impersonated)
// user, and the warnings to return; and reading the body off the Node stream.
// Imports: auth/user, request-info, body.

import type { HttpBindings, Http2Bindings } from '@hono/node-server';
import type { UserInfo } from '../auth/user.js';
import type { RequestInfo } from './request-info.js';
import type { Context } from 'hono';
import { readRequestBody, type NodeRequestStream } from './body.js';

export interface Variables {
  info: RequestInfo;
  user: UserInfo;
  /** `Warning:` header values (already formatted as `299 - "text"`). */
  warnings: string[];
  query: URLSearchParams;
}

export type Env = { Bindings: HttpBindings | Http2Bindings; Variables: Variables };

/** The request body, read from the Node stream (cheaper than materialising a web Request). */
export function requestBody(c: Context<Env>): Promise<Buffer> {
  const incoming = c.env?.incoming as unknown as NodeRequestStream | undefined;
  return readRequestBody(incoming, () => c.req.raw);
}
