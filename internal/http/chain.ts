// internal/http/chain owns the order of the request pipeline, in one place (spec and
// DESIGN.md: request info → authenticate → impersonate → authorize → handler, where the
// handler decodes, admits and calls the registry). Why this order:
//   1. request info first: every later stage (metrics, authorization, routing) reads it; metrics
//      right after, so refused requests are counted too;
//   2. authentication before anything that depends on who asks; audit (when on) around it as
//      upstream: the audit ID before it (failed authentication is audited too), the policy
//      decision and RequestReceived right after it, for the authenticated user;
//   3. impersonation after authentication (the real user must be allowed to impersonate) and
//      before authorization (the impersonated user is what gets authorized);
//   4. the in-flight limit after identity is known (so it could weigh users later) and
//      before authorization, as upstream orders it;
//   5. authorization before any body is read or any store is touched;
//   6. handlers last; every error anywhere becomes a Status in one place (onError).
// Imports: hono, http filters and handlers, audit/filter.

import { Hono } from 'hono';
import type { Env } from './context.js';
import type { HttpDeps } from './deps.js';
import { withAudit, withAuditInit } from '../audit/filter.js';
import { withAuthentication } from './filters/with-authentication.js';
import { withAuthorization } from './filters/with-authorization.js';
import { withImpersonation } from './filters/with-impersonation.js';
import { withMaxInFlight } from './filters/with-max-in-flight.js';
import { withRequestInfo } from './filters/with-request-info.js';
import { withMetrics } from './filters/with-metrics.js';
import { handleNonResource } from './handlers/non-resource.js';
import { handleResource } from './handlers/resources.js';
import { errors } from '../apierrors/status.js';
import { toErrorResponse } from './respond.js';

export function buildHandlerChain(deps: HttpDeps): Hono<Env> {
  const app = new Hono<Env>();
  app.onError((err, c) => toErrorResponse(c, err, deps.log));
  app.notFound((c) => toErrorResponse(c, errors.pathNotFound(), deps.log));
  app.use('*', withRequestInfo());
  if (deps.metrics) app.use('*', withMetrics(deps.metrics));
  if (deps.audit) app.use('*', withAuditInit(deps.audit));
  app.use('*', withAuthentication(deps.authenticators, deps.anonymousAuth, deps.log));
  if (deps.audit) app.use('*', withAudit(deps.audit, deps));
  app.use('*', withImpersonation(deps.authorizers, deps.naming));
  app.use('*', withMaxInFlight(deps.inFlight));
  app.use('*', withAuthorization(deps.authorizers));
  app.all('*', async (c) => {
    if (deps.aggregator) {
      // Authenticated and authorized here first; an extension's group/version is then proxied.
      const proxied = await deps.aggregator.route(c);
      if (proxied) return proxied;
    }
    if (c.get('info').isResourceRequest) return handleResource(c, deps);
    if (deps.extraRoutes) {
      const url = new URL(c.req.url);
      const extra = await deps.extraRoutes(c.req.method, url.pathname, url.searchParams, () => c.req.text());
      if (extra) return extra;
    }
    const res = await handleNonResource(c, deps);
    if (res) return res;
    throw errors.pathNotFound();
  });
  return app;
}
