// internal/auth/webhook-token-authenticator owns bearer-token authentication by a remote
// service (--authentication-token-webhook-*): the service is named by a kubeconfig-format file,
// receives a TokenReview (v1 or v1beta1 of the authentication group, per --naming) and answers
// with its status. It is audience aware as upstream's: the review carries the audiences asked
// for, and the answer counts only for the audiences it names (status.audiences, or the API
// audiences when it names none) that were asked for; none in common is no opinion. Answers,
// authenticated or not, are cached for the TTL under a hash of the token and the audiences (the
// token itself is never a key, never logged). A failed call is a 401 and not cached.
// Imports: authenticator, token-authenticator (the contract), user, webhook-client (the call),
// cluster-cli/kubeconfig.

import { createHash } from 'node:crypto';
import { BoundedMap } from '../memo/bounded-map.js';
import { readKubeconfig, type KubeconfigCredentials } from '../cluster-cli/kubeconfig.js';
import { AuthnError, type AuthnResponse } from './authenticator.js';
import { postJson } from './webhook-client.js';
import type { TokenAuthenticator } from './token-authenticator.js';
import type { UserInfo } from './user.js';

const MAX_CACHE_ENTRIES = 10_000;
const CALL_TIMEOUT_MS = 10_000;

export interface WebhookTokenOptions {
  /** Path of the kubeconfig-format file naming the service. */
  configFile: string;
  version: 'v1' | 'v1beta1';
  /** `authentication.cluster.io` or `authentication.k8s.io`. */
  group: string;
  cacheTtlMs: number;
  /** The API server's audiences (--api-audiences): what an answer naming no audiences is valid for. */
  implicitAudiences: readonly string[];
  now?: () => number;
}

type Review = { authenticated: boolean; user?: UserInfo; error?: string; audiences: string[] };

export class WebhookTokenAuthenticator implements TokenAuthenticator {
  readonly name = 'webhook';
  readonly audienceAware = true;
  private readonly target: KubeconfigCredentials;
  private readonly cache = new BoundedMap<string, { review: Review; expires: number }>(MAX_CACHE_ENTRIES);
  private readonly now: () => number;
  /** Calls made to the service (tests read it to see the cache work). */
  calls = 0;

  constructor(private readonly options: WebhookTokenOptions) {
    this.target = readKubeconfig(options.configFile);
    this.now = options.now ?? Date.now;
  }

  async authenticateToken(token: string, audiences: readonly string[]): Promise<AuthnResponse | null> {
    // The audiences are part of the question, so of the key (NUL never occurs in either).
    const key = createHash('sha256').update(token).update('\0').update(audiences.join('\0')).digest('hex');
    const now = this.now();
    let hit = this.cache.get(key);
    if (hit && hit.expires <= now) {
      this.cache.delete(key);
      hit = undefined;
    }
    const review = hit?.review ?? (await this.call(token, audiences));
    if (!hit && this.options.cacheTtlMs > 0) {
      this.cache.set(key, { review, expires: now + this.options.cacheTtlMs });
    }
    // Upstream's order: an answer for none of the audiences asked for is no opinion, whatever
    // it says; then a refusal is an error.
    const valid = review.audiences.length > 0 ? review.audiences : this.options.implicitAudiences;
    const common = audiences.filter((a) => valid.includes(a));
    if (common.length === 0) return null;
    if (!review.authenticated || !review.user) throw new AuthnError(`webhook: ${review.error || 'token not authenticated'}`);
    return { user: review.user, audiences: common };
  }

  private async call(token: string, audiences: readonly string[]): Promise<Review> {
    const apiVersion = `${this.options.group}/${this.options.version}`;
    const body = JSON.stringify({ apiVersion, kind: 'TokenReview', metadata: { creationTimestamp: null }, spec: { token, audiences }, status: { user: {} } });
    this.calls++;
    let answer: unknown;
    try {
      answer = await postJson(this.target, body, { timeoutMs: CALL_TIMEOUT_MS, service: 'the token review service' });
    } catch (e) {
      throw new AuthnError(`webhook: ${(e as Error).message}`);
    }
    const a = answer as { apiVersion?: unknown; kind?: unknown; status?: { authenticated?: unknown; user?: Record<string, unknown>; error?: unknown; audiences?: unknown } };
    if (a?.apiVersion !== apiVersion || a.kind !== 'TokenReview') throw new AuthnError(`webhook: expected a TokenReview of ${apiVersion} in reply, got ${String(a?.apiVersion)} ${String(a?.kind)}`);
    const status = a.status ?? {};
    const error = typeof status.error === 'string' ? status.error : undefined;
    const valid = Array.isArray(status.audiences) ? status.audiences.filter((x): x is string => typeof x === 'string') : [];
    if (status.authenticated !== true) return { authenticated: false, audiences: valid, ...(error ? { error } : {}) };
    const u = status.user ?? {};
    if (typeof u['username'] !== 'string' || u['username'] === '') throw new AuthnError('webhook: the reply authenticated a user without a username');
    const groups = Array.isArray(u['groups']) ? u['groups'].filter((g): g is string => typeof g === 'string') : [];
    const extra: Record<string, string[]> = {};
    if (u['extra'] && typeof u['extra'] === 'object') {
      for (const [k, v] of Object.entries(u['extra'] as Record<string, unknown>)) if (Array.isArray(v)) extra[k] = v.filter((x): x is string => typeof x === 'string');
    }
    const uid = typeof u['uid'] === 'string' && u['uid'] ? u['uid'] : undefined;
    return { authenticated: true, audiences: valid, user: { name: u['username'], groups, ...(uid ? { uid } : {}), ...(Object.keys(extra).length ? { extra } : {}) } };
  }
}
