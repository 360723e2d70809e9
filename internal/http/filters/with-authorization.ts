// internal/http/filters/with-authorization owns the allow/deny decision for every request,
// from the request info and the (possibly impersonated) user. Deny is a 403 Status in
// upstream's wording. The attributes carry the request's parsed field and label selectors for
// list, watch and deletecollection, as upstream's do. Imports: authz, apierrors, selectors, validation (names),
// http/context, http/respond.

import type { Context, MiddlewareHandler, Next } from 'hono';
import { authorize, forbiddenReason, type Attributes, type Decision } from '../../authz/authorizer.js';
import type { AuthorizerSource } from '../../authz/chain.js';
import { errors } from '../../apierrors/status.js';
import { tryParseFieldSelector, tryParseLabelSelector } from '../../selectors/index.js';
import { isPathSegmentName } from '../../validation/name-rules.js';
import type { Env } from '../context.js';
import { errorResponse } from '../respond.js';

/** The verbs whose selectors are part of the question (upstream's request info). */
const SELECTOR_VERBS = new Set(['list', 'watch', 'deletecollection']);

/** The raw `fieldSelector` / `labelSelector` query values of the request. */
export interface SelectorQuery {
  fieldSelector?: string | undefined;
  labelSelector?: string | undefined;
}

export function attributesOf(c: { get(k: 'info'): Env['Variables']['info']; get(k: 'user'): Env['Variables']['user'] }, query: SelectorQuery = {}): Attributes {
  const info = c.get('info');
  const attrs: Attributes = {
    user: c.get('user'),
    verb: info.verb,
    isResourceRequest: info.isResourceRequest,
    path: info.path,
    namespace: info.namespace,
    apiGroup: info.apiGroup,
    apiVersion: info.apiVersion,
    resource: info.resource,
    subresource: info.subresource,
    name: info.name,
  };
  // Upstream parses them here (AuthorizeWithSelectors): one that does not parse, or selects
  // everything, is left out; the handler reports the parse error later as usual.
  if (info.isResourceRequest && SELECTOR_VERBS.has(info.verb)) {
    if (query.fieldSelector) {
      const parsed = tryParseFieldSelector(query.fieldSelector);
      if ('selector' in parsed && parsed.selector.requirements.length) {
        attrs.fieldSelector = parsed.selector.requirements;
        // Upstream's request info: a list or watch of one object by name (how kubelets watch
        // their secrets) is asked about that name, so a resourceNames rule or the Node
        // authorizer can allow it.
        const byName = parsed.selector.requirements.find((r) => r.field === 'metadata.name' && r.operator === '=');
        if (byName && !attrs.name && info.verb !== 'deletecollection' && isPathSegmentName(byName.value).length === 0) attrs.name = byName.value;
      }
    }
    if (query.labelSelector) {
      const parsed = tryParseLabelSelector(query.labelSelector);
      if ('selector' in parsed && parsed.selector.requirements.length) attrs.labelSelector = parsed.selector.requirements;
    }
  }
  return attrs;
}

/** The chain this request decides with: the one impersonation was checked with, or the one in force now. */
export function requestChain(c: { get(k: 'authorizers'): Env['Variables']['authorizers']; set(k: 'authorizers', v: Env['Variables']['authorizers']): void }, source: AuthorizerSource) {
  let chain = c.get('authorizers');
  if (!chain) c.set('authorizers', (chain = source.current()));
  return chain;
}

export function withAuthorization(source: AuthorizerSource): MiddlewareHandler<Env> {
  // Not async: with authorizers that answer synchronously the request goes on without a
  // promise turn here.
  return (c, next) => {
    // The query request info parsed (hono's c.req.query parses the URL again per call); a chain
    // without request info (tests of this filter alone) asks hono.
    const query = c.get('query') as URLSearchParams | undefined;
    const selectors = query
      ? { fieldSelector: query.get('fieldSelector') ?? undefined, labelSelector: query.get('labelSelector') ?? undefined }
      : { fieldSelector: c.req.query('fieldSelector'), labelSelector: c.req.query('labelSelector') };
    const attrs = attributesOf(c, selectors);
    const decision = authorize(requestChain(c, source), attrs);
    return decision instanceof Promise ? decision.then((d) => decided(c, next, attrs, d)) : decided(c, next, attrs, decision);
  };
}

function decided(c: Context<Env>, next: Next, attrs: Attributes, decision: Decision): Promise<Response | void> {
  c.get('audit')?.authorized(decision.decision === 'allow', decision.reason);
  if (decision.decision !== 'allow' && decision.evaluationError) return Promise.resolve(errorResponse(c, errors.internal(decision.evaluationError)));
  if (decision.decision !== 'allow') {
    const reason = forbiddenReason(attrs) + (decision.reason ? `: ${decision.reason}` : '');
    const err = attrs.isResourceRequest
      ? errors.forbidden({ group: attrs.apiGroup, name: attrs.resource + (attrs.subresource ? `/${attrs.subresource}` : '') }, attrs.name || undefined, reason)
      : errors.forbiddenMessage(`forbidden: ${reason}`);
    return Promise.resolve(errorResponse(c, err));
  }
  return next();
}
