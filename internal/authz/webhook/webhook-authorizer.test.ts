import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { createCertificateAuthority, issueCertificate, type CertificateAuthority, type KeyPairPem } from '../../pki/certificates.js';
import { silentLogger } from '../../log/logger.js';
import { createNaming } from '../../naming/naming.js';
import { tryParseFieldSelector, tryParseLabelSelector } from '../../selectors/index.js';
import { decide, type Attributes, type Authorizer } from '../authorizer.js';
import type { WebhookAuthorizerConfig } from '../webhook-config.js';
import { attributesOf } from '../../http/filters/with-authorization.js';
import { createWebhookAuthorizer, WebhookConfigError, type WebhookAuthorizerDeps } from './webhook-authorizer.js';

type Review = { apiVersion: string; kind: string; spec: Record<string, unknown> };
type Reply = { status?: number; body?: unknown; raw?: string; delayMs?: number; headers?: Record<string, string> };

let dir: string;
let ca: CertificateAuthority;
let serverPair: KeyPairPem;
let clientPair: KeyPairPem;
let server: Server;
let port: number;
/** What the test server answers next; a function of the review received. */
let answer: (review: Review) => Reply;
/** Every review the server received, with the caller's certificate CN and bearer token. */
let received: Array<{ review: Review; clientCN: string | undefined; auth: string | undefined }>;

const statusReply = (review: Review, status: Record<string, unknown>): Reply => ({ body: { apiVersion: review.apiVersion, kind: 'SubjectAccessReview', status } });

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'clusterd-authz-webhook-'));
  ca = await createCertificateAuthority('webhook-test-ca');
  serverPair = await issueCertificate(ca, { commonName: 'authz-webhook', ipAddresses: ['127.0.0.1'], usage: 'server' });
  clientPair = await issueCertificate(ca, { commonName: 'kube-apiserver', usage: 'client' });
  writeFileSync(join(dir, 'ca.crt'), ca.certPem);
  server = createServer({ cert: serverPair.certPem, key: serverPair.keyPem, ca: ca.certPem, requestCert: true, rejectUnauthorized: false }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Review;
      const peer = (req.socket as TLSSocket).getPeerCertificate();
      received.push({ review, clientCN: typeof peer?.subject?.CN === 'string' ? peer.subject.CN : undefined, auth: req.headers.authorization });
      const reply = answer(review);
      const send = (): void => {
        if (res.destroyed) return;
        res.writeHead(reply.status ?? 200, { 'content-type': 'application/json', ...reply.headers });
        res.end(reply.raw ?? JSON.stringify(reply.body ?? {}));
      };
      if (reply.delayMs) setTimeout(send, reply.delayMs);
      else send();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
  rmSync(dir, { recursive: true, force: true });
});

beforeEach(() => {
  received = [];
  answer = (review) => statusReply(review, { allowed: true });
});

const b64 = (s: string): string => Buffer.from(s).toString('base64');

/** A kubeconfig naming the test server; the CA by a path relative to the file, the client by inline data. */
function kubeconfig(server = `https://127.0.0.1:${port}/authorize`, name = 'kubeconfig.yaml'): string {
  const path = join(dir, name);
  writeFileSync(
    path,
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      '- name: authz',
      '  cluster:',
      `    server: ${server}`,
      '    certificate-authority: ca.crt',
      'users:',
      '- name: apiserver',
      '  user:',
      `    client-certificate-data: ${b64(clientPair.certPem)}`,
      `    client-key-data: ${b64(clientPair.keyPem)}`,
      '    token: webhook-token',
      'contexts:',
      '- name: default',
      '  context: {cluster: authz, user: apiserver}',
      'current-context: default',
      '',
    ].join('\n'),
  );
  return path;
}

function config(over: Partial<WebhookAuthorizerConfig> = {}): WebhookAuthorizerConfig {
  return {
    authorizedTtlMs: 0,
    cacheAuthorizedRequests: false,
    unauthorizedTtlMs: 0,
    cacheUnauthorizedRequests: false,
    timeoutMs: 5_000,
    subjectAccessReviewVersion: 'v1',
    matchConditionSubjectAccessReviewVersion: 'v1',
    failurePolicy: 'NoOpinion',
    kubeConfigFile: kubeconfig(),
    matchConditions: [],
    ...over,
  };
}

const FAST_RETRY = { initialMs: 5, factor: 1.5, jitter: 0.2, steps: 3 };

function make(over: Partial<WebhookAuthorizerConfig> = {}, deps: Partial<WebhookAuthorizerDeps> = {}): Authorizer {
  return createWebhookAuthorizer(config(over), { log: silentLogger, name: 'wh1.example.com', retryBackoff: FAST_RETRY, ...deps });
}

function attrs(over: Partial<Attributes> = {}): Attributes {
  return {
    user: { name: 'jane', uid: 'u-1', groups: ['devs', 'system:authenticated'], extra: { scopes: ['a', 'b'] } },
    verb: 'get',
    isResourceRequest: true,
    path: '/apis/apps/v1/namespaces/ns1/deployments/web',
    namespace: 'ns1',
    apiGroup: 'apps',
    apiVersion: 'v1',
    resource: 'deployments',
    subresource: '',
    name: 'web',
    ...over,
  };
}

async function metricValue(registry: Registry, name: string, labels: Record<string, string>, suffix = ''): Promise<number> {
  const metric = registry.getSingleMetric(name);
  if (!metric) return 0;
  const got = await metric.get();
  const v = got.values.find((x) => (suffix ? (x as { metricName?: string }).metricName === name + suffix : true) && Object.entries(labels).every(([k, val]) => x.labels[k] === val));
  return v?.value ?? 0;
}

describe('webhook authorizer: the review and the answers', () => {
  it('sends a v1 SubjectAccessReview with the user and resource attributes, over TLS with the client certificate and token', async () => {
    const d = await make().authorize(attrs());
    expect(d).toEqual({ decision: 'allow', reason: '' });
    expect(received).toHaveLength(1);
    const { review, clientCN, auth } = received[0]!;
    expect(clientCN).toBe('kube-apiserver');
    expect(auth).toBe('Bearer webhook-token');
    expect(review.apiVersion).toBe('authorization.k8s.io/v1');
    expect(review.kind).toBe('SubjectAccessReview');
    expect(review.spec).toEqual({
      user: 'jane',
      uid: 'u-1',
      groups: ['devs', 'system:authenticated'],
      extra: { scopes: ['a', 'b'] },
      resourceAttributes: { namespace: 'ns1', verb: 'get', group: 'apps', version: 'v1', resource: 'deployments', name: 'web' },
    });
  });

  it('sends non-resource requests as nonResourceAttributes', async () => {
    await make().authorize(attrs({ isResourceRequest: false, path: '/healthz', verb: 'get', namespace: '', apiGroup: '', apiVersion: '', resource: '', name: '' }));
    expect(received[0]!.review.spec['nonResourceAttributes']).toEqual({ path: '/healthz', verb: 'get' });
    expect(received[0]!.review.spec['resourceAttributes']).toBeUndefined();
  });

  it('maps allowed, denied and neither to allow, deny and no opinion, passing reason and evaluationError on', async () => {
    const z = make();
    answer = (r) => statusReply(r, { allowed: true, reason: 'ok by policy' });
    expect(await z.authorize(attrs())).toEqual({ decision: 'allow', reason: 'ok by policy' });
    answer = (r) => statusReply(r, { allowed: false, denied: true, reason: 'forbidden by policy' });
    expect(await z.authorize(attrs())).toEqual({ decision: 'deny', reason: 'forbidden by policy' });
    answer = (r) => statusReply(r, { allowed: false, reason: 'not mine', evaluationError: 'partial data' });
    expect(await z.authorize(attrs())).toEqual({ decision: 'noOpinion', reason: 'not mine', evaluationError: 'partial data' });
    answer = (r) => statusReply(r, { allowed: true, denied: true, reason: 'confused' });
    const both = await z.authorize(attrs());
    expect(both.decision).toBe('deny');
    expect(both.evaluationError).toMatch(/both allow and deny/);
  });

  it('sends v1beta1 with `group` for the groups, and the naming decides the wire group', async () => {
    await make({ subjectAccessReviewVersion: 'v1beta1' }).authorize(attrs());
    const review = received[0]!.review;
    expect(review.apiVersion).toBe('authorization.k8s.io/v1beta1');
    expect(review.spec['group']).toEqual(['devs', 'system:authenticated']);
    expect(review.spec).not.toHaveProperty('groups');

    answer = (r) => statusReply(r, { allowed: true });
    const d = await make({}, { naming: createNaming('cluster') }).authorize(attrs());
    expect(received[1]!.review.apiVersion).toBe('authorization.cluster.io/v1');
    expect(d.decision).toBe('allow');
  });

  it('sends the request selectors parsed, as requirements', async () => {
    const field = tryParseFieldSelector('spec.nodeName=n1,status.phase!=Failed');
    const label = tryParseLabelSelector('app in (web,api),tier!=db,canary,!legacy,version>3');
    if (!('selector' in field) || !('selector' in label)) throw new Error('selectors must parse');
    await make().authorize(attrs({ verb: 'list', name: '', fieldSelector: field.selector.requirements, labelSelector: label.selector.requirements }));
    const ra = received[0]!.review.spec['resourceAttributes'] as Record<string, unknown>;
    expect(ra['fieldSelector']).toEqual({
      requirements: [
        { key: 'spec.nodeName', operator: 'In', values: ['n1'] },
        { key: 'status.phase', operator: 'NotIn', values: ['Failed'] },
      ],
    });
    // `version>3` has no SubjectAccessReview form: it is left out (selectors only narrow).
    expect(ra['labelSelector']).toEqual({
      requirements: [
        { key: 'app', operator: 'In', values: ['api', 'web'] },
        { key: 'canary', operator: 'Exists' },
        { key: 'legacy', operator: 'DoesNotExist' },
        { key: 'tier', operator: 'NotIn', values: ['db'] },
      ],
    });
  });

  it('takes the selectors of list, watch and deletecollection requests from the query (attributesOf)', () => {
    const info = { isResourceRequest: true, path: '/api/v1/pods', verb: 'list', apiPrefix: 'api', apiGroup: '', apiVersion: 'v1', namespace: '', resource: 'pods', subresource: '', name: '', parts: [] };
    const c = (verb: string) => ({ get: ((k: 'info' | 'user') => (k === 'info' ? { ...info, verb } : { name: 'jane', groups: [] })) as never });
    const listed = attributesOf(c('list'), { fieldSelector: 'spec.nodeName=n1', labelSelector: 'app=web' });
    expect(listed.fieldSelector).toEqual([{ field: 'spec.nodeName', operator: '=', value: 'n1' }]);
    expect(listed.labelSelector?.map((r) => r.key)).toEqual(['app']);
    expect(attributesOf(c('get'), { fieldSelector: 'spec.nodeName=n1' }).fieldSelector).toBeUndefined();
    expect(attributesOf(c('watch'), { labelSelector: 'a in (' }).labelSelector).toBeUndefined();
  });
});

describe('webhook authorizer: failures and the failure policy', () => {
  it('a reply later than the timeout is a failure: no opinion and fail-open counted under NoOpinion', async () => {
    const registry = new Registry();
    answer = (r) => ({ ...statusReply(r, { allowed: true }), delayMs: 1_000 });
    const d = await make({ timeoutMs: 100 }, { registry }).authorize(attrs());
    expect(d.decision).toBe('noOpinion');
    expect(d.evaluationError).toMatch(/did not answer within 100ms/);
    expect(d.reason).toBe(d.evaluationError);
    expect(await metricValue(registry, 'apiserver_authorization_webhook_evaluations_total', { name: 'wh1.example.com', result: 'timeout' })).toBe(1);
    expect(await metricValue(registry, 'apiserver_authorization_webhook_evaluations_fail_open_total', { name: 'wh1.example.com', result: 'timeout' })).toBe(1);
    expect(await metricValue(registry, 'apiserver_authorization_webhook_duration_seconds', { name: 'wh1.example.com', result: 'timeout' }, '_count')).toBe(1);
  });

  it('under Deny a failure denies, and is not counted as fail-open', async () => {
    const registry = new Registry();
    answer = () => ({ raw: 'this is not JSON' });
    const d = await make({ failurePolicy: 'Deny' }, { registry }).authorize(attrs());
    expect(d.decision).toBe('deny');
    expect(d.evaluationError).toMatch(/did not answer JSON/);
    expect(await metricValue(registry, 'apiserver_authorization_webhook_evaluations_total', { name: 'wh1.example.com', result: 'error' })).toBe(1);
    expect(await metricValue(registry, 'apiserver_authorization_webhook_evaluations_fail_open_total', { name: 'wh1.example.com', result: 'error' })).toBe(0);
  });

  it('a malformed reply (wrong apiVersion or kind) is a failure', async () => {
    answer = () => ({ body: { apiVersion: 'authorization.k8s.io/v1beta1', kind: 'SubjectAccessReview', status: { allowed: true } } });
    const wrongVersion = await make().authorize(attrs());
    expect(wrongVersion.decision).toBe('noOpinion');
    expect(wrongVersion.evaluationError).toMatch(/expected a SubjectAccessReview of authorization.k8s.io\/v1 in reply, got authorization.k8s.io\/v1beta1 SubjectAccessReview/);
    answer = () => ({ body: { apiVersion: 'authorization.k8s.io/v1', kind: 'TokenReview', status: { allowed: true } } });
    expect((await make({ failurePolicy: 'Deny' }).authorize(attrs())).decision).toBe('deny');
  });

  it('a non-2xx answer is a failure; 403 is not retried, 500 is (then succeeds)', async () => {
    answer = () => ({ status: 403, body: { kind: 'Status' } });
    const d = await make().authorize(attrs());
    expect(d.decision).toBe('noOpinion');
    expect(d.evaluationError).toMatch(/answered HTTP 403/);
    expect(received).toHaveLength(1);

    received = [];
    let n = 0;
    answer = (r) => (++n < 3 ? { status: 500, body: {} } : statusReply(r, { allowed: true }));
    expect((await make().authorize(attrs())).decision).toBe('allow');
    expect(received).toHaveLength(3);

    received = [];
    answer = () => ({ status: 500, body: {} });
    const exhausted = await make({ failurePolicy: 'Deny' }).authorize(attrs());
    expect(exhausted.decision).toBe('deny');
    expect(received).toHaveLength(FAST_RETRY.steps);
  });

  it('a server the CA does not vouch for is a failure', async () => {
    const other = await createCertificateAuthority('someone-else');
    writeFileSync(join(dir, 'other-ca.crt'), other.certPem);
    const path = kubeconfig(undefined, 'other.yaml');
    writeFileSync(path, (await import('node:fs')).readFileSync(path, 'utf8').replace('certificate-authority: ca.crt', 'certificate-authority: other-ca.crt'));
    const d = await make({ kubeConfigFile: path }).authorize(attrs());
    expect(d.decision).toBe('noOpinion');
    expect(d.evaluationError).toMatch(/certificate/);
    expect(received).toHaveLength(0);
  });
});

describe('webhook authorizer: construction', () => {
  it('refuses a plain-HTTP server URL', () => {
    expect(() => make({ kubeConfigFile: kubeconfig(`http://127.0.0.1:${port}/authorize`, 'http.yaml') })).toThrow(WebhookConfigError);
    expect(() => make({ kubeConfigFile: kubeconfig(`http://127.0.0.1:${port}/authorize`, 'http.yaml') })).toThrow(/is not https/);
  });

  it('refuses a timeout above 30s, more than 64 match conditions, duplicates and expressions that do not compile', () => {
    expect(() => make({ timeoutMs: 31_000 })).toThrow(/at most 30s/);
    expect(() => make({ matchConditions: Array.from({ length: 65 }, (_, i) => ({ expression: `request.user == 'u${i}'` })) })).toThrow(/at most 64/);
    expect(() => make({ matchConditions: [{ expression: 'true' }, { expression: 'true' }] })).toThrow(/Duplicate value/);
    expect(() => make({ matchConditions: [{ expression: 'request.user ==' }] })).toThrow(/matchConditions\[0\]\.expression: Invalid value/);
    // Type checked at load: not a bool, an undeclared variable.
    expect(() => make({ matchConditions: [{ expression: "'a' + 'b'" }] })).toThrow(/must evaluate to one of bool, not string/);
    expect(() => make({ matchConditions: [{ expression: "object.x == 'y'" }] })).toThrow(/matchConditions\[0\]\.expression: Invalid value/);
  });
});

describe('webhook authorizer: match conditions', () => {
  const conditions = [
    { expression: "has(request.resourceAttributes) && request.resourceAttributes.namespace == 'ns1'" },
    { expression: "!('system:masters' in request.groups) && !request.user.startsWith('bob')" },
  ];

  it('all true calls the webhook, any false skips it (no opinion) and is counted', async () => {
    const registry = new Registry();
    const z = make({ matchConditions: conditions }, { registry });
    expect((await z.authorize(attrs())).decision).toBe('allow');
    expect(received).toHaveLength(1);
    expect(await z.authorize(attrs({ namespace: 'other' }))).toEqual({ decision: 'noOpinion', reason: '' });
    expect(await z.authorize(attrs({ user: { name: 'bob', groups: [] } }))).toEqual({ decision: 'noOpinion', reason: '' });
    expect(await z.authorize(attrs({ isResourceRequest: false, path: '/healthz', namespace: '' }))).toEqual({ decision: 'noOpinion', reason: '' });
    expect(received).toHaveLength(1);
    expect(await metricValue(registry, 'apiserver_authorization_match_condition_exclusions_total', { type: 'Webhook', name: 'wh1.example.com' })).toBe(3);
    expect(await metricValue(registry, 'apiserver_authorization_match_condition_evaluation_seconds', { type: 'Webhook', name: 'wh1.example.com' }, '_count')).toBe(4);
  });

  it('an error with no false applies the policy: skip under NoOpinion, deny under Deny; a false still wins over an error', async () => {
    const registry = new Registry();
    // Not a boolean, and a missing key: both evaluation errors.
    const broken = [{ expression: 'request.user' }, { expression: "request.resourceAttributes.nosuchfield == 'x'" }];
    const lenient = await make({ matchConditions: broken }, { registry }).authorize(attrs());
    expect(lenient.decision).toBe('noOpinion');
    expect(lenient.evaluationError).toMatch(/expression 'request.user' eval result type should be bool but got string/);
    expect(lenient.evaluationError).toMatch(/nosuchfield/);
    const strict = await make({ matchConditions: broken, failurePolicy: 'Deny' }, { registry }).authorize(attrs());
    expect(strict.decision).toBe('deny');
    expect(received).toHaveLength(0);
    expect(await metricValue(registry, 'apiserver_authorization_match_condition_evaluation_errors_total', { type: 'Webhook', name: 'wh1.example.com' })).toBe(2);

    const falseWins = await make({ matchConditions: [{ expression: 'request.user' }, { expression: "request.user == 'nobody'" }], failurePolicy: 'Deny' }).authorize(attrs());
    expect(falseWins).toEqual({ decision: 'noOpinion', reason: '' });
  });

  it('an access review reports a skipped-by-error webhook as its evaluationError', async () => {
    const z = make({ matchConditions: [{ expression: 'request.user' }] });
    const d = await decide([z], attrs());
    expect(d.decision).toBe('noOpinion');
    expect(d.evaluationError).toMatch(/eval result type should be bool/);
  });
});

describe('webhook authorizer: caches', () => {
  it('an allow is answered from the cache within authorizedTTL, asked again after it', async () => {
    let clock = 1_000_000;
    const z = make({ authorizedTtlMs: 5_000, cacheAuthorizedRequests: true }, { now: () => clock });
    expect((await z.authorize(attrs())).decision).toBe('allow');
    expect((await z.authorize(attrs())).decision).toBe('allow');
    expect(received).toHaveLength(1);
    // A different question is a different key.
    await z.authorize(attrs({ verb: 'update' }));
    expect(received).toHaveLength(2);
    clock += 5_001;
    await z.authorize(attrs());
    expect(received).toHaveLength(3);
  });

  it('deny and no opinion are cached for unauthorizedTTL; failures are never cached', async () => {
    let clock = 1_000_000;
    const z = make({ authorizedTtlMs: 60_000, cacheAuthorizedRequests: true, unauthorizedTtlMs: 1_000, cacheUnauthorizedRequests: true }, { now: () => clock });
    answer = (r) => statusReply(r, { allowed: false, denied: true, reason: 'no' });
    expect((await z.authorize(attrs())).decision).toBe('deny');
    expect((await z.authorize(attrs())).decision).toBe('deny');
    expect(received).toHaveLength(1);
    clock += 1_001;
    answer = () => ({ raw: 'garbage' });
    expect((await z.authorize(attrs())).decision).toBe('noOpinion');
    expect((await z.authorize(attrs())).decision).toBe('noOpinion');
    expect(received).toHaveLength(3);
  });

  it('the cache switches turn each cache off', async () => {
    const z = make({ authorizedTtlMs: 60_000, cacheAuthorizedRequests: false, unauthorizedTtlMs: 60_000, cacheUnauthorizedRequests: true });
    await z.authorize(attrs());
    await z.authorize(attrs());
    expect(received).toHaveLength(2);
    answer = (r) => statusReply(r, { allowed: false });
    await z.authorize(attrs());
    await z.authorize(attrs());
    expect(received).toHaveLength(3);
  });
});
