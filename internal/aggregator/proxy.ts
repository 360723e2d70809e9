// internal/aggregator/proxy owns forwarding one request for an aggregated group/version to its
// extension API server, after this server authenticated and authorized it: the caller's
// identity goes as X-Remote-User / X-Remote-Group / X-Remote-Extra-<key> headers with the
// front-proxy client certificate (what the extension's request-header authentication trusts),
// credentials and hop-by-hop headers are dropped, and the response body is passed through as
// it arrives (watches stream). An extension that cannot be reached is a 503 Status.
// Imports: http (context, respond), apierrors, auth/user, aggregator (apiservices, client).

import type { Context } from 'hono';
import type { IncomingHttpHeaders, IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import { Readable } from 'node:stream';
import { errors } from '../apierrors/status.js';
import type { UserInfo } from '../auth/user.js';
import { requestBody, type Env } from '../http/context.js';
import { errorResponse } from '../http/respond.js';
import type { Logger } from '../log/logger.js';
import { ServiceResolutionError } from '../webhook/client-config.js';
import type { ApiServiceView } from './apiservices.js';
import type { ExtensionClient } from './extension-client.js';
import { isUpgradeRequest, proxyUpgrade } from './upgrade.js';

/** Hop-by-hop headers (RFC 9110 §7.6.1) and HTTP/2's connection-specific ones: never forwarded. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'http2-settings', 'host']);

/** Request headers that must not reach the extension: credentials, and identity claims only we may make. */
function dropped(name: string): boolean {
  return HOP_BY_HOP.has(name) || name.startsWith(':') || name === 'authorization' || name.startsWith('impersonate-') || name.startsWith('x-remote-');
}

/** The identity headers, as upstream's proxy sets them (extra keys URL-escaped). */
export function identityHeaders(user: UserInfo): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = { 'X-Remote-User': user.name };
  if (user.groups.length) out['X-Remote-Group'] = [...user.groups];
  for (const [key, values] of Object.entries(user.extra ?? {})) out[`X-Remote-Extra-${encodeURIComponent(key)}`] = [...values];
  return out;
}

/** The headers the extension receives for an incoming request. */
export function forwardedHeaders(incoming: IncomingHttpHeaders | Headers, user: UserInfo): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  const entries: Array<[string, string | string[] | undefined]> = incoming instanceof Headers ? [...incoming.entries()] : Object.entries(incoming);
  for (const [rawName, value] of entries) {
    const name = rawName.toLowerCase();
    if (value === undefined || dropped(name)) continue;
    out[name] = value;
  }
  return { ...out, ...identityHeaders(user) };
}

/** Upstream's words for an APIService whose extension is not available. */
export const SERVICE_UNAVAILABLE = 'service unavailable';

/**
 * Forwards the request; `unreachable` hears of an extension that could not be reached (the
 * availability controller looks again at once rather than at its next 30 s check).
 */
export async function proxyToExtension(c: Context<Env>, api: ApiServiceView, client: ExtensionClient, log: Logger, unreachable: () => void = () => {}): Promise<Response> {
  if (api.available !== 'True') return errorResponse(c, errors.serviceUnavailable(SERVICE_UNAVAILABLE));
  const url = new URL(c.req.url);
  const method = c.req.method;
  const body = method === 'GET' || method === 'HEAD' || method === 'OPTIONS' ? undefined : await requestBody(c);
  const headers = forwardedHeaders(c.req.raw.headers, c.get('user'));
  if (body !== undefined) headers['content-length'] = String(body.length);
  let res: IncomingMessage | undefined;
  try {
    if (isUpgradeRequest(c)) {
      res = await proxyUpgrade(c, api, client, headers as Record<string, string | string[]>);
      // Joined to the extension: the bytes that follow are the upgraded protocol's, written
      // straight to the socket; this response goes nowhere (audit and metrics record a 200).
      if (!res) return new Response(null, { status: 200 });
    } else {
      const started = await client.start(api, { method, path: `${url.pathname}${url.search}`, headers });
      started.request.end(body);
      res = await started.response;
    }
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    log.info('aggregator: extension unreachable', { apiService: api.name, error: message });
    unreachable();
    if (e instanceof ServiceResolutionError) return errorResponse(c, errors.serviceUnavailable(SERVICE_UNAVAILABLE));
    return errorResponse(c, errors.serviceUnavailable(`error trying to reach service: ${message}`));
  }
  const out = new Headers();
  for (const [name, value] of Object.entries(res.headers)) {
    if (value === undefined || HOP_BY_HOP.has(name)) continue;
    for (const v of Array.isArray(value) ? value : [value]) out.append(name, v);
  }
  // The client going away ends the request to the extension (a watch must not outlive it).
  const upstream = res;
  c.env.outgoing.once('close', () => upstream.destroy());
  const status = res.statusCode ?? 502;
  const nullBody = method === 'HEAD' || status === 204 || status === 304;
  if (nullBody) res.resume();
  return new Response(nullBody ? null : (Readable.toWeb(res) as ReadableStream<Uint8Array>), { status, headers: out });
}
