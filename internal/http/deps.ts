// internal/http/deps owns the list of what the HTTP layer needs from the rest of the server,
// assembled by internal/server. Handlers take it explicitly; nothing is global.
// Imports: types only.

import type { Context } from 'hono';
import type { Env } from './context.js';
import type { Auditor } from '../audit/auditor.js';
import type { Authenticator } from '../auth/authenticator.js';
import type { ServiceAccountTokenSigner } from '../auth/serviceaccount-token.js';
import type { AuthorizerSource } from '../authz/chain.js';
import type { FeatureGates } from '../config/feature-gates.js';
import type { Discovery } from '../discovery/discovery.js';
import type { HealthChecks } from '../health/health.js';
import type { Logger } from '../log/logger.js';
import type { ServerMetrics } from '../metrics/metrics.js';
import type { Naming } from '../naming/naming.js';
import type { RegistrySet } from '../registry/registry-set.js';
import type { ApiCatalog } from '../schema/catalog.js';
import type { BodyDecoder } from './body.js';
import type { ProtobufSerializer, Serializer } from './serializers.js';

export interface VersionInfo {
  major: string;
  minor: string;
  emulationMajor?: string;
  emulationMinor?: string;
  minCompatibilityMajor?: string;
  minCompatibilityMinor?: string;
  gitVersion: string;
  gitCommit: string;
  gitTreeState: string;
  buildDate: string;
  goVersion: string;
  compiler: string;
  platform: string;
}

export interface OpenApiSource {
  /** Swagger 2.0 document of everything served. */
  v2(): Buffer;
  /** The same document as gnostic's protobuf `Document`, where the source can produce it. */
  v2Protobuf?(): Buffer;
  /** The `/openapi/v3` index. */
  v3Index(): Buffer;
  /** One group-version's OpenAPI 3 document (`api/v1`, `apis/apps/v1`), or undefined. */
  v3(path: string): Buffer | undefined;
}

export interface HttpDeps {
  naming: Naming;
  catalog: ApiCatalog;
  registries: RegistrySet;
  features: FeatureGates;
  authenticators: readonly Authenticator[];
  /** Whether unauthenticated requests become system:anonymous; a function decides per request path (the structured file's anonymous conditions). */
  anonymousAuth: boolean | ((path: string) => boolean);
  /** The authorizer chain in force (swapped whole on a configuration reload); read once per request. */
  authorizers: AuthorizerSource;
  health: HealthChecks;
  discovery: Discovery;
  openapi: OpenApiSource;
  /**
   * On a replica that shares its objects with other API servers: brings its served resources
   * (and other state derived from objects) up to every acknowledged write, before a request for
   * a resource it does not serve is answered 404 and before discovery and OpenAPI are served.
   */
  catchUp?: { wait(): Promise<boolean> };
  /** The aggregation layer: answers requests for group/versions served by extension API servers. */
  aggregator?: { route(c: Context<Env>): Promise<Response | undefined> };
  version: VersionInfo;
  /** Request body decoders by media type. */
  decoders: ReadonlyMap<string, BodyDecoder>;
  /** Optional wire formats: protobuf (built-in kinds) and CBOR (gate CBORServingAndStorage). */
  serializers: { protobuf: ProtobufSerializer | undefined; cbor: Serializer | undefined };
  log: Logger;
  /** The audit log; undefined when auditing is off (no audit filter in the chain then). */
  audit?: Auditor;
  /** Prometheus metrics (optional: tests may leave them out). */
  metrics?: ServerMetrics;
  /** Watches without timeoutSeconds end after a random time in [min, 2·min). */
  minWatchTimeoutSeconds: number;
  bookmarkIntervalMs: number;
  /** Concurrent request limits (429 beyond them). */
  inFlight: { reads: number; mutating: number };
  now(): Date;
  /** Service-account token issuing (the TokenRequest sub-resource); undefined = not served. */
  serviceAccountTokens?: {
    signer: ServiceAccountTokenSigner;
    /** Audiences of a TokenRequest that names none. */
    apiAudiences: readonly string[];
    /** --service-account-max-token-expiration in seconds (0 = no limit). */
    maxExpirationSeconds: number;
    /** --service-account-extend-token-expiration. */
    extendExpiration: boolean;
  };
  /** Paths served outside the API (the cluster's /cluster/v1 endpoints); undefined = not handled. */
  extraRoutes?: (method: string, path: string, query: URLSearchParams, body: () => Promise<string>) => Promise<Response | undefined>;
}
