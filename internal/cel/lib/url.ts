// internal/cel/lib/url owns upstream's Kubernetes `url` library: url(), isURL and the URL
// accessors. Parsing follows Go's url.ParseRequestURI, as upstream's does: an absolute URL
// (`scheme://host/path?query`) or an absolute path (`/path`), no fragment handling, no
// normalisation (the host keeps its case, an empty path stays empty). Imports: lib/common.

import { CelLibraryError, type Environment, fn } from './common.js';

export class CelURL {
  constructor(
    readonly raw: string,
    readonly scheme: string,
    readonly host: string,
    readonly path: string,
    readonly rawQuery: string,
  ) {}
}

const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*$/;

export function parseURL(raw: string): CelURL | string {
  if (raw === '') return 'empty url';
  if (/[\x00-\x1f\x7f]/.test(raw)) return 'net/url: invalid control character in URL';
  let rest = raw;
  let scheme = '';
  const colon = rest.indexOf(':');
  const slash = rest.indexOf('/');
  if (colon > 0 && (slash < 0 || colon < slash)) {
    scheme = rest.slice(0, colon);
    if (!SCHEME.test(scheme)) return 'first path segment in URL cannot contain colon';
    rest = rest.slice(colon + 1);
  } else if (colon === 0) {
    return 'missing protocol scheme';
  }
  let rawQuery = '';
  const q = rest.indexOf('?');
  if (q >= 0) {
    rawQuery = rest.slice(q + 1);
    rest = rest.slice(0, q);
  }
  if (!rest.startsWith('/')) return 'invalid URI for request';
  let host = '';
  if (scheme !== '' && rest.startsWith('//')) {
    const end = rest.indexOf('/', 2);
    const authority = end < 0 ? rest.slice(2) : rest.slice(2, end);
    rest = end < 0 ? '' : rest.slice(end);
    const at = authority.lastIndexOf('@');
    host = at >= 0 ? authority.slice(at + 1) : authority;
    const err = checkHost(host);
    if (err) return err;
  }
  let path: string;
  try {
    path = decodeURIComponent(rest);
  } catch {
    return `invalid URL escape`;
  }
  return new CelURL(raw, scheme, host, path, rawQuery);
}

function checkHost(host: string): string | undefined {
  if (host.startsWith('[')) {
    const close = host.indexOf(']');
    if (close < 0) return 'missing \']\' in host';
    const port = host.slice(close + 1);
    if (port !== '' && !/^:\d*$/.test(port)) return `invalid port "${port}" after host`;
    return undefined;
  }
  const colon = host.lastIndexOf(':');
  if (colon >= 0 && !/^\d*$/.test(host.slice(colon + 1))) return `invalid port "${host.slice(colon)}" after host`;
  if (/[^A-Za-z0-9._~!$&'()*+,;=:%-]/.test(host)) return `invalid character in host name`;
  return undefined;
}

function hostname(u: CelURL): string {
  if (u.host.startsWith('[')) return u.host.slice(1, u.host.indexOf(']'));
  const colon = u.host.lastIndexOf(':');
  return colon >= 0 ? u.host.slice(0, colon) : u.host;
}

function port(u: CelURL): string {
  const from = u.host.startsWith('[') ? u.host.indexOf(']') : 0;
  const colon = u.host.indexOf(':', from);
  return colon >= 0 ? u.host.slice(colon + 1) : '';
}

/** Go's EscapedPath: the path with what a path may not hold percent-encoded. */
function escapedPath(path: string): string {
  return path.replace(/[^A-Za-z0-9\-._~!$&'()*+,;=:@/]/gu, (c) => encodeURIComponent(c));
}

function query(raw: string): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const part of raw.split('&')) {
    if (part === '' || part.includes(';')) continue;
    const eq = part.indexOf('=');
    let k: string;
    let v: string;
    try {
      k = decodeURIComponent((eq < 0 ? part : part.slice(0, eq)).replace(/\+/g, ' '));
      v = eq < 0 ? '' : decodeURIComponent(part.slice(eq + 1).replace(/\+/g, ' '));
    } catch {
      continue;
    }
    (out[k] ??= []).push(v);
  }
  return out;
}

export function registerURL(env: Environment): void {
  env.registerType('kubernetes.URL', CelURL);
  fn(env, 'url(string): kubernetes.URL', (s: string) => {
    const u = parseURL(s);
    if (typeof u === 'string') throw new CelLibraryError(`URL parse error during conversion from string: parse ${JSON.stringify(s)}: ${u}`);
    return u;
  });
  fn(env, 'isURL(string): bool', (s: string) => typeof parseURL(s) !== 'string');
  fn(env, 'kubernetes.URL.getScheme(): string', (u: CelURL) => u.scheme);
  fn(env, 'kubernetes.URL.getHost(): string', (u: CelURL) => u.host);
  fn(env, 'kubernetes.URL.getHostname(): string', (u: CelURL) => hostname(u));
  fn(env, 'kubernetes.URL.getPort(): string', (u: CelURL) => port(u));
  fn(env, 'kubernetes.URL.getEscapedPath(): string', (u: CelURL) => escapedPath(u.path));
  fn(env, 'kubernetes.URL.getQuery(): map<string, list<string>>', (u: CelURL) => query(u.rawQuery));
  fn(env, 'string(kubernetes.URL): string', (u: CelURL) => u.raw, 'string');
  env.registerOperator('kubernetes.URL == kubernetes.URL', (a: CelURL, b: CelURL) => a.raw === b.raw);
}
