// internal/authz/authorization-config-controller owns reloading --authorization-config: the
// file's contents come from the shared watcher (config/reloadable-files, which every replica's
// config hash is computed from); a changed file is parsed, validated and built into a whole new
// chain off to the side, then swapped in with one reference. An invalid file keeps the chain in
// force and is logged. Besides the change watch the file is re-read every 60 s, as upstream.
// Each automatic reload is counted in upstream's reload metrics.
// Imports: chain, authorization-config, config/reloadable-files, config/reload-metrics, log.

import type { Registry } from 'prom-client';
import type { LoadedFiles, ReloadableFiles } from '../config/reloadable-files.js';
import { ReloadMetrics } from '../config/reload-metrics.js';
import type { Logger } from '../log/logger.js';
import type { Authorizer } from './authorizer.js';
import { parseAuthorizationConfig, type ConfiguredAuthorizer } from './authorization-config.js';
import type { AuthorizerChain } from './chain.js';

export const AUTHORIZATION_ROLE = 'authorization';

export interface AuthorizationConfigControllerOptions {
  files: ReloadableFiles;
  /** `apiserver.config.<domain>` per --naming. */
  group: string;
  /** Builds the whole chain for a configured list (throws when an authorizer cannot be built). */
  build(configured: readonly ConfiguredAuthorizer[]): Authorizer[];
  chain: AuthorizerChain;
  log: Logger;
  registry: Registry | undefined;
  /** Identity of this API server, hashed into `apiserver_id_hash`. */
  apiserverId: string;
  /** Forced re-read interval (upstream: 60 s); 0 turns it off. */
  recheckIntervalMs?: number;
}

export class AuthorizationConfigController {
  private content: Buffer;
  private readonly metrics: ReloadMetrics | undefined;
  private readonly unsubscribe: () => void;
  private readonly timer: NodeJS.Timeout | undefined;

  /** Loads the file in force now; throws (AuthorizationConfigError) when it is not valid, which stops the start. */
  constructor(private readonly o: AuthorizationConfigControllerOptions) {
    const content = o.files.loaded.contents.get(AUTHORIZATION_ROLE);
    if (!content) throw new Error('--authorization-config is not loaded');
    o.chain.swap(o.build(parseAuthorizationConfig(content.toString('utf8'), { group: o.group })));
    this.content = content;
    this.metrics = o.registry ? new ReloadMetrics(o.registry, 'authorization', o.apiserverId) : undefined;
    this.unsubscribe = o.files.onChange((loaded) => this.onChange(loaded));
    const every = o.recheckIntervalMs ?? 60_000;
    if (every > 0) {
      this.timer = setInterval(() => o.files.check(true), every);
      this.timer.unref();
    }
  }

  stop(): void {
    this.unsubscribe();
    clearInterval(this.timer);
  }

  private onChange(loaded: LoadedFiles): void {
    const content = loaded.contents.get(AUTHORIZATION_ROLE);
    // Another role's file changed, or this one was rewritten with the same bytes.
    if (!content || content.equals(this.content)) return;
    this.content = content;
    let next: Authorizer[];
    try {
      next = this.o.build(parseAuthorizationConfig(content.toString('utf8'), { group: this.o.group }));
    } catch (e) {
      this.metrics?.record('failure');
      this.o.log.error('authorization configuration not reloaded: keeping the previous one', { error: e instanceof Error ? e.message : String(e) });
      return;
    }
    this.o.chain.swap(next);
    this.metrics?.record('success');
    this.o.log.info('authorization configuration reloaded', { authorizers: next.length });
  }
}
