// internal/authz/chain owns the authorizer chain in force and how it is configured: the
// --authorization-* flags (validated with upstream's messages and mapped onto the same
// configured list the AuthorizationConfiguration file gives), building the chain (system:masters
// first, always, then the configured authorizers in order, each counted in
// apiserver_authorization_decisions_total), AlwaysAllow/AlwaysDeny, and the holder requests
// read the chain from: a reload builds a whole new chain off to the side and swaps one
// reference, so a request decides with the chain it started with.
// Imports: authorizer, builtin-authorizers (privileged group), abac (type), authorization-config
// (types), webhook-config (type), metrics (series).

import type { Registry } from 'prom-client';
import { CounterFamily, type CounterChild } from '../metrics/series.js';
import type { UserInfo } from '../auth/user.js';
import type { Attributes, Authorizer, Decision, Rules } from './authorizer.js';
import { privilegedGroupAuthorizer } from './builtin-authorizers.js';
import type { AuthorizerType, ConfiguredAuthorizer } from './authorization-config.js';
import type { WebhookAuthorizerConfig } from './webhook-config.js';

/** `--authorization-mode` values, in upstream's order (AuthorizationModeChoices). */
export const AUTHORIZATION_MODES: readonly AuthorizerType[] = ['AlwaysAllow', 'AlwaysDeny', 'ABAC', 'Webhook', 'RBAC', 'Node'];
export const DEFAULT_AUTHORIZATION_MODES: readonly AuthorizerType[] = ['Node', 'RBAC'];

/** The authorization flags as parsed (internal/config/flags). */
export interface AuthorizationFlags {
  modes: string[];
  policyFile: string | undefined;
  configFile: string | undefined;
  webhook: { configFile: string | undefined; version: string; authorizedTtlMs: number; unauthorizedTtlMs: number };
  /** Flags given explicitly (the file excludes --authorization-mode and --authorization-webhook-* even at their defaults). */
  setFlags: ReadonlySet<string>;
}

/**
 * Upstream's BuiltInAuthorizationOptions.Validate: every problem, in its wording. With
 * --authorization-config the legacy flags must be absent and the file decides the rest.
 */
export function validateAuthorizationFlags(f: AuthorizationFlags): string[] {
  if (f.configFile) {
    const legacy = [...f.setFlags].filter((n) => n === 'authorization-mode' || n.startsWith('authorization-webhook-'));
    if (legacy.length) return [`--authorization-config can not be specified when --authorization-mode or --authorization-webhook-* flags are defined (--${legacy.join(', --')} given)`];
    // Upstream lets the file name ABAC; the spec's file has no ABAC type, so the policy would go unused.
    if (f.policyFile) return ['cannot specify --authorization-policy-file with --authorization-config: ABAC is configured with --authorization-mode=ABAC only'];
    return [];
  }
  const errs: string[] = [];
  if (f.modes.length === 0) errs.push('at least one authorization-mode must be passed');
  for (const mode of f.modes) {
    if (!(AUTHORIZATION_MODES as readonly string[]).includes(mode)) errs.push(`authorization-mode "${mode}" is not a valid mode (valid: ${AUTHORIZATION_MODES.join(', ')})`);
    if (mode === 'ABAC' && !f.policyFile) errs.push("authorization-mode ABAC's authorization policy file not passed");
    if (mode === 'Webhook' && !f.webhook.configFile) errs.push("authorization-mode Webhook's authorization config file not passed");
  }
  if (f.policyFile && !f.modes.includes('ABAC')) errs.push('cannot specify --authorization-policy-file without mode ABAC');
  if (f.webhook.configFile && !f.modes.includes('Webhook')) errs.push('cannot specify --authorization-webhook-config-file without mode Webhook');
  if (new Set(f.modes).size !== f.modes.length) errs.push(`authorization-mode [${f.modes.map((m) => `"${m}"`).join(' ')}] has mode specified more than once`);
  if (f.webhook.version !== 'v1' && f.webhook.version !== 'v1beta1') errs.push(`--authorization-webhook-version must be v1 or v1beta1, got "${f.webhook.version}"`);
  return errs;
}

/**
 * The flags as a configured list, as upstream's buildAuthorizationConfiguration maps them: the
 * webhook is named `default` with a 30 s timeout, NoOpinion on failure and caching on while
 * its TTL is not zero; every other mode is named after its type in lowercase.
 */
export function configuredFromFlags(f: AuthorizationFlags): ConfiguredAuthorizer[] {
  return f.modes.map((mode): ConfiguredAuthorizer => {
    const type = mode as AuthorizerType;
    if (type !== 'Webhook') return { type, name: type.toLowerCase() };
    const webhook: WebhookAuthorizerConfig = {
      authorizedTtlMs: f.webhook.authorizedTtlMs,
      cacheAuthorizedRequests: f.webhook.authorizedTtlMs !== 0,
      unauthorizedTtlMs: f.webhook.unauthorizedTtlMs,
      cacheUnauthorizedRequests: f.webhook.unauthorizedTtlMs !== 0,
      timeoutMs: 30_000,
      subjectAccessReviewVersion: f.webhook.version as 'v1' | 'v1beta1',
      matchConditionSubjectAccessReviewVersion: 'v1',
      failurePolicy: 'NoOpinion',
      kubeConfigFile: f.webhook.configFile ?? '',
      matchConditions: [],
    };
    return { type, name: 'default', webhook };
  });
}

/** Whether anonymous requests stay on: upstream turns them off under AlwaysAllow (ApplyAuthorization). */
export function anonymousAllowedWith(modes: readonly string[], anonymousAuth: boolean): boolean {
  return anonymousAuth && !modes.includes('AlwaysAllow');
}

type OwnRules = Omit<Rules, 'evaluationError'>;

/** Upstream's alwaysAllowAuthorizer: allow with no reason; it lists everything. */
export const alwaysAllowAuthorizer: Authorizer = {
  name: 'AlwaysAllow',
  authorize: (): Decision => ({ decision: 'allow', reason: '' }),
  rulesFor: (): OwnRules => ({
    resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }],
    nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
    incomplete: false,
  }),
};

/** Upstream's alwaysDenyAuthorizer: no opinion with its reason (so later authorizers still may allow). */
export const alwaysDenyAuthorizer: Authorizer = {
  name: 'AlwaysDeny',
  authorize: (): Decision => ({ decision: 'noOpinion', reason: 'Everything is forbidden.' }),
  rulesFor: (): OwnRules => ({ resourceRules: [], nonResourceRules: [], incomplete: false }),
};

/**
 * The authorizers other modules build. Called each time a chain is built (at start and on every
 * reload of --authorization-config): RBAC and Node should hand back one long-lived instance
 * (their indexes follow the watch cache), and a webhook must not register its metrics anew per
 * call (prom-client refuses a second registration of a name).
 */
export interface AuthorizerFactories {
  rbac(): Authorizer;
  node(): Authorizer;
  webhook(cfg: WebhookAuthorizerConfig, name: string): Authorizer;
  /** The ABAC policy (read once at start, as upstream); required when ABAC is configured. */
  abac?(): Authorizer;
}

/**
 * apiserver_authorization_decisions_total: terminal decisions (allow, deny) per configured
 * authorizer. A series appears with its first decision (as prom-client's would); after that a
 * decision is one number update, not a hash of its label set (every request that RBAC, Node or
 * a webhook decides passes here).
 */
export class AuthorizationDecisionMetrics {
  private readonly family: CounterFamily;
  constructor(registry: Registry) {
    this.family = new CounterFamily(
      'apiserver_authorization_decisions_total',
      'Total number of terminal decisions made by an authorizer split by authorizer type, name, and decision.',
      ['type', 'name', 'decision'],
      [registry],
    );
  }

  /** The counter of one configured authorizer's decisions. */
  counterFor(type: string, name: string): (decision: 'allowed' | 'denied') => void {
    let allowed: CounterChild | undefined;
    let denied: CounterChild | undefined;
    return (decision) => {
      if (decision === 'allowed') (allowed ??= this.family.child({ type, name, decision })).value++;
      else (denied ??= this.family.child({ type, name, decision })).value++;
    };
  }
}

/** Wraps an authorizer so its allows and denies are counted (upstream's instrumentedAuthorizer). */
function instrumented(z: Authorizer, type: string, name: string, metrics: AuthorizationDecisionMetrics | undefined): Authorizer {
  if (!metrics) return z;
  const counted = metrics.counterFor(type, name);
  const count = (d: Decision): Decision => {
    if (d.decision === 'allow') counted('allowed');
    else if (d.decision === 'deny') counted('denied');
    return d;
  };
  const wrapped: Authorizer = {
    name: z.name,
    authorize(a: Attributes) {
      const d = z.authorize(a);
      return d instanceof Promise ? d.then(count) : count(d);
    },
  };
  if (z.rulesFor) {
    const rulesFor = z.rulesFor.bind(z);
    wrapped.rulesFor = (user: UserInfo, namespace: string) => rulesFor(user, namespace);
  }
  return wrapped;
}

export interface BuildOptions {
  factories: AuthorizerFactories;
  metrics?: AuthorizationDecisionMetrics;
  /** Server-internal endpoints that check their own credentials (the cluster join endpoints); after system:masters. */
  builtins?: readonly Authorizer[];
  /**
   * A replica of a cluster: brings the RBAC and Node views up to every acknowledged write
   * (registry/catch-up) before a request they did not allow is refused, then asks them again.
   */
  catchUp?: { wait(): Promise<boolean> };
}

/**
 * The chain's last member on a cluster replica: reached only when nobody allowed or denied. A
 * Role, binding or pod written through another replica a moment ago may not have reached this
 * replica's indexes yet; a client told 403 would not retry (a single kube-apiserver would have
 * allowed it), so wait until this replica holds every acknowledged write and ask the authorizers
 * that answer from those indexes again, in chain order. Its own no opinion has no reason: the
 * others' reasons were collected already.
 */
function catchUpAuthorizer(catchUp: { wait(): Promise<boolean> }, derived: readonly Authorizer[]): Authorizer {
  const undecided: Decision = Object.freeze({ decision: 'noOpinion', reason: '' });
  const again = async (a: Attributes): Promise<Decision> => {
    if (!(await catchUp.wait())) return undecided;
    for (const z of derived) {
      const d = await z.authorize(a);
      if (d.decision !== 'noOpinion') return d;
    }
    return undecided;
  };
  return {
    name: 'catch-up',
    authorize: again,
    // Lists nothing of its own: the indexes it re-asks list their rules themselves.
    rulesFor: (): OwnRules => ({ resourceRules: [], nonResourceRules: [], incomplete: false }),
  };
}

/** The whole chain for a configured list; throws when a factory cannot build its authorizer. */
export function buildChain(configured: readonly ConfiguredAuthorizer[], o: BuildOptions): Authorizer[] {
  const chain: Authorizer[] = [privilegedGroupAuthorizer, ...(o.builtins ?? [])];
  const derived: Authorizer[] = [];
  for (const c of configured) {
    let z: Authorizer;
    switch (c.type) {
      case 'AlwaysAllow':
        z = alwaysAllowAuthorizer;
        break;
      case 'AlwaysDeny':
        z = alwaysDenyAuthorizer;
        break;
      case 'ABAC':
        if (!o.factories.abac) throw new Error('authorization mode ABAC needs --authorization-policy-file');
        z = o.factories.abac();
        break;
      case 'RBAC':
        z = o.factories.rbac();
        break;
      case 'Node':
        z = o.factories.node();
        break;
      case 'Webhook':
        if (!c.webhook) throw new Error(`authorizer ${c.name}: a Webhook needs its webhook configuration`);
        z = o.factories.webhook(c.webhook, c.name);
        break;
    }
    const wrapped = instrumented(z, c.type, c.name, o.metrics);
    chain.push(wrapped);
    if (c.type === 'RBAC' || c.type === 'Node') derived.push(wrapped);
  }
  if (o.catchUp && derived.length > 0) chain.push(catchUpAuthorizer(o.catchUp, derived));
  return chain;
}

/** What requests read the chain from: once per request, so a swap never splits one. */
export interface AuthorizerSource {
  current(): readonly Authorizer[];
}

/** The chain in force; swap() replaces it whole. */
export class AuthorizerChain implements AuthorizerSource {
  private chain: readonly Authorizer[];
  constructor(initial: readonly Authorizer[]) {
    this.chain = Object.freeze([...initial]);
  }
  current(): readonly Authorizer[] {
    return this.chain;
  }
  swap(next: readonly Authorizer[]): void {
    this.chain = Object.freeze([...next]);
  }
}

/** A fixed chain (tests, and servers whose configuration does not reload). */
export const fixedChain = (authorizers: readonly Authorizer[]): AuthorizerSource => new AuthorizerChain(authorizers);
