// internal/http/filters/with-max-in-flight owns the server's overload protection: at most N
// read and M mutating requests run at once; beyond that a request is refused with 429 and
// Retry-After instead of queueing without bound. Long-running requests (watches) do not
// hold a slot, as upstream. Runs after impersonation and before authorization, as upstream's
// chain places it. As upstream's maxinflight.go, a request is mutating unless its verb is
// get, list or watch (so a POST to a non-resource path is mutating too), and a member of
// system:masters is never refused (it still takes a free slot). As upstream's default
// priority-and-fairness configuration (the exempt "probes" flow schema), GET of /healthz,
// /readyz and /livez is never limited, so an overloaded server still answers its probes.
// Imports: apierrors, auth/user, http/context, http/respond.

import type { MiddlewareHandler } from 'hono';
import { errors } from '../../apierrors/status.js';
import { MASTERS_GROUP } from '../../auth/user.js';
import type { Env } from '../context.js';
import { afterNext } from './after-next.js';
import { errorResponse } from '../respond.js';

const NON_MUTATING = new Set(['get', 'list', 'watch']);
const PROBES = new Set(['/healthz', '/readyz', '/livez']);

export interface InFlightLimits {
  /** 0 = unlimited. */
  readonly reads: number;
  readonly mutating: number;
}

export function withMaxInFlight(limits: InFlightLimits): MiddlewareHandler<Env> {
  let reads = 0;
  let mutating = 0;
  // Not async: the slot is given back when the rest of the chain settles, without an async
  // function and its awaits per request.
  return (c, next) => {
    const info = c.get('info');
    if (info.verb === 'watch') return next();
    if (!info.isResourceRequest && info.verb === 'get' && PROBES.has(info.path)) return next();
    const isMutating = !NON_MUTATING.has(info.verb);
    const limit = isMutating ? limits.mutating : limits.reads;
    const current = isMutating ? mutating : reads;
    if (limit > 0 && current >= limit) {
      if (c.get('user')?.groups.includes(MASTERS_GROUP)) return next();
      return Promise.resolve(errorResponse(c, errors.tooManyRequests('Too many requests, please try again later.', 1)));
    }
    if (isMutating) mutating++;
    else reads++;
    const release = (): void => {
      if (isMutating) mutating--;
      else reads--;
    };
    return afterNext(next, release);
  };
}
