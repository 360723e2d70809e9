// internal/aggregator/extension-client owns connecting to an extension API server: the
// APIService's Service resolved to an endpoint by the shared resolver (as upstream's
// --enable-aggregator-routing), TLS verified with the APIService's caBundle for the name
// `<service>.<namespace>.svc` unless insecureSkipTLSVerify, and the front-proxy client
// certificate presented. Used by the proxy, the availability check and discovery fetching.
// Imports: webhook/client-config (resolver), aggregator/apiservices.

import { request as httpsRequest, type RequestOptions } from 'node:https';
import type { ClientRequest, IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import type { EndpointServiceResolver } from '../webhook/client-config.js';
import type { ApiServiceView } from './apiservices.js';

export interface ProxyClientCert {
  certPem: string;
  keyPem: string;
}

export interface ExtensionRequest {
  method: string;
  /** Path and query. */
  path: string;
  headers: OutgoingHttpHeaders;
  /** Milliseconds without any response (the proxy passes none: watches last). */
  timeoutMs?: number;
}

export class ExtensionClient {
  constructor(
    private readonly resolver: EndpointServiceResolver,
    private readonly clientCert: () => ProxyClientCert | undefined,
  ) {}

  /** The request options for an APIService with a service reference; throws ServiceResolutionError. */
  async options(api: ApiServiceView, req: ExtensionRequest): Promise<RequestOptions> {
    const svc = api.service!;
    const ep = await this.resolver.resolve(svc.namespace, svc.name, svc.port);
    const ca = api.caBundle ? Buffer.from(api.caBundle, 'base64').toString('utf8') : undefined;
    const cert = this.clientCert();
    return {
      host: ep.host,
      port: ep.port,
      method: req.method,
      path: req.path,
      headers: req.headers,
      servername: `${svc.name}.${svc.namespace}.svc`,
      rejectUnauthorized: !api.insecureSkipTLSVerify,
      ...(ca ? { ca } : {}),
      ...(cert ? { cert: cert.certPem, key: cert.keyPem } : {}),
      // One connection per request: the caBundle and client certificate may change between
      // requests, and a pooled socket would keep the old ones.
      agent: false,
    };
  }

  /** Starts a request; the caller writes the body (if any) and ends it. */
  async start(api: ApiServiceView, req: ExtensionRequest): Promise<{ request: ClientRequest; response: Promise<IncomingMessage> }> {
    const options = await this.options(api, req);
    const request = httpsRequest(options);
    const response = new Promise<IncomingMessage>((resolve, reject) => {
      request.once('response', resolve);
      request.once('error', reject);
      if (req.timeoutMs) {
        request.setTimeout(req.timeoutMs, () => request.destroy(new Error(`timeout after ${req.timeoutMs}ms`)));
      }
    });
    response.catch(() => {});
    return { request, response };
  }

  /** A GET whose body is read whole (discovery documents, availability checks). */
  async get(api: ApiServiceView, path: string, accept = 'application/json', timeoutMs = 5000): Promise<{ status: number; body: Buffer; contentType: string }> {
    const { request, response } = await this.start(api, { method: 'GET', path, headers: { accept }, timeoutMs });
    request.end();
    const res = await response;
    const chunks: Buffer[] = [];
    for await (const chunk of res) chunks.push(chunk as Buffer);
    return { status: res.statusCode ?? 0, body: Buffer.concat(chunks), contentType: String(res.headers['content-type'] ?? '') };
  }
}
