// internal/http/handlers/resource-request owns resolving a resource request against the
// catalog before any handler runs: unknown group-version or resource (404), unknown
// sub-resource (404), a verb the resource does not support (405), a path of the wrong scope;
// and the request-scoped values every verb handler shares (registry, namespace, dry run,
// field validation, field manager). Imports: apierrors, registry, schema, http.

import type { Context } from 'hono';
import { errors, type StatusError } from '../../apierrors/status.js';
import { FIELD_MANAGER_MAX_LENGTH, managerFromUserAgent } from '../../fieldmanager/index.js';
import type { GenericRegistry, RequestContext } from '../../registry/generic-registry.js';
import type { ResourceInfo, SubresourceInfo } from '../../schema/catalog.js';
import type { Env } from '../context.js';
import type { HttpDeps } from '../deps.js';
import type { RequestInfo } from '../request-info.js';

export type FieldValidation = 'Ignore' | 'Warn' | 'Strict';

export interface ResourceRequest {
  info: RequestInfo;
  resource: ResourceInfo;
  subresource: SubresourceInfo | undefined;
  registry: GenericRegistry;
  /** Namespace the object lives in ('' for cluster-scoped and all-namespace requests). */
  namespace: string;
  ctx: RequestContext;
  query: URLSearchParams;
  fieldValidation: FieldValidation;
}

const WRITE_VERBS = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);

function parseDryRun(query: URLSearchParams): boolean {
  const values = query.getAll('dryRun');
  for (const v of values) if (v !== 'All' && v !== '') throw errors.badRequest(`Invalid dryRun value: "${v}": supported values: "All"`);
  return values.includes('All');
}

function parseFieldValidation(query: URLSearchParams): FieldValidation {
  const v = query.get('fieldValidation');
  if (v === null || v === '') return 'Warn';
  if (v === 'Ignore' || v === 'Warn' || v === 'Strict') return v;
  // Upstream also accepts the lower-case spellings.
  const lower = { ignore: 'Ignore', warn: 'Warn', strict: 'Strict' }[v.toLowerCase()] as FieldValidation | undefined;
  if (lower) return lower;
  throw errors.badRequest(`fieldValidation: Unsupported value: "${v}": supported values: "Ignore", "Warn", "Strict"`);
}

/** The writer's field manager: `fieldManager` (validated as upstream), else the User-Agent's program. */
function fieldManagerOf(query: URLSearchParams, userAgent: string | undefined): string {
  const given = query.get('fieldManager');
  if (given !== null && given !== '') {
    if (given.length > FIELD_MANAGER_MAX_LENGTH) throw errors.badRequest(`fieldManager: Too long: may not be more than ${FIELD_MANAGER_MAX_LENGTH} bytes`);
    if (!/^[\x20-\x7e]+$/.test(given)) throw errors.badRequest(`fieldManager: Invalid value: ${JSON.stringify(given)}: must only contain printable characters`);
    return given;
  }
  return managerFromUserAgent(userAgent);
}

/** Path segments that cannot be object or namespace names (upstream's path segment rule). */
function checkPathSegment(kind: 'name' | 'namespace', value: string): void {
  if (!value) return;
  if (value === '.' || value === '..') throw errors.badRequest(`${kind} may not be '${value}'`);
  for (const bad of ['/', '%']) if (value.includes(bad)) throw errors.badRequest(`${kind} may not contain '${bad}'`);
}

/**
 * The 404 for a group this server does not serve. Under --naming=cluster a stock client asks
 * for an upstream group name (`kubectl auth can-i` posts to authorization.k8s.io): when the
 * served spelling of that group exists, the message says where it is and that
 * --naming=kubernetes serves the upstream name.
 */
export function groupNotFound(deps: Pick<HttpDeps, 'naming' | 'catalog'>, group: string): StatusError {
  const { naming, catalog } = deps;
  if (naming.mode === 'cluster' && group && naming.upstreamGroup(group) === undefined) {
    const served = naming.group(group);
    if (served !== group && catalog.group(served)) {
      return errors.pathNotFound(`this server runs with --naming=cluster and serves ${group} as ${served}; --naming=kubernetes serves ${group}`);
    }
  }
  return errors.pathNotFound();
}

export function resolveResourceRequest(c: Context<Env>, deps: HttpDeps): ResourceRequest {
  const info = c.get('info');
  checkPathSegment('name', info.name);
  checkPathSegment('namespace', info.namespace);
  const query = c.get('query');
  const resource = deps.catalog.resource(info.apiGroup, info.apiVersion, info.resource);
  if (!resource) throw groupNotFound(deps, info.apiGroup);
  const registry = deps.registries.for(resource);
  let subresource: SubresourceInfo | undefined;
  if (info.subresource) {
    subresource = resource.subresources.get(info.subresource);
    if (!subresource) throw errors.pathNotFound();
  }
  const isNamespaceObject = resource.group === '' && resource.resource === 'namespaces';
  const namespace = isNamespaceObject ? '' : info.namespace;
  if (!resource.namespaced && namespace && !isNamespaceObject) throw errors.pathNotFound();
  // Cluster-scope paths of namespaced resources serve only list, watch (all namespaces) and
  // deletecollection of everything is not offered: upstream answers 405 there.
  const verbs = subresource ? subresource.verbs : resource.verbs;
  // A collection takes list, watch, create and deletecollection; an object the rest.
  const onCollection = !info.name;
  const wrongShape = onCollection
    ? ['get', 'update', 'patch', 'delete'].includes(info.verb)
    : ['list', 'deletecollection'].includes(info.verb) || (info.verb === 'create' && !subresource);
  if (wrongShape) {
    throw errors.methodNotSupported({ group: resource.group, name: resource.resource }, c.req.method);
  }
  let verb = info.verb;
  if (verb === 'watch' && info.name) verb = 'watch';
  const allowed = verbs.includes(verb) || (verb === 'watch' && verbs.includes('watch'));
  if (!allowed) throw errors.methodNotSupported({ group: resource.group, name: resource.resource }, c.req.method);
  if (resource.namespaced && !namespace && !['list', 'watch'].includes(verb)) {
    throw errors.methodNotSupported({ group: resource.group, name: resource.resource }, c.req.method);
  }
  if (!registry) throw errors.methodNotSupported({ group: resource.group, name: resource.resource }, c.req.method);
  const isWrite = WRITE_VERBS.has(verb);
  const audited = isWrite ? c.get('audit') : undefined;
  const ctx: RequestContext = {
    user: c.get('user'),
    manager: isWrite ? fieldManagerOf(query, c.req.header('user-agent')) : '',
    namespace,
    dryRun: isWrite ? parseDryRun(query) : false,
    warnings: c.get('warnings'),
    ...(audited ? { annotate: (key: string, value: string) => audited.annotate(key, value) } : {}),
  };
  return {
    info,
    resource,
    subresource,
    registry,
    namespace,
    ctx,
    query,
    fieldValidation: isWrite && verb !== 'delete' && verb !== 'deletecollection' ? parseFieldValidation(query) : 'Warn',
  };
}
