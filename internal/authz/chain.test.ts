import { Hono } from 'hono';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { anonymousUser, type UserInfo } from '../auth/user.js';
import { FlagError, parseFlags, type ServerConfig } from '../config/flags.js';
import type { Env } from '../http/context.js';
import { withAuthorization } from '../http/filters/with-authorization.js';
import { withImpersonation } from '../http/filters/with-impersonation.js';
import { createNaming } from '../naming/naming.js';
import type { RequestInfo } from '../http/request-info.js';
import { authorize, rulesFor, type Attributes, type Authorizer, type Decision } from './authorizer.js';
import type { ConfiguredAuthorizer } from './authorization-config.js';
import type { WebhookAuthorizerConfig } from './webhook-config.js';
import {
  alwaysAllowAuthorizer,
  alwaysDenyAuthorizer,
  anonymousAllowedWith,
  AuthorizationDecisionMetrics,
  AuthorizerChain,
  buildChain,
  configuredFromFlags,
  type AuthorizerFactories,
} from './chain.js';

const parse = (...args: string[]) => parseFlags(args) as ServerConfig;
const flagError = (...args: string[]): string => {
  try {
    parseFlags(args);
  } catch (e) {
    if (e instanceof FlagError) return e.message;
    throw e;
  }
  return '';
};

const admin: UserInfo = { name: 'admin', groups: ['system:masters', 'system:authenticated'] };
const alice: UserInfo = { name: 'alice', groups: ['system:authenticated'] };
const getPods = (user: UserInfo): Attributes => ({ user, verb: 'get', isResourceRequest: true, path: '/api/v1/namespaces/ns/pods/p', namespace: 'ns', apiGroup: '', apiVersion: 'v1', resource: 'pods', subresource: '', name: 'p' });

/** An authorizer with a fixed answer that records that it was asked. */
function fixed(name: string, decision: Decision['decision'], reason = '', asked: string[] = []): Authorizer {
  return { name, authorize: () => (asked.push(name), { decision, reason }) };
}

const WEBHOOK: WebhookAuthorizerConfig = {
  authorizedTtlMs: 300_000,
  cacheAuthorizedRequests: true,
  unauthorizedTtlMs: 30_000,
  cacheUnauthorizedRequests: true,
  timeoutMs: 3000,
  subjectAccessReviewVersion: 'v1',
  matchConditionSubjectAccessReviewVersion: 'v1',
  failurePolicy: 'Deny',
  kubeConfigFile: '/webhook.kubeconfig',
  matchConditions: [],
};
const hook = (name: string): ConfiguredAuthorizer => ({ type: 'Webhook', name, webhook: WEBHOOK });

const factories = (over: Partial<AuthorizerFactories> = {}): AuthorizerFactories => ({
  rbac: () => fixed('rbac', 'noOpinion'),
  node: () => fixed('node', 'noOpinion'),
  webhook: (_c, name) => fixed(name, 'noOpinion'),
  ...over,
});

describe('--authorization-* flags', () => {
  it('defaults to Node,RBAC with the webhook flags at upstream defaults', () => {
    const c = parse();
    expect(c.authorization).toEqual({ modes: ['Node', 'RBAC'], policyFile: undefined, webhook: { configFile: undefined, version: 'v1beta1', authorizedTtlMs: 300_000, unauthorizedTtlMs: 30_000 } });
    expect(configuredFromFlags({ ...c.authorization, configFile: undefined, setFlags: c.setFlags })).toEqual([
      { type: 'Node', name: 'node' },
      { type: 'RBAC', name: 'rbac' },
    ]);
  });

  it.each([
    [['--authorization-mode=RBAC,Magic'], 'authorization-mode "Magic" is not a valid mode'],
    [['--authorization-mode=rbac'], 'authorization-mode "rbac" is not a valid mode'],
    [['--authorization-mode='], 'at least one authorization-mode must be passed'],
    [['--authorization-mode=RBAC,Node,RBAC'], 'authorization-mode ["RBAC" "Node" "RBAC"] has mode specified more than once'],
    [['--authorization-mode=ABAC'], "authorization-mode ABAC's authorization policy file not passed"],
    [['--authorization-mode=Webhook'], "authorization-mode Webhook's authorization config file not passed"],
    [['--authorization-policy-file=/p.jsonl'], 'cannot specify --authorization-policy-file without mode ABAC'],
    [['--authorization-webhook-config-file=/w.kubeconfig'], 'cannot specify --authorization-webhook-config-file without mode Webhook'],
    [['--authorization-mode=Webhook', '--authorization-webhook-config-file=/w', '--authorization-webhook-version=v2'], '--authorization-webhook-version must be v1 or v1beta1, got "v2"'],
    [['--authorization-config=/a.yaml', '--authorization-mode=RBAC'], '--authorization-config can not be specified when --authorization-mode or --authorization-webhook-* flags are defined (--authorization-mode given)'],
    [['--authorization-config=/a.yaml', '--authorization-policy-file=/p.jsonl'], 'cannot specify --authorization-policy-file with --authorization-config: ABAC is configured with --authorization-mode=ABAC only'],
    [['--authorization-config=/a.yaml', '--authorization-webhook-cache-authorized-ttl=1m'], '--authorization-config can not be specified when --authorization-mode or --authorization-webhook-* flags are defined (--authorization-webhook-cache-authorized-ttl given)'],
  ])('%j → %s', (args, message) => {
    expect(flagError(...args)).toContain(message);
  });

  it('reports every problem at once, as upstream aggregates them', () => {
    expect(flagError('--authorization-mode=ABAC,Nope', '--authorization-webhook-config-file=/w')).toBe(
      `[authorization-mode ABAC's authorization policy file not passed, authorization-mode "Nope" is not a valid mode (valid: AlwaysAllow, AlwaysDeny, ABAC, Webhook, RBAC, Node), cannot specify --authorization-webhook-config-file without mode Webhook]`,
    );
  });

  it('accepts a valid combination and the file alone', () => {
    expect(parse('--authorization-mode=ABAC,RBAC', '--authorization-policy-file=/p').authorization.modes).toEqual(['ABAC', 'RBAC']);
    expect(parse('--authorization-config=/a.yaml').authorizationConfig).toBe('/a.yaml');
  });

  it('maps the webhook flags onto a webhook named default, as upstream does', () => {
    const c = parse('--authorization-mode=Webhook,RBAC', '--authorization-webhook-config-file=/w', '--authorization-webhook-version=v1', '--authorization-webhook-cache-authorized-ttl=0s', '--authorization-webhook-cache-unauthorized-ttl=10s');
    expect(configuredFromFlags({ ...c.authorization, configFile: undefined, setFlags: c.setFlags })).toEqual([
      {
        type: 'Webhook',
        name: 'default',
        webhook: {
          authorizedTtlMs: 0,
          cacheAuthorizedRequests: false,
          unauthorizedTtlMs: 10_000,
          cacheUnauthorizedRequests: true,
          timeoutMs: 30_000,
          subjectAccessReviewVersion: 'v1',
          matchConditionSubjectAccessReviewVersion: 'v1',
          failurePolicy: 'NoOpinion',
          kubeConfigFile: '/w',
          matchConditions: [],
        },
      },
      { type: 'RBAC', name: 'rbac' },
    ]);
  });

  it('turns anonymous off under AlwaysAllow only', () => {
    expect(anonymousAllowedWith(['AlwaysAllow'], true)).toBe(false);
    expect(anonymousAllowedWith(['RBAC', 'AlwaysAllow'], true)).toBe(false);
    expect(anonymousAllowedWith(['AlwaysDeny', 'RBAC'], true)).toBe(true);
    expect(anonymousAllowedWith(['RBAC'], false)).toBe(false);
  });
});

describe('the chain', () => {
  it('asks system:masters first, then the configured authorizers in order; the first decision wins', async () => {
    const asked: string[] = [];
    const chain = buildChain(
      [
        { type: 'Node', name: 'node' },
        hook('first'),
        hook('second'),
        { type: 'RBAC', name: 'rbac' },
      ],
      {
        factories: factories({
          node: () => fixed('node', 'noOpinion', 'not a node', asked),
          webhook: (_c, name) => (name === 'first' ? fixed(name, 'deny', 'denied by first', asked) : fixed(name, 'allow', '', asked)),
          rbac: () => fixed('rbac', 'allow', '', asked),
        }),
      },
    );
    expect(chain.map((z) => z.name)).toEqual(['privileged-group', 'node', 'first', 'second', 'rbac']);
    expect(await authorize(chain, getPods(alice))).toEqual({ decision: 'deny', reason: 'denied by first' });
    expect(asked).toEqual(['node', 'first']);
    asked.length = 0;
    expect((await authorize(chain, getPods(admin))).decision).toBe('allow');
    expect(asked).toEqual([]);
  });

  it('on a cluster replica, asks RBAC and Node again after catching up when nobody allowed, and only then', async () => {
    // RBAC allows once the replica has caught up with a binding written elsewhere.
    let caughtUp = false;
    const waits: string[] = [];
    const catchUp = { wait: async () => (waits.push('wait'), (caughtUp = true)) };
    const rbac: Authorizer = { name: 'rbac', authorize: () => (caughtUp ? { decision: 'allow', reason: 'bound' } : { decision: 'noOpinion', reason: 'not yet' }) };
    const asked: string[] = [];
    const chain = buildChain(
      [
        { type: 'Node', name: 'node' },
        { type: 'RBAC', name: 'rbac' },
        hook('after'),
      ],
      { factories: factories({ rbac: () => rbac, node: () => fixed('node', 'noOpinion', 'not a node', asked), webhook: (_c, name) => fixed(name, 'noOpinion', 'no', asked) }), catchUp },
    );
    expect(chain.map((z) => z.name)).toEqual(['privileged-group', 'node', 'rbac', 'after', 'catch-up']);
    expect(await authorize(chain, getPods(alice))).toEqual({ decision: 'allow', reason: 'bound' });
    // The webhook is not asked twice; Node is asked again, before RBAC.
    expect(asked).toEqual(['node', 'after', 'node']);
    expect(waits).toEqual(['wait']);
    // Allowed at once from then on: no wait.
    expect(await authorize(chain, getPods(alice))).toEqual({ decision: 'allow', reason: 'bound' });
    expect(waits).toEqual(['wait']);
    // Still nobody allows after catching up: the 403 keeps the reasons, without one of its own.
    const denying = buildChain([{ type: 'RBAC', name: 'rbac' }], { factories: factories({ rbac: () => fixed('rbac', 'noOpinion', 'RBAC: nothing') }), catchUp });
    expect(await authorize(denying, getPods(alice))).toEqual({ decision: 'deny', reason: 'RBAC: nothing' });
    // A catch-up that fails (no leader) keeps the answer; a chain without RBAC or Node adds nothing.
    const failing = buildChain([{ type: 'RBAC', name: 'rbac' }], { factories: factories({ rbac: () => fixed('rbac', 'noOpinion', 'RBAC: nothing') }), catchUp: { wait: async () => false } });
    expect(await authorize(failing, getPods(alice))).toEqual({ decision: 'deny', reason: 'RBAC: nothing' });
    expect(buildChain([hook('only')], { factories: factories(), catchUp }).map((z) => z.name)).toEqual(['privileged-group', 'only']);
    // Lists no rules of its own, and does not make a rules review incomplete.
    const listing: Authorizer = { ...fixed('rbac', 'noOpinion'), rulesFor: () => ({ resourceRules: [], nonResourceRules: [], incomplete: false }) };
    expect(await rulesFor(buildChain([{ type: 'RBAC', name: 'rbac' }], { factories: factories({ rbac: () => listing }), catchUp }), alice, 'ns')).toMatchObject({ incomplete: false });
  });

  it('puts the built-in endpoints right after system:masters', () => {
    const join = fixed('cluster-join', 'noOpinion');
    expect(buildChain([{ type: 'RBAC', name: 'rbac' }], { factories: factories(), builtins: [join] }).map((z) => z.name)).toEqual(['privileged-group', 'cluster-join', 'rbac']);
  });

  it('refuses ABAC without a policy and fails when a factory cannot build', () => {
    expect(() => buildChain([{ type: 'ABAC', name: 'abac' }], { factories: factories() })).toThrow(/needs --authorization-policy-file/);
    const broken = factories({ webhook: () => { throw new Error('not built yet'); } });
    expect(() => buildChain([hook('w')], { factories: broken })).toThrow('not built yet');
  });

  it('AlwaysAllow allows and lists everything; AlwaysDeny has no opinion with upstream\'s reason', async () => {
    expect(await authorize(buildChain([{ type: 'AlwaysAllow', name: 'alwaysallow' }], { factories: factories() }), getPods(anonymousUser))).toEqual({ decision: 'allow', reason: '' });
    const deny = buildChain([{ type: 'AlwaysDeny', name: 'alwaysdeny' }, { type: 'RBAC', name: 'rbac' }], { factories: factories({ rbac: () => fixed('rbac', 'allow', 'bound') }) });
    // No opinion, so a later authorizer still decides (upstream's AlwaysDeny never denies outright).
    expect(await authorize(deny, getPods(alice))).toEqual({ decision: 'allow', reason: 'bound' });
    expect(await authorize([alwaysDenyAuthorizer], getPods(alice))).toEqual({ decision: 'deny', reason: 'Everything is forbidden.' });
    expect(await rulesFor([alwaysAllowAuthorizer], alice, 'ns')).toEqual({
      resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }],
      nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
      incomplete: false,
    });
    expect(await rulesFor([alwaysDenyAuthorizer], alice, 'ns')).toEqual({ resourceRules: [], nonResourceRules: [], incomplete: false });
  });

  it('counts terminal decisions per authorizer type and configured name, not no-opinions nor system:masters', async () => {
    const registry = new Registry();
    const metrics = new AuthorizationDecisionMetrics(registry);
    const chain = buildChain(
      [
        hook('deny-bob'),
        { type: 'RBAC', name: 'rbac' },
      ],
      { factories: factories({ webhook: (_c, name) => ({ name, authorize: (a) => ({ decision: a.user.name === 'bob' ? 'deny' : 'noOpinion', reason: '' }) }), rbac: () => fixed('rbac', 'allow') }), metrics },
    );
    await authorize(chain, getPods(alice));
    await authorize(chain, getPods(alice));
    await authorize(chain, getPods({ name: 'bob', groups: [] }));
    await authorize(chain, getPods(admin));
    const values = (await registry.getSingleMetric('apiserver_authorization_decisions_total')!.get()).values;
    expect(values.map((v) => [v.labels, v.value])).toEqual([
      [{ type: 'RBAC', name: 'rbac', decision: 'allowed' }, 2],
      [{ type: 'Webhook', name: 'deny-bob', decision: 'denied' }, 1],
    ]);
  });

  it('swaps the whole chain with one reference; a chain read before the swap stays as it was', () => {
    const a = [fixed('a', 'allow')];
    const b = [fixed('b', 'deny'), fixed('c', 'allow')];
    const holder = new AuthorizerChain(a);
    const held = holder.current();
    holder.swap(b);
    expect(held.map((z) => z.name)).toEqual(['a']);
    expect(holder.current().map((z) => z.name)).toEqual(['b', 'c']);
    expect(Object.isFrozen(holder.current())).toBe(true);
  });
});

describe('the 403 when nobody allows', () => {
  const appWith = (chain: AuthorizerChain, user: UserInfo, info: Partial<RequestInfo>) => {
    const app = new Hono<Env>();
    app.use('*', async (c, next) => {
      c.set('user', user);
      c.set('info', { verb: 'get', isResourceRequest: false, path: '/', namespace: '', apiGroup: '', apiVersion: '', resource: '', subresource: '', name: '', ...info } as RequestInfo);
      await next();
    });
    app.use('*', withAuthorization(chain));
    app.get('*', (c) => c.text('ok'));
    app.post('*', (c) => c.text('ok'));
    return app;
  };

  it('is upstream\'s Forbidden Status: the attributes, then the no-opinion reasons one per line', async () => {
    const chain = new AuthorizerChain(buildChain([{ type: 'AlwaysDeny', name: 'alwaysdeny' }, { type: 'RBAC', name: 'rbac' }], { factories: factories({ rbac: () => fixed('rbac', 'noOpinion', 'no binding') }) }));
    const res = await appWith(chain, alice, { verb: 'list', isResourceRequest: true, path: '/api/v1/namespaces/ns/pods', namespace: 'ns', apiVersion: 'v1', resource: 'pods' }).request('/api/v1/namespaces/ns/pods');
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({
      kind: 'Status',
      status: 'Failure',
      reason: 'Forbidden',
      code: 403,
      details: { kind: 'pods' },
      message: 'pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "ns": Everything is forbidden.\nno binding',
    });
    const path = await appWith(chain, anonymousUser, { path: '/healthz' }).request('/healthz');
    expect(path.status).toBe(403);
    expect(((await path.json()) as { message: string }).message).toBe('forbidden: User "system:anonymous" cannot get path "/healthz": Everything is forbidden.\nno binding');
    expect((await appWith(chain, admin, { path: '/healthz' }).request('/healthz')).status).toBe(200);
  });

  it('without reasons, the attributes alone', async () => {
    const chain = new AuthorizerChain(buildChain([{ type: 'RBAC', name: 'rbac' }], { factories: factories() }));
    const res = await appWith(chain, alice, { verb: 'get', path: '/metrics' }).request('/metrics');
    expect(((await res.json()) as { message: string }).message).toBe('forbidden: User "alice" cannot get path "/metrics"');
  });

  it('keeps one chain through impersonation and authorization even when a reload lands between them', async () => {
    // A lets alice impersonate bob and bob read; B decides nothing. The swap happens after
    // impersonation was checked and before the request is authorized.
    const chainA: Authorizer[] = [{ name: 'a', authorize: (a) => ({ decision: (a.verb === 'impersonate' && a.user.name === 'alice') || a.user.name === 'bob' ? 'allow' : 'noOpinion', reason: '' }) }];
    const chainB: Authorizer[] = [fixed('b', 'noOpinion', 'chain B')];
    const holder = new AuthorizerChain(chainA);
    const app = new Hono<Env>();
    app.use('*', async (c, next) => {
      c.set('user', alice);
      c.set('info', { verb: 'get', isResourceRequest: false, path: '/x', namespace: '', apiGroup: '', apiVersion: '', resource: '', subresource: '', name: '' } as RequestInfo);
      await next();
    });
    app.use('*', withImpersonation(holder, createNaming('cluster')));
    app.use('*', async (_c, next) => {
      holder.swap(chainB);
      await next();
    });
    app.use('*', withAuthorization(holder));
    app.get('*', (c) => c.json(c.get('user')));
    const res = await app.request('/x', { headers: { 'impersonate-user': 'bob' } });
    expect(res.status).toBe(200);
    expect(((await res.json()) as UserInfo).name).toBe('bob');
    // The next request starts with B.
    const next = await app.request('/x', { headers: { 'impersonate-user': 'bob' } });
    expect(next.status).toBe(403);
  });

  it('decides each request with the chain in force when it started', async () => {
    const chain = new AuthorizerChain([fixed('deny', 'deny', 'first chain')]);
    const app = appWith(chain, alice, { path: '/x' });
    expect((await app.request('/x')).status).toBe(403);
    chain.swap([fixed('allow', 'allow')]);
    expect((await app.request('/x')).status).toBe(200);
  });
});
