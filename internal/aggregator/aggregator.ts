// internal/aggregator/aggregator owns assembling the aggregation layer of one replica: the
// APIServices as the cache holds them, the client to extension servers (front-proxy
// certificate from --proxy-client-cert-file/--proxy-client-key-file), the proxy route every
// replica serves, the extension documents every replica fetches, discovery and OpenAPI merged
// with them, and the leader-only work (local APIServices on start, the availability controller).
// Imports: aggregator modules, webhook/client-config, controllers (env), registry/keys.

import { readFileSync } from 'node:fs';
import type { Context } from 'hono';
import type { ControllerEnv } from '../controllers/serviceaccount-controllers.js';
import type { Env } from '../http/context.js';
import type { OpenApiSource } from '../http/deps.js';
import { objectKey, resourcePrefix } from '../registry/keys.js';
import type { EndpointServiceResolver } from '../webhook/client-config.js';
import type { Reconciler } from '../controllers/reconciler.js';
import { ApiServices } from './apiservices.js';
import { availabilityController, type CoreReader } from './availability.js';
import { autoregister } from './autoregister.js';
import { AggregatedDiscovery } from './discovery.js';
import { ExtensionClient, type ProxyClientCert } from './extension-client.js';
import { ExtensionDocs } from './extension-docs.js';
import { withExtensionOpenApi } from './openapi.js';
import { proxyToExtension } from './proxy.js';

export interface AggregatorOptions {
  env: ControllerEnv;
  resolver: EndpointServiceResolver;
  proxyClient: { certFile: string | undefined; keyFile: string | undefined };
}

export class Aggregator {
  readonly apis: ApiServices;
  readonly client: ExtensionClient;
  readonly docs: ExtensionDocs;
  readonly discovery: AggregatedDiscovery;
  private readonly availability: Reconciler;
  private leading = false;

  constructor(private readonly options: AggregatorOptions) {
    const { env } = options;
    this.apis = new ApiServices(env.cache, env.catalog, env.naming);
    const { certFile, keyFile } = options.proxyClient;
    // Read once at start (a bad path stops the start): upstream reloads them on change.
    const cert: ProxyClientCert | undefined = certFile && keyFile ? { certPem: readFileSync(certFile, 'utf8'), keyPem: readFileSync(keyFile, 'utf8') } : undefined;
    if (!cert) env.log.info('aggregator: no --proxy-client-cert-file; requests to extension API servers carry no client certificate');
    this.client = new ExtensionClient(options.resolver, () => cert);
    this.docs = new ExtensionDocs(this.apis, this.client, env.cache, env.log);
    this.discovery = new AggregatedDiscovery(env.catalog, env.naming, this.apis, this.docs);
    this.availability = availabilityController(env, this.apis, this.readCore, this.client);
  }

  /** Services and Endpoints as this replica's cache holds them. */
  private readonly readCore: CoreReader = (resource, namespace, name) => {
    const r = this.options.env.catalog.resource('', 'v1', resource);
    if (!r) return undefined;
    const e = this.options.env.cache.resource(resourcePrefix(r)).get(objectKey(r, namespace, name));
    return e && !e.corrupt ? (JSON.parse(e.bytes.toString('utf8')) as Record<string, unknown>) : undefined;
  };

  openapi<T extends OpenApiSource>(base: T): T {
    return withExtensionOpenApi(base, this.docs);
  }

  /** The response for a request to an aggregated group/version, or undefined when it is served here. */
  async route(c: Context<Env>): Promise<Response | undefined> {
    const info = c.get('info');
    if (info.apiPrefix !== 'apis' || !info.apiGroup || !info.apiVersion) return undefined;
    const api = this.apis.get(info.apiGroup, info.apiVersion);
    if (!api?.service) return undefined;
    return proxyToExtension(c, api, this.client, this.options.env.log, () => this.availability.enqueue(api.name));
  }

  /** Every replica: fetching the extensions' documents. */
  start(): void {
    this.docs.start();
  }

  /**
   * The local APIServices as a start-up step (before the server is ready, like the bootstrap
   * objects, so a fresh server is quiet once it serves): created or put back, and those of
   * versions no longer served removed. Throws on a failed write (the caller retries).
   */
  registerLocal(): Promise<void> {
    return autoregister(this.options.env, this.apis, true);
  }

  /** The leader-only part, started and stopped with leadership. */
  readonly leaderController = {
    start: (): void => {
      if (this.leading) return;
      this.leading = true;
      // Custom resource groups come and go with their definitions: their APIServices follow.
      this.unsubscribeCatalog = this.options.env.catalog.onChange(() => this.syncLater());
      this.availability.start();
    },
    stop: (): void => {
      this.leading = false;
      this.unsubscribeCatalog?.();
      this.unsubscribeCatalog = undefined;
      clearTimeout(this.syncTimer);
      this.availability.stop();
    },
  };

  private unsubscribeCatalog: (() => void) | undefined;
  private syncTimer: NodeJS.Timeout | undefined;
  private syncing: Promise<void> = Promise.resolve();

  private syncLater(): void {
    clearTimeout(this.syncTimer);
    this.syncTimer = setTimeout(() => void this.sync(), 100);
    this.syncTimer.unref();
  }

  /** Registration of the custom resource groups, retried until done or leadership is lost; one run at a time. */
  private sync(): Promise<void> {
    const { log } = this.options.env;
    this.syncing = this.syncing.then(async () => {
      for (let attempt = 1; this.leading; attempt++) {
        try {
          await autoregister(this.options.env, this.apis, false);
          return;
        } catch (e) {
          if (attempt % 10 === 1) log.warn('aggregator: registering local APIServices failed; retrying', { error: e instanceof Error ? e.message : String(e) });
          await new Promise((r) => setTimeout(r, 500));
        }
      }
    });
    return this.syncing;
  }

  stop(): void {
    this.leaderController.stop();
    this.docs.stop();
  }
}
