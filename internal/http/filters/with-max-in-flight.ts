// internal/http/filters/with-max-in-flight owns the server's overload protection: at most N
// read and M mutating requests run at once; beyond that a request is refused with 429 and
// Retry-After instead of queueing without bound. Long-running requests (watches) do not
// hold a slot, as upstream. Runs after impersonation and before authorization, as upstream's
// chain places it. Imports: apierrors, http/context, http/respond.

import type { MiddlewareHandler } from 'hono';
import { errors } from '../../apierrors/status.js';
import type { Env } from '../context.js';
import { errorResponse } from '../respond.js';

const MUTATING = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);

export interface InFlightLimits {
  /** 0 = unlimited. */
  readonly reads: number;
  readonly mutating: number;
}

export function withMaxInFlight(limits: InFlightLimits): MiddlewareHandler<Env> {
  let reads = 0;
  let mutating = 0;
  return async (c, next) => {
    const info = c.get('info');
    if (info.verb === 'watch') return next();
    const isMutating = info.isResourceRequest && MUTATING.has(info.verb);
    const limit = isMutating ? limits.mutating : limits.reads;
    const current = isMutating ? mutating : reads;
    if (limit > 0 && current >= limit) {
      return errorResponse(c, errors.tooManyRequests('Too many requests, please try again later.', 1));
    }
    if (isMutating) mutating++;
    else reads++;
    try {
      await next();
    } finally {
      if (isMutating) mutating--;
      else reads--;
    }
  };
}
