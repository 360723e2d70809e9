// internal/http/context owns what travels with a request through the handler chain (hono's
// typed variables): the parsed request info, the authenticated (and possibly impersonated)
// user, and the warnings to return. Imports: auth/user, request-info.

import type { HttpBindings, Http2Bindings } from '@hono/node-server';
import type { UserInfo } from '../auth/user.js';
import type { RequestInfo } from './request-info.js';

export interface Variables {
  info: RequestInfo;
  user: UserInfo;
  /** `Warning:` header values (already formatted as `299 - "text"`). */
  warnings: string[];
  query: URLSearchParams;
}

export type Env = { Bindings: HttpBindings | Http2Bindings; Variables: Variables };
