// internal/http/filters/with-authorization owns the allow/deny decision for every request,
// from the request info and the (possibly impersonated) user. Deny is a 403 Status in
// upstream's wording. Imports: authz, apierrors, http/context, http/respond.

import type { MiddlewareHandler } from 'hono';
import { authorize, forbiddenReason, type Attributes, type Authorizer } from '../../authz/authorizer.js';
import { errors } from '../../apierrors/status.js';
import type { Env } from '../context.js';
import { errorResponse } from '../respond.js';

export function attributesOf(c: { get(k: 'info'): Env['Variables']['info']; get(k: 'user'): Env['Variables']['user'] }): Attributes {
  const info = c.get('info');
  return {
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
}

export function withAuthorization(authorizers: readonly Authorizer[]): MiddlewareHandler<Env> {
  return async (c, next) => {
    const attrs = attributesOf(c);
    const decision = await authorize(authorizers, attrs);
    c.get('audit')?.authorized(decision.decision === 'allow', decision.reason);
    if (decision.decision !== 'allow') {
      const reason = forbiddenReason(attrs) + (decision.reason ? `: ${decision.reason}` : '');
      const err = attrs.isResourceRequest
        ? errors.forbidden({ group: attrs.apiGroup, name: attrs.resource + (attrs.subresource ? `/${attrs.subresource}` : '') }, attrs.name || undefined, reason)
        : errors.forbiddenMessage(`forbidden: ${reason}`);
      return errorResponse(c, err);
    }
    await next();
  };
}
