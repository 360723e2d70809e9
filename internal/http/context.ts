// internal/http/context owns what travels with a request through the handler chain (hono's
// typed variables): the parsed request info, the authenticated (and possibly impersonated)
// user, the warnings to return and the request's audit record; and reading the body off the
// Node stream (once: an audited request keeps it for its audit event).
// Imports: auth/user, request-info, body, audit/filter (type).

import type { HttpBindings, Http2Bindings } from '@hono/node-server';
import type { UserInfo } from '../auth/user.js';
import type { Authorizer } from '../authz/authorizer.js';
import type { RequestAudit } from '../audit/filter.js';
import type { RequestInfo } from './request-info.js';
import type { Context } from 'hono';
import { readRequestBody, type NodeRequestStream } from './body.js';

export interface Variables {
  info: RequestInfo;
  user: UserInfo;
  /** `Warning:` header values (already formatted as `299 - "text"`). */
  warnings: string[];
  query: URLSearchParams;
  /** Set while the request is audited (internal/audit). */
  audit: RequestAudit | undefined;
  /** The authorizer chain this request decides with: read once, so a reload never splits a request. */
  authorizers: readonly Authorizer[] | undefined;
}

export type Env = { Bindings: HttpBindings | Http2Bindings; Variables: Variables };

/** The request body, read from the Node stream (cheaper than materialising a web Request). */
export function requestBody(c: Context<Env>): Promise<Buffer> {
  const incoming = c.env?.incoming as unknown as NodeRequestStream | undefined;
  const audit = c.get('audit');
  if (audit) return (audit.requestBody ??= readRequestBody(incoming, () => c.req.raw));
  return readRequestBody(incoming, () => c.req.raw);
}
