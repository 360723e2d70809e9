// internal/http/request-info owns reading what a request is about from its method, path and
// query, before anything else runs: resource or non-resource, the API verb, group, version,
// namespace, resource, sub-resource and name. Authorization and routing both use it, so it
// is parsed once. The shapes follow spec §4.1 and §4.2.
// Imports: codec/query-params.

import { queryBool } from '../codec/query-params.js';

export interface RequestInfo {
  isResourceRequest: boolean;
  path: string;
  /** API verb for resource requests (get, list, watch, create, update, patch, delete, deletecollection); lower-case HTTP method otherwise. */
  verb: string;
  apiPrefix: '' | 'api' | 'apis';
  apiGroup: string;
  apiVersion: string;
  namespace: string;
  resource: string;
  subresource: string;
  name: string;
  /** Path segments after the API prefix, for discovery routing. */
  parts: string[];
}

const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);

const METHOD_VERB: Record<string, string> = { POST: 'create', PUT: 'update', PATCH: 'patch', GET: 'get', HEAD: 'get', DELETE: 'delete' };

/** `watch` turns a GET into a watch unless it reads as false (`queryBool`). */
export function isWatchQuery(query: URLSearchParams): boolean {
  return queryBool(query.get('watch')) === true;
}

export function parseRequestInfo(method: string, rawPath: string, query: URLSearchParams): RequestInfo {
  const q = rawPath.indexOf('?');
  const path = q < 0 ? rawPath : rawPath.slice(0, q);
  const info: RequestInfo = {
    isResourceRequest: false,
    path,
    verb: method.toLowerCase(),
    apiPrefix: '',
    apiGroup: '',
    apiVersion: '',
    namespace: '',
    resource: '',
    subresource: '',
    name: '',
    parts: [],
  };
  // Every request parses its path: one pass, decoding only segments that need it.
  const segments: string[] = [];
  for (const s of path.split('/')) if (s.length > 0) segments.push(s.includes('%') ? safeDecode(s) : s);
  const prefix = segments[0];
  if (prefix !== 'api' && prefix !== 'apis') return info;
  info.apiPrefix = prefix;
  let parts = segments.slice(1);
  if (prefix === 'apis') {
    if (parts.length < 2) {
      // /apis or /apis/<group>: discovery, not a resource.
      info.apiGroup = parts[0] ?? '';
      return info;
    }
    info.apiGroup = parts[0]!;
    parts = parts.slice(1);
  } else if (parts.length < 1) {
    return info;
  }
  info.apiVersion = parts[0]!;
  parts = parts.slice(1);
  info.parts = parts;
  if (parts.length === 0) return info; // /api/v1 or /apis/<g>/<v>: discovery

  info.isResourceRequest = true;
  let verb = METHOD_VERB[method.toUpperCase()] ?? method.toLowerCase();
  // Deprecated `/watch/` path prefix.
  if (parts[0] === 'watch') {
    verb = 'watch';
    parts = parts.slice(1);
  }
  if (parts[0] === 'namespaces' && parts.length > 1) {
    // /namespaces/<name>[/status|/finalize] is the namespace object itself (its namespace is its
    // name); anything else below it is a namespaced resource.
    info.namespace = parts[1]!;
    if (parts.length > 2 && !NAMESPACE_SUBRESOURCES.has(parts[2]!)) parts = parts.slice(2);
  }
  info.resource = parts[0] ?? '';
  if (parts.length >= 2) info.name = parts[1]!;
  if (parts.length >= 3) info.subresource = parts[2]!;
  // Paths below a sub-resource (proxy/…) keep the rest in `parts`.

  if (!info.name && verb === 'get') verb = 'list';
  if (!info.name && verb === 'delete') verb = 'deletecollection';
  if ((verb === 'list' || verb === 'get') && isWatchQuery(query)) verb = 'watch';
  // A watch on an item is a list+watch restricted by metadata.name upstream; the verb stays watch.
  info.verb = verb;
  return info;
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
