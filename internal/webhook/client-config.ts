// internal/webhook/client-config owns where an in-cluster webhook is called: the
// `clientConfig` that admission webhooks, CRD conversion webhooks and APIServices carry (a `url`,
// or a `service` reference with path and port, plus a PEM `caBundle` in base64) turned into the
// HTTPS target `auth/webhook-client` posts to. A service reference is resolved to one of the
// Service's ready endpoints by the server itself, as upstream's `--enable-aggregator-routing`
// resolver does (there is no cluster DNS to ask), and the certificate is checked for the name
// `<service>.<namespace>.svc`, as upstream checks it.
// Imports: auth/webhook-client (the call), cluster-cli/kubeconfig (the target type).

import { postJson, WebhookCallError, type PostOptions } from '../auth/webhook-client.js';
import type { KubeconfigCredentials } from '../cluster-cli/kubeconfig.js';

export interface ServiceReference {
  namespace: string;
  name: string;
  path?: string;
  /** The Service's port (not the target port); 443 when absent. */
  port?: number;
}

export interface WebhookClientConfig {
  url?: string;
  service?: ServiceReference;
  /** base64 of a PEM bundle; absent means the system's roots. */
  caBundle?: string;
}

type Obj = Record<string, unknown>;

/** Reads one object as this replica's cache holds it (or consistently when it does not). */
export type ObjectReader = (resource: 'services' | 'endpoints', namespace: string, name: string) => Promise<Obj | undefined>;

export interface ResolvedEndpoint {
  host: string;
  port: number;
}

/** Raised when a service reference leads nowhere; callers apply their failure policy to it. */
export class ServiceResolutionError extends WebhookCallError {
  override name = 'ServiceResolutionError';
  constructor(message: string) {
    super(message, 'error', false);
  }
}

/**
 * Resolves a Service's port to an address the server can dial: ExternalName services to their
 * external name; others to a ready address of their Endpoints whose port has the Service port's
 * name (chosen at random, so calls spread over the endpoints as upstream's resolver spreads them).
 */
export class EndpointServiceResolver {
  constructor(
    private readonly read: ObjectReader,
    private readonly pick: (n: number) => number = (n) => Math.floor(Math.random() * n),
  ) {}

  async resolve(namespace: string, name: string, port: number): Promise<ResolvedEndpoint> {
    const svc = await this.read('services', namespace, name);
    if (!svc) throw new ServiceResolutionError(`service "${name}" not found`);
    const spec = (svc.spec ?? {}) as { type?: string; externalName?: string; ports?: Array<{ name?: string; port?: number }> };
    if (spec.type === 'ExternalName') {
      if (!spec.externalName) throw new ServiceResolutionError(`service "${namespace}/${name}" has no externalName`);
      return { host: spec.externalName, port };
    }
    const svcPort = (spec.ports ?? []).find((p) => p.port === port);
    if (!svcPort) throw new ServiceResolutionError(`no service port ${port} found for service "${name}"`);
    const portName = svcPort.name ?? '';
    const endpoints = await this.read('endpoints', namespace, name);
    const candidates: ResolvedEndpoint[] = [];
    const subsets = ((endpoints?.subsets ?? []) as Array<{ addresses?: Array<{ ip?: string }>; ports?: Array<{ name?: string; port?: number }> }>);
    for (const subset of subsets) {
      const epPort = (subset.ports ?? []).find((p) => (p.name ?? '') === portName);
      if (!epPort || typeof epPort.port !== 'number') continue;
      for (const a of subset.addresses ?? []) if (a.ip) candidates.push({ host: a.ip, port: epPort.port });
    }
    if (candidates.length === 0) throw new ServiceResolutionError(`no endpoints available for service "${name}"`);
    return candidates[this.pick(candidates.length)]!;
  }
}

function caPemOf(caBundle: string | undefined): string | undefined {
  if (caBundle === undefined || caBundle === '') return undefined;
  const pem = Buffer.from(caBundle, 'base64').toString('utf8');
  if (!pem.includes('-----BEGIN CERTIFICATE-----')) throw new WebhookCallError('unable to load root certificates: no PEM certificate in caBundle', 'error', false);
  return pem;
}

const hostPort = (host: string, port: number): string => (host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`);

/** The HTTPS target a client config names: a URL as given, or the resolved service endpoint. */
export async function resolveTarget(
  config: WebhookClientConfig,
  resolver: EndpointServiceResolver,
  client?: { certPem: string; keyPem: string },
): Promise<KubeconfigCredentials & { url: string }> {
  const caPem = caPemOf(config.caBundle);
  const base = {
    path: '',
    context: '',
    caPem,
    insecureSkipTlsVerify: false,
    certPem: client?.certPem,
    keyPem: client?.keyPem,
    token: undefined,
  };
  if (config.url !== undefined) return { ...base, server: config.url, url: config.url, tlsServerName: undefined };
  const svc = config.service;
  if (!svc) throw new WebhookCallError('webhook clientConfig has neither url nor service', 'error', false);
  const port = svc.port ?? 443;
  const ep = await resolver.resolve(svc.namespace, svc.name, port);
  let path = svc.path ?? '/';
  if (!path.startsWith('/')) path = `/${path}`;
  const server = `https://${hostPort(ep.host, ep.port)}${path}`;
  // What the client names in messages is the service's DNS name, as upstream's errors show it.
  return { ...base, server, url: `https://${svc.name}.${svc.namespace}.svc:${port}${path}`, tlsServerName: `${svc.name}.${svc.namespace}.svc` };
}

/** POSTs JSON to the webhook a client config names. */
export async function callWebhook(
  config: WebhookClientConfig,
  body: string,
  resolver: EndpointServiceResolver,
  options: PostOptions & { client?: { certPem: string; keyPem: string } },
): Promise<unknown> {
  const target = await resolveTarget(config, resolver, options.client);
  return postJson(target, body, options);
}
