// internal/admission/policy/policy-source owns what the validating and mutating admission
// policy plugins share about reading their world from this replica's watch cache: parsed and
// CEL-converted cache entries (each version once), policies compiled once per generation,
// namespaces (labels for matching, `namespaceObject`), matchPolicy Equivalent resources (and the
// object converted to the version a policy matched), the
// params a binding's paramRef names (name or selector, namespace, parameterNotFoundAction) and
// the `request` variable, one param's activation, and a policy's refusal as a Status. Every replica decides alike: no state beyond memos of immutable entries.
// Imports: admission (types), apierrors, authz (types, cel-authorizer), registry/keys, admission/version-conversion (type), schema/catalog (types), validation/kinds/common
// (selectors), watchcache (types), policy/compile (toCel), policy/match (types).

import type { AdmissionRequest } from '../admission.js';
import { StatusError, type Status } from '../../apierrors/status.js';
import { objectKey, resourcePrefix, namespacePrefix } from '../../registry/keys.js';
import type { ApiCatalog, ResourceInfo } from '../../schema/catalog.js';
import type { CacheEntry } from '../../watchcache/types.js';
import type { WatchCache } from '../../watchcache/watch-cache.js';
import { selectorMatches } from '../../validation/kinds/common.js';
import type { AdmissionConverter } from '../version-conversion.js';
import type { Attributes, Decision } from '../../authz/authorizer.js';
import { authorizerFor } from '../../authz/cel-authorizer.js';
import { bindVariables, toCel, type Activation, type Compiled, type CompiledPolicy } from './compile.js';
import type { MatchEnv } from './match.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

export const ADMISSION_UPSTREAM_GROUP = 'admissionregistration.k8s.io';

type ResourceKey = Pick<ResourceInfo, 'upstreamGroup' | 'resource' | 'namespaced'>;

/** Parsed cache entries: each version of an object is parsed once (entries are immutable). */
const parsed = new WeakMap<CacheEntry, Obj>();
export const parseEntry = (e: CacheEntry): Obj => {
  let o = parsed.get(e);
  if (!o) {
    o = JSON.parse(e.bytes.toString('utf8')) as Obj;
    parsed.set(e, o);
  }
  return o;
};
const asCel = new WeakMap<CacheEntry, unknown>();
export const celOfEntry = (e: CacheEntry): unknown => {
  let v = asCel.get(e);
  if (v === undefined) {
    v = toCel(parseEntry(e));
    asCel.set(e, v);
  }
  return v;
};

/**
 * The request's object and oldObject as the version a policy matched (matchPolicy Equivalent),
 * converted by `convert` (a custom resource's conversion webhook included). Rejects when a
 * conversion fails.
 */
export async function objectsAs(req: AdmissionRequest, matched: ResourceInfo, convert: AdmissionConverter): Promise<{ resource: ResourceInfo; object: Obj | undefined; oldObject: Obj | undefined }> {
  if (matched === req.resource) return { resource: req.resource, object: req.object, oldObject: req.oldObject };
  // A Scale (another kind a sub-resource writes) is not the resource's object: it stays as it is.
  const as = (o: Obj | undefined) => (o === undefined || o.apiVersion !== req.resource.apiVersion ? o : convert(structuredClone(o), req.resource, matched));
  const [object, oldObject] = await Promise.all([as(req.object), as(req.oldObject)]);
  return { resource: matched, object, oldObject };
}

/** The params' kind a policy declares. */
export interface ParamKind {
  apiVersion: string;
  kind: string;
}

export class PolicySource<P> {
  private readonly compiled = new Map<string, { key: string; policy: P }>();
  private readonly policyPrefix: string;
  private readonly bindingPrefix: string;
  private readonly namespaces: ResourceKey = { upstreamGroup: '', resource: 'namespaces', namespaced: false };
  private equivalentsMemo = new WeakMap<ResourceInfo, readonly ResourceInfo[]>();
  readonly matchEnv: MatchEnv;

  constructor(
    private readonly cache: WatchCache,
    private readonly catalog: ApiCatalog,
    private readonly policies: ResourceKey,
    bindings: ResourceKey,
    private readonly compile: (policy: Obj) => P,
  ) {
    this.policyPrefix = resourcePrefix(policies);
    this.bindingPrefix = resourcePrefix(bindings);
    catalog.onChange(() => {
      this.equivalentsMemo = new WeakMap();
    });
    this.matchEnv = {
      namespaceLabels: (name) => {
        const ns = this.namespaceEntry(name);
        if (!ns) return undefined;
        const meta = parseEntry(ns).metadata;
        return (isObj(meta) && isObj(meta.labels) ? meta.labels : {}) as Record<string, string>;
      },
      equivalents: (r) => this.equivalents(r),
    };
  }

  namespaceEntry(name: string): CacheEntry | undefined {
    const e = this.cache.resource(resourcePrefix(this.namespaces)).get(objectKey(this.namespaces, '', name));
    return e && !e.corrupt ? e : undefined;
  }

  /** `namespaceObject` for a request: its namespace as CEL sees it, or null. */
  namespaceObject(req: AdmissionRequest): unknown {
    if (!req.resource.namespaced || !req.namespace) return null;
    const ns = this.namespaceEntry(req.namespace);
    return ns ? celOfEntry(ns) : null;
  }

  private equivalents(r: ResourceInfo): readonly ResourceInfo[] {
    let eq = this.equivalentsMemo.get(r);
    if (!eq) {
      eq = [...this.catalog.all()].filter((o) => o.storageResource === r.storageResource && (o.group !== r.group || o.version !== r.version));
      this.equivalentsMemo.set(r, eq);
    }
    return eq;
  }

  /** The stored policy object named `name` (parsed), if any. */
  policyObject(name: string): Obj | undefined {
    const e = this.cache.resource(this.policyPrefix).get(objectKey(this.policies, '', name));
    return e && !e.corrupt ? parseEntry(e) : undefined;
  }

  /** The bindings, parsed, in the cache's order (corrupt ones left out). */
  bindings(): Obj[] {
    return this.cache.resource(this.bindingPrefix).list().entries.filter((e) => !e.corrupt).map(parseEntry);
  }

  /** The compiled policy named `name`, compiled again only when its generation (or identity) changes. */
  policy(name: string): P | undefined {
    const policies = this.cache.resource(this.policyPrefix);
    const entry = policies.get(objectKey(this.policies, '', name));
    if (!entry || entry.corrupt) {
      this.compiled.delete(name);
      return undefined;
    }
    // Deleted policies no binding names any more: dropped once the compiled outnumber the stored.
    if (this.compiled.size > policies.size) {
      for (const known of this.compiled.keys()) if (!policies.get(objectKey(this.policies, '', known))) this.compiled.delete(known);
    }
    const obj = parseEntry(entry);
    const meta = isObj(obj.metadata) ? obj.metadata : {};
    const key = `${str(meta.uid)}/${typeof meta.generation === 'number' ? meta.generation : `rv${entry.revision}`}`;
    const known = this.compiled.get(name);
    if (known && known.key === key) return known.policy;
    const policy = this.compile(obj);
    this.compiled.set(name, { key, policy });
    return policy;
  }

  /** The params a binding names: [null] without paramKind; [] when none found and Allow; throws a configuration error. */
  params(policyName: string, paramKind: ParamKind | undefined, bindingSpec: Obj, req: AdmissionRequest): unknown[] {
    if (!paramKind) return [null];
    const ref = isObj(bindingSpec.paramRef) ? bindingSpec.paramRef : undefined;
    if (!ref) throw new Error(`policy ${policyName} has paramKind but binding has no paramRef`);
    const { apiVersion, kind } = paramKind;
    const slash = apiVersion.lastIndexOf('/');
    const [group, version] = slash < 0 ? ['', apiVersion] : [apiVersion.slice(0, slash), apiVersion.slice(slash + 1)];
    const resource = this.catalog.resourceForKind(group, version, kind);
    if (!resource) throw new Error(`failed to find resource referenced by paramKind: '${group ? `${group}/` : ''}${version}, Kind=${kind}'`);
    let namespace = '';
    if (resource.namespaced) {
      namespace = str(ref.namespace) || req.namespace;
      if (!namespace) throw new Error('cannot use namespaced paramRef in policy binding that matches cluster-scoped resources');
    }
    const cached = this.cache.resource(resourcePrefix(resource));
    let found: CacheEntry[];
    if (str(ref.name)) {
      const e = cached.get(objectKey(resource, namespace, str(ref.name)));
      found = e ? [e] : [];
    } else {
      const selector = isObj(ref.selector) ? ref.selector : {};
      const listed = resource.namespaced ? cached.list({ keyPrefix: namespacePrefix(resource, namespace) }) : cached.list();
      found = listed.entries.filter((e) => selectorMatches(selector, e.labels));
    }
    found = found.filter((e) => !e.corrupt);
    if (found.length === 0) {
      if (ref.parameterNotFoundAction === 'Deny') throw new Error('no params found for policy binding with `Deny` parameterNotFoundAction');
      return [];
    }
    return found.map(celOfEntry);
  }
}

const REASON_CODES: Record<string, number> = { Unauthorized: 401, Forbidden: 403, RequestEntityTooLarge: 413, Invalid: 422 };

/** A policy's refusal in upstream's Status shape: `<resource> "<name>" is forbidden: <text>`, code from `reason` (Invalid by default). */
export function policyDenial(req: AdmissionRequest, text: string, reason = 'Invalid'): StatusError {
  const q = req.resource.group ? `${req.resource.resource}.${req.resource.group}` : req.resource.resource;
  const message = req.name ? `${q} "${req.name}" is forbidden: ${text}` : `${q} is forbidden: ${text}`;
  const r = REASON_CODES[reason] ? reason : 'Invalid';
  const status: Status = {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    reason: r as Status['reason'],
    details: { ...(req.name ? { name: req.name } : {}), ...(req.resource.group ? { group: req.resource.group } : {}), kind: req.resource.resource, causes: [{ message: text }] },
    code: REASON_CODES[r]!,
  };
  return new StatusError(status);
}

/**
 * One param's activation: the request's variables, `params`, `namespaceObject`, `authorizer`
 * (only when an expression of the policy uses it) and the policy's lazily bound `variables`;
 * a promise only when a variable asks the authorizer (bindVariables).
 */
export function policyActivation(
  policy: CompiledPolicy,
  expressions: readonly Compiled[],
  base: { object: unknown; oldObject: unknown; request: Obj },
  param: unknown,
  namespaceObject: unknown,
  req: AdmissionRequest,
  authorize: (a: Attributes) => Promise<Decision> | Decision,
): Activation | Promise<Activation> {
  // Members listed, not `...base`: V8 gives an object spread followed by more members a slow
  // path (about 2.5 µs here, against tens of ns), and this runs per request a policy applies to.
  const activation = {
    object: base.object,
    oldObject: base.oldObject,
    request: base.request,
    params: param,
    namespaceObject,
    authorizer: expressions.some((c) => c.async)
      ? authorizerFor({ authorize, user: req.user, requestResource: { group: req.resource.group, resource: req.resource.resource, subresource: req.subresource, namespace: req.namespace, name: req.name } })
      : null,
    variables: {},
  } as Activation;
  const variables = bindVariables(policy, activation);
  if (variables instanceof Promise) {
    return variables.then((v) => {
      activation.variables = v;
      return activation;
    });
  }
  activation.variables = variables;
  return activation;
}

/** The `request` variable: upstream's admission request fields. */
export function requestVariable(req: AdmissionRequest, matched: ResourceInfo = req.resource): Obj {
  const kindOf = (r: ResourceInfo) => ({ group: r.group, version: r.version, kind: r.kind });
  const resourceOf = (r: ResourceInfo) => ({ group: r.group, version: r.version, resource: r.resource });
  return {
    // What the policy matched (another version under matchPolicy Equivalent), then what was asked.
    kind: kindOf(matched),
    resource: resourceOf(matched),
    subResource: req.subresource,
    requestKind: kindOf(req.resource),
    requestResource: resourceOf(req.resource),
    requestSubResource: req.subresource,
    name: req.name,
    namespace: req.namespace,
    operation: req.operation,
    userInfo: {
      username: req.user.name,
      uid: req.user.uid ?? '',
      groups: [...req.user.groups],
      extra: Object.fromEntries(Object.entries(req.user.extra ?? {}).map(([k, v]) => [k, [...v]])),
    },
    dryRun: req.dryRun,
  };
}
