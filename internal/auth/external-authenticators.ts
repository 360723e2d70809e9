// internal/auth/external-authenticators owns building, from the server's flags, the
// authenticators that trust something outside the cluster: the authenticating proxy
// (--requestheader-*), JWT issuers (--authentication-config or --oidc-*) and the token review
// webhook. The server puts them in the chain in upstream's order: the request header first,
// JWT and webhook as token authenticators in the bearer-token union after the cluster's own
// token authenticators. Bad files are start-up errors.
// Imports: config/flags (types), config/reloadable-files (types), naming, log, the authenticators.

import { readFileSync } from 'node:fs';
import type { Registry } from 'prom-client';
import type { ServerConfig } from '../config/flags.js';
import type { ReloadableFiles } from '../config/reloadable-files.js';
import type { Logger } from '../log/logger.js';
import type { Naming } from '../naming/naming.js';
import type { Authenticator } from './authenticator.js';
import type { TokenAuthenticator } from './token-authenticator.js';
import { AuthenticationConfigError, jwtFromOidcFlags } from './jwt/authentication-config.js';
import { AuthenticationConfigController } from './jwt/authentication-config-controller.js';
import { RequestHeaderAuthenticator } from './request-header-authenticator.js';
import { WebhookTokenAuthenticator } from './webhook-token-authenticator.js';

export interface ExternalAuthenticators {
  requestHeader: Authenticator | undefined;
  jwt: TokenAuthenticator;
  webhook: TokenAuthenticator | undefined;
  controller: AuthenticationConfigController;
}

export interface ExternalDeps {
  naming: Naming;
  files: ReloadableFiles;
  log: Logger;
  registry: Registry | undefined;
  /** Issuers of service-account tokens (a JWT issuer must differ). */
  serviceAccountIssuers?: readonly string[];
  /** --api-audiences (never empty): what a webhook answer naming no audiences is valid for. */
  apiAudiences: readonly string[];
}

const readText = (flag: string, path: string): string => {
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    throw new Error(`cannot read --${flag} ${path}: ${(e as Error).message}`);
  }
};

export function buildExternalAuthenticators(config: ServerConfig, deps: ExternalDeps): ExternalAuthenticators {
  const rh = config.requestHeader;
  const requestHeader =
    rh.usernameHeaders.length > 0 && rh.clientCaFile
      ? new RequestHeaderAuthenticator({
          usernameHeaders: rh.usernameHeaders,
          uidHeaders: rh.uidHeaders,
          groupHeaders: rh.groupHeaders,
          extraHeaderPrefixes: rh.extraHeadersPrefix,
          clientCaPem: readText('requestheader-client-ca-file', rh.clientCaFile),
          allowedNames: rh.allowedNames,
        })
      : undefined;

  let controller: AuthenticationConfigController;
  try {
    const oidc = config.oidc.issuerUrl
      ? jwtFromOidcFlags(config.oidc, config.oidc.caFile ? readText('oidc-ca-file', config.oidc.caFile) : undefined)
      : undefined;
    controller = new AuthenticationConfigController({
      files: config.authenticationConfig ? deps.files : undefined,
      oidc,
      load: {
        group: deps.naming.group('apiserver.config.k8s.io'),
        serviceAccountIssuers: deps.serviceAccountIssuers ?? [],
        egressSelectorGate: config.featureGates.enabled('StructuredAuthenticationConfigurationEgressSelector'),
      },
      anonymousFlagSet: config.setFlags.has('anonymous-auth'),
      log: deps.log,
      registry: deps.registry,
      apiserverId: `clusterd-${config.name}`,
    });
  } catch (e) {
    if (e instanceof AuthenticationConfigError) {
      const source = config.authenticationConfig ? `--authentication-config ${config.authenticationConfig}` : 'the --oidc-* flags';
      throw new Error(`invalid ${source}: ${e.problems.join('; ')}`);
    }
    throw e;
  }

  const webhook = config.tokenWebhook.configFile
    ? new WebhookTokenAuthenticator({
        configFile: config.tokenWebhook.configFile,
        version: config.tokenWebhook.version,
        group: deps.naming.group('authentication.k8s.io'),
        cacheTtlMs: config.tokenWebhook.cacheTtlMs,
        implicitAudiences: deps.apiAudiences,
      })
    : undefined;
  return { requestHeader, jwt: controller.authenticator, webhook, controller };
}
