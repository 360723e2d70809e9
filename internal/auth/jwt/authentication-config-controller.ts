// internal/auth/jwt/authentication-config-controller owns the JWT authenticators and anonymous
// policy in force: built at start from --authentication-config (or the --oidc-* flags), and
// rebuilt when the file changes. A valid new file takes effect for the next request; an invalid
// one is logged and the previous configuration kept. Each automatic reload is counted in
// upstream's metrics (`status` success or failure, `apiserver_id_hash`).
// Imports: authenticator, authentication-config, jwt-authenticator, config/reloadable-files
// (the file watcher), log.

import type { Registry } from 'prom-client';
import type { LoadedFiles, ReloadableFiles } from '../../config/reloadable-files.js';
import { ReloadMetrics } from '../../config/reload-metrics.js';
import type { Logger } from '../../log/logger.js';
import type { TokenAuthenticator } from '../token-authenticator.js';
import type { UserInfo } from '../user.js';
import { AuthenticationConfigError, parseAuthenticationConfig, type AnonymousConfig, type JwtAuthenticatorConfig, type LoadOptions } from './authentication-config.js';
import { IssuerAuthenticator, JwtAuthenticator } from './jwt-authenticator.js';

export const AUTHENTICATION_ROLE = 'authentication';

export interface ControllerOptions {
  /** The watched configuration files (role `authentication`), when --authentication-config is set. */
  files: ReloadableFiles | undefined;
  /** The authenticator the --oidc-* flags describe (exclusive with the file). */
  oidc: JwtAuthenticatorConfig | undefined;
  load: LoadOptions;
  /** --anonymous-auth was given explicitly (then the file must not have `anonymous`). */
  anonymousFlagSet: boolean;
  log: Logger;
  registry: Registry | undefined;
  /** Identity of this API server, hashed into `apiserver_id_hash`. */
  apiserverId: string;
  minRefreshIntervalMs?: number;
}

interface InForce {
  jwt: JwtAuthenticator;
  anonymous: AnonymousConfig | undefined;
  content: Buffer | undefined;
}

export class AuthenticationConfigController {
  private current: InForce;
  private readonly reloadMetrics: ReloadMetrics | undefined;
  private unsubscribe: (() => void) | undefined;

  /** The token authenticator to put in the bearer-token union: it always asks the configuration in force. */
  readonly authenticator: TokenAuthenticator = {
    name: 'jwt',
    authenticateToken: (token: string): Promise<UserInfo | null> => this.current.jwt.authenticateToken(token),
  };

  /** Throws AuthenticationConfigError when the configuration at start is not valid. */
  constructor(private readonly options: ControllerOptions) {
    if (options.registry) this.reloadMetrics = new ReloadMetrics(options.registry, 'authentication', options.apiserverId);
    const content = options.files?.loaded.contents.get(AUTHENTICATION_ROLE);
    this.current = content ? this.build(content) : { jwt: this.jwtFor(options.oidc ? [options.oidc] : []), anonymous: undefined, content: undefined };
    this.current.jwt.prefetch();
    if (options.files && content) this.unsubscribe = options.files.onChange((loaded) => this.onChange(loaded));
  }

  /** The file's anonymous policy, or undefined when it has none (then --anonymous-auth decides). */
  get anonymous(): AnonymousConfig | undefined {
    return this.current.anonymous;
  }

  /** Whether an unauthenticated request for `path` may be anonymous. */
  anonymousAllowed(path: string, flagValue: boolean): boolean {
    const a = this.current.anonymous;
    if (!a) return flagValue;
    return a.enabled && (a.paths.length === 0 || a.paths.includes(path));
  }

  stop(): void {
    this.unsubscribe?.();
  }

  private onChange(loaded: LoadedFiles): void {
    const content = loaded.contents.get(AUTHENTICATION_ROLE);
    if (!content || (this.current.content && content.equals(this.current.content))) return;
    try {
      const next = this.build(content);
      this.current = next;
      next.jwt.prefetch();
      this.record('success');
      this.options.log.info('authentication configuration reloaded', { jwtAuthenticators: next.jwt.issuers.length });
    } catch (e) {
      this.record('failure');
      this.options.log.error('authentication configuration not reloaded: keeping the previous one', { error: e instanceof Error ? e.message : String(e) });
    }
  }

  private record(status: 'success' | 'failure'): void {
    this.reloadMetrics?.record(status);
  }

  private build(content: Buffer): InForce {
    const parsed = parseAuthenticationConfig(content.toString('utf8'), this.options.load);
    if (parsed.anonymous && this.options.anonymousFlagSet) {
      throw new AuthenticationConfigError(['anonymous: Forbidden: anonymous is not supported when --anonymous-auth is set']);
    }
    return { jwt: this.jwtFor(parsed.jwt), anonymous: parsed.anonymous, content };
  }

  private jwtFor(configs: readonly JwtAuthenticatorConfig[]): JwtAuthenticator {
    const o = this.options.minRefreshIntervalMs !== undefined ? { minRefreshIntervalMs: this.options.minRefreshIntervalMs } : {};
    return new JwtAuthenticator(configs.map((c) => new IssuerAuthenticator(c, o)));
  }
}
