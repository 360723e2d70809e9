// internal/admission/policy/param-authorization owns upstream's paramKind authorization (its
// policy and binding registry strategies), shared by the validating and the mutating policy
// plugins: whoever creates a policy with a paramKind, or changes it, must be allowed to `get`
// every object of that kind; whoever creates or changes a binding's paramRef must be allowed to
// `get` what it names. A system:masters user may do anything. Refused as an Invalid
// `spec.paramKind` / `spec.paramRef` with upstream's words.
// Imports: admission (types), apierrors, auth/user, authz (types), schema/catalog (types).

import type { AdmissionRequest } from '../admission.js';
import { errors } from '../../apierrors/status.js';
import { fieldErrors } from '../../apierrors/field-errors.js';
import { MASTERS_GROUP } from '../../auth/user.js';
import type { Attributes, Decision } from '../../authz/authorizer.js';
import type { ApiCatalog } from '../../schema/catalog.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

export interface ParamAuthorizationDeps {
  catalog: ApiCatalog;
  authorize(attrs: Attributes): Promise<Decision> | Decision;
  /** The stored policy a binding names (for its paramKind). */
  policyObject(name: string): Obj | undefined;
}

/**
 * Checks a write of the policy resource `policies` or the binding resource `bindings` (plural
 * names in `upstreamGroup`); any other request passes.
 */
export async function authorizeParamReferences(req: AdmissionRequest, kinds: { upstreamGroup: string; policies: string; bindings: string }, deps: ParamAuthorizationDeps): Promise<void> {
  if (req.resource.upstreamGroup !== kinds.upstreamGroup || req.subresource !== '' || !req.object) return;
  if (req.operation !== 'CREATE' && req.operation !== 'UPDATE') return;
  const isPolicy = req.resource.resource === kinds.policies;
  if (!isPolicy && req.resource.resource !== kinds.bindings) return;
  if (req.user.groups.includes(MASTERS_GROUP)) return;
  const spec = isObj(req.object.spec) ? req.object.spec : {};
  const oldSpec = isObj(req.oldObject?.spec) ? req.oldObject.spec : {};
  const field = isPolicy ? 'paramKind' : 'paramRef';
  if (!isObj(spec[field])) return;
  if (req.operation === 'UPDATE' && JSON.stringify(spec[field]) === JSON.stringify(oldSpec[field])) return;
  let paramKind: Obj | undefined = isPolicy ? (spec.paramKind as Obj) : undefined;
  if (!isPolicy) {
    const pspec = deps.policyObject(str(spec.policyName))?.spec;
    paramKind = isObj(pspec) && isObj(pspec.paramKind) ? pspec.paramKind : undefined;
  }
  // Unknown parts are asked for as `*`: permission on every group, version or resource.
  let [group, version, resource] = ['*', '*', '*'];
  if (paramKind) {
    const apiVersion = str(paramKind.apiVersion);
    const parts = apiVersion.split('/');
    if (apiVersion && parts.length <= 2) {
      [group, version] = parts.length === 1 ? ['', parts[0]!] : [parts[0]!, parts[1]!];
      const r = deps.catalog.resourceForKind(group, version, str(paramKind.kind));
      if (r) resource = r.resource;
    }
  }
  const ref = isPolicy ? {} : (spec.paramRef as Obj);
  const decision = await deps.authorize({
    user: req.user,
    verb: 'get',
    isResourceRequest: true,
    path: '',
    namespace: isPolicy ? '*' : str(ref.namespace),
    apiGroup: group,
    apiVersion: version,
    resource,
    subresource: '',
    name: isPolicy ? '*' : str(ref.name),
  });
  if (decision.decision === 'allow') return;
  const kind = paramKind ? `kind=${str(paramKind.kind)}, apiVersion=${str(paramKind.apiVersion)}` : 'kind=*, apiVersion=*';
  throw errors.invalid({ group: req.resource.group, name: req.resource.kind }, req.name, [
    fieldErrors.forbidden(`spec.${field}`, `user ${req.user.name} must have "get" permission on all objects of the referenced paramKind (${kind})`),
  ]);
}
