// internal/authz/authorizer owns the authorization contract: request attributes in, a
// tri-state decision out (allow, deny, no opinion), and the union that asks authorizers in
// order until one decides. No opinion from all of them is a deny.
// Imports: auth/user.

import type { UserInfo } from '../auth/user.js';

export interface Attributes {
  user: UserInfo;
  verb: string;
  isResourceRequest: boolean;
  /** Non-resource requests: the URL path. */
  path: string;
  namespace: string;
  apiGroup: string;
  apiVersion: string;
  resource: string;
  subresource: string;
  name: string;
}

export type Decision = { decision: 'allow' | 'deny' | 'noOpinion'; reason: string };

export interface Authorizer {
  readonly name: string;
  authorize(a: Attributes): Promise<Decision> | Decision;
}

export async function authorize(authorizers: readonly Authorizer[], a: Attributes): Promise<Decision> {
  const reasons: string[] = [];
  for (const z of authorizers) {
    const d = await z.authorize(a);
    if (d.decision !== 'noOpinion') return d;
    if (d.reason) reasons.push(d.reason);
  }
  return { decision: 'deny', reason: reasons.join('; ') };
}

/** Upstream's forbidden message: `User "x" cannot get resource "pods" in API group "" in the namespace "ns"`. */
export function forbiddenReason(a: Attributes): string {
  if (!a.isResourceRequest) return `User "${a.user.name}" cannot ${a.verb} path "${a.path}"`;
  const resource = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  let text = `User "${a.user.name}" cannot ${a.verb} resource "${resource}" in API group "${a.apiGroup}"`;
  text += a.namespace ? ` in the namespace "${a.namespace}"` : ' at the cluster scope';
  return text;
}
