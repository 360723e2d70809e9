// internal/metrics/request-labels owns turning a request into upstream's request metric labels:
// the reported verb (the route's verb as upstream's installer names it: GET, LIST, WATCH, POST,
// PUT, PATCH, APPLY, DELETE, DELETECOLLECTION, CONNECT), dry_run, scope and component, and which
// requests are long-running (they hold no in-flight slot and are counted by
// apiserver_longrunning_requests instead). Imports: nothing from the project (metrics types).

import type { RequestLabels } from './metrics.js';

/** What the labels are made of (the fields of http/request-info's RequestInfo, and the request). */
export interface RequestFacts {
  readonly isResourceRequest: boolean;
  /** API verb (get, list, watch, create, …) for resource requests; lower-case method otherwise. */
  readonly verb: string;
  readonly path: string;
  readonly apiGroup: string;
  readonly apiVersion: string;
  readonly namespace: string;
  readonly resource: string;
  readonly subresource: string;
  readonly name: string;
}

/** Sub-resources upstream serves with a connecter (streams to a node agent): verb CONNECT. */
const CONNECT_SUBRESOURCES = new Set(['exec', 'attach', 'portforward', 'proxy']);
/** As upstream's BasicLongRunningRequestCheck: these verbs and sub-resources are long-running. */
const LONG_RUNNING_VERBS = new Set(['watch', 'proxy']);
const LONG_RUNNING_SUBRESOURCES = new Set(['attach', 'exec', 'proxy', 'log', 'portforward']);
/** The health paths upstream instruments; their path is the subresource label. */
const HEALTH_PATH = /^\/(healthz|livez|readyz)(\/|$)/;
/** As upstream's max-in-flight filter: a request is mutating unless it reads. */
const NON_MUTATING = new Set(['get', 'list', 'watch']);

const VERB: Record<string, string> = {
  get: 'GET',
  list: 'LIST',
  watch: 'WATCH',
  create: 'POST',
  update: 'PUT',
  patch: 'PATCH',
  delete: 'DELETE',
  deletecollection: 'DELETECOLLECTION',
};

export function isLongRunning(f: RequestFacts): boolean {
  return f.isResourceRequest && (LONG_RUNNING_VERBS.has(f.verb) || LONG_RUNNING_SUBRESOURCES.has(f.subresource));
}

export function requestKind(f: RequestFacts): 'readOnly' | 'mutating' {
  return NON_MUTATING.has(f.verb) ? 'readOnly' : 'mutating';
}

/** upstream's cleanDryRun: the dryRun values, deduplicated and sorted; "invalid" unless all are "All". */
export function dryRunLabel(query: URLSearchParams): string {
  // An empty value is accepted as no dry run (request-info's check), so it is not a value here.
  if (!query.has('dryRun')) return '';
  const values = query.getAll('dryRun').filter((v) => v !== '');
  if (values.length === 0) return '';
  if (values.some((v) => v !== 'All')) return 'invalid';
  return 'All';
}

/** upstream's CleanScope: a named object (or a create) is "resource". */
export function scopeLabel(f: RequestFacts): string {
  if (!f.isResourceRequest) return '';
  if (f.name || f.verb === 'create') return 'resource';
  return f.namespace ? 'namespace' : 'cluster';
}

export function requestLabels(f: RequestFacts, method: string, contentType: string | undefined, query: URLSearchParams): RequestLabels {
  if (!f.isResourceRequest) {
    const health = HEALTH_PATH.test(f.path);
    return {
      verb: method,
      dry_run: '',
      group: '',
      version: '',
      resource: '',
      subresource: health ? f.path : '',
      scope: '',
      component: '',
    };
  }
  let verb = VERB[f.verb] ?? f.verb.toUpperCase();
  if (CONNECT_SUBRESOURCES.has(f.subresource)) verb = 'CONNECT';
  else if (verb === 'PATCH' && contentType?.startsWith('application/apply-patch')) verb = 'APPLY';
  return {
    verb,
    dry_run: dryRunLabel(query),
    group: f.apiGroup,
    version: f.apiVersion,
    resource: f.resource,
    subresource: f.subresource,
    scope: scopeLabel(f),
    component: 'apiserver',
  };
}
