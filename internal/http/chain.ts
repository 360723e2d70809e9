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
// The stages run as one hono handler behind a router that matches everything (composeStages):
// hono's own router and compose cost a route match and an async function with its awaits per
// stage per request, for a pipeline that has no routes.
// Imports: hono, http filters and handlers, audit/filter.

import { Hono, type Context, type MiddlewareHandler, type Next } from 'hono';
import type { Router } from 'hono/router';
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

type Stage = MiddlewareHandler<Env>;

/** A router for an app with one route that takes every request: matching costs nothing. */
class EverythingRouter<T> implements Router<T> {
  name = 'everything';
  private only: [[[T, Record<string, string>]]] | undefined;
  add(_method: string, _path: string, handler: T): void {
    if (this.only) throw new Error('the handler chain has exactly one route');
    this.only = [[[handler, {}]]];
  }
  match(): [[T, Record<string, string>][]] {
    if (!this.only) throw new Error('the handler chain has no route');
    return this.only;
  }
}

const DONE: Promise<void> = Promise.resolve();
const noNext: Next = () => DONE;

/**
 * Runs the stages in order with hono's compose semantics (a stage's thrown Error becomes
 * onError's response at that stage, so the stages around it see it as c.res; a returned
 * Response becomes c.res unless the context already has one), but a stage that answers
 * synchronously costs no promise turn of its own.
 */
export function composeStages(stages: readonly Stage[], onError: (err: Error, c: Context<Env>) => Response): (c: Context<Env>) => Promise<Response> {
  const settle = (c: Context<Env>, res: Response | void, isError: boolean): void => {
    if (res && (!c.finalized || isError)) c.res = res;
  };
  const failed = (c: Context<Env>, err: unknown): Promise<void> => {
    if (!(err instanceof Error)) return Promise.reject(err);
    c.error = err;
    settle(c, onError(err, c), true);
    return DONE;
  };
  const run = (c: Context<Env>, i: number): Promise<void> => {
    let out: Response | void | Promise<Response | void>;
    try {
      out = stages[i]!(c, i + 1 < stages.length ? () => run(c, i + 1) : noNext);
    } catch (err) {
      return failed(c, err);
    }
    if (out instanceof Promise) return out.then((res) => settle(c, res, false), (err: unknown) => failed(c, err));
    settle(c, out, false);
    return DONE;
  };
  return (c) =>
    run(c, 0).then(() => {
      if (!c.finalized) throw new Error('the handler chain answered nothing');
      return c.res;
    });
}

export function buildHandlerChain(deps: HttpDeps): Hono<Env> {
  const app = new Hono<Env>({ router: new EverythingRouter() });
  const onError = (err: Error, c: Context<Env>): Response => toErrorResponse(c, err, deps.log);
  app.onError(onError);
  app.notFound((c) => toErrorResponse(c, errors.pathNotFound(), deps.log));
  const stages: Stage[] = [withRequestInfo()];
  if (deps.metrics) stages.push(withMetrics(deps.metrics));
  if (deps.audit) stages.push(withAuditInit(deps.audit));
  stages.push(withAuthentication(deps.authenticators, deps.anonymousAuth, deps.log));
  if (deps.audit) stages.push(withAudit(deps.audit, deps));
  stages.push(withImpersonation(deps.authorizers, deps.naming), withMaxInFlight(deps.inFlight), withAuthorization(deps.authorizers));
  stages.push(async (c) => {
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
  app.all('*', composeStages(stages, onError));
  return app;
}
