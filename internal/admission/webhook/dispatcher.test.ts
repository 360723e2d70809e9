// The admission webhook dispatcher against a real HTTPS webhook server (own CA, caBundle):
// what the review carries, patches, denials, warnings, audit annotations, failures under each
// failure policy, selectors, match conditions, reinvocation, dry run, matchPolicy Equivalent,
// v1beta1, parallel validating calls, a service reference, metrics — under both namings.

import type { ServerResponse } from 'node:http';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { StatusError } from '../../apierrors/status.js';
import { silentLogger } from '../../log/logger.js';
import { createNaming, NAMING_MODES } from '../../naming/naming.js';
import { registerEventConversion } from '../../registry/event-conversion.js';
import { builtinRules } from '../../registry/builtin-rules.js';
import { ApiCatalog, type ResourceInfo } from '../../schema/catalog.js';
import { startHttpsWebhookServer, type HttpsWebhookServer, type ReceivedRequest } from '../../testserver/https-webhook-server.js';
import { EndpointServiceResolver } from '../../webhook/client-config.js';
import type { AdmissionRequest, JsonObject } from '../admission.js';
import { WebhookDispatcher } from './dispatcher.js';

registerEventConversion();

type Review = { apiVersion: string; kind: string; request: JsonObject & { uid: string; object: JsonObject | null; oldObject: JsonObject | null } };
const patchOf = (ops: unknown[]): string => Buffer.from(JSON.stringify(ops)).toString('base64');

describe.each(NAMING_MODES)('admission webhooks (%s naming)', (mode) => {
  const naming = createNaming(mode);
  const catalog = new ApiCatalog(naming);
  const rules = builtinRules(naming);
  const admissionGroup = naming.group('admission.k8s.io');
  const eventsGroup = naming.group('events.k8s.io');
  let server: HttpsWebhookServer;
  let mutating: JsonObject[] = [];
  let validating: JsonObject[] = [];
  let registry: Registry;
  let dispatcher: WebhookDispatcher;
  const namespaces: Record<string, Record<string, string>> = { prod: { env: 'prod' }, dev: { env: 'dev' } };
  // The service reference resolves through a Service and its Endpoints to the test server.
  const objects: Record<string, JsonObject> = {};

  beforeAll(async () => {
    server = await startHttpsWebhookServer({ dnsNames: ['hook.webhooks.svc'], handler: () => ({}) });
    objects['services/webhooks/hook'] = { spec: { ports: [{ name: 'https', port: 443 }] } };
    objects['endpoints/webhooks/hook'] = { subsets: [{ addresses: [{ ip: '127.0.0.1' }], ports: [{ name: 'https', port: server.port }] }] };
  });
  afterAll(() => server.close());
  beforeEach(() => {
    mutating = [];
    validating = [];
    server.received.length = 0;
    registry = new Registry();
    dispatcher = new WebhookDispatcher({
      naming,
      configurations: (m) => (m ? mutating : validating).map((c) => ({ bytes: Buffer.from(JSON.stringify(c)) })),
      equivalents: (r) => [...catalog.all()].filter((x) => x.storageResource === r.storageResource),
      namespaceLabels: async (name) => namespaces[name],
      resolver: new EndpointServiceResolver(async (resource, ns, name) => objects[`${resource}/${ns}/${name}`]),
      authorize: (a) => ({ decision: a.user.name === 'admin' ? 'allow' : 'noOpinion', reason: '' }),
      applyDefaults: (r, obj) => rules.applyDefaults(r, obj),
      registry,
      log: silentLogger,
    });
  });

  const hook = (name: string, extra: JsonObject = {}): JsonObject => ({
    name,
    clientConfig: { url: `${server.url}/${name}`, caBundle: server.caBundle },
    rules: [{ operations: ['CREATE', 'UPDATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'], scope: '*' }],
    failurePolicy: 'Fail',
    matchPolicy: 'Equivalent',
    sideEffects: 'None',
    timeoutSeconds: 5,
    admissionReviewVersions: ['v1'],
    namespaceSelector: {},
    objectSelector: {},
    ...extra,
  });
  const config = (name: string, ...webhooks: JsonObject[]): JsonObject => ({ metadata: { name }, webhooks });
  const resource = (group: string, version: string, plural: string): ResourceInfo => catalog.resource(naming.group(group), version, plural)!;
  const request = (fields: Partial<AdmissionRequest> = {}): AdmissionRequest => ({
    operation: 'CREATE',
    resource: resource('', 'v1', 'configmaps'),
    subresource: '',
    namespace: 'prod',
    name: 'cm',
    object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm', namespace: 'prod', labels: { app: 'a' } }, data: { k: 'v' } },
    oldObject: undefined,
    user: { name: 'alice', uid: 'u-1', groups: ['devs', 'system:authenticated'] },
    dryRun: false,
    warnings: [],
    ...fields,
  });
  /** Answers every review with `answer(review)` as the response (uid filled in). */
  const answer = (fn: (review: Review, r: ReceivedRequest) => JsonObject) =>
    server.handle((r) => {
      const review = JSON.parse(r.body) as Review;
      return { apiVersion: review.apiVersion, kind: 'AdmissionReview', response: { uid: review.request.uid, ...fn(review, r) } };
    });
  const failure = async (p: Promise<unknown>): Promise<string> => {
    try {
      await p;
      return 'ok';
    } catch (e) {
      if (e instanceof StatusError) return `${e.code} ${e.status.reason ?? ''} ${e.status.message}`;
      throw e;
    }
  };
  const reviews = () => server.received.map((r) => JSON.parse(r.body) as Review);

  it('sends the review as upstream fills it and applies a JSON patch, then defaults the object again', async () => {
    mutating = [config('cfg', hook('add-label.example.com'))];
    answer(() => ({ allowed: true, patchType: 'JSONPatch', patch: patchOf([{ op: 'add', path: '/metadata/labels/mutated', value: 'yes' }]) }));
    const annotations: Record<string, string> = {};
    const req = request({ annotate: (k, v) => (annotations[k] = v), fieldManager: 'kubectl' });
    await dispatcher.mutate(req);
    expect((req.object!.metadata as JsonObject).labels).toEqual({ app: 'a', mutated: 'yes' });
    const [review] = reviews();
    expect(review!.apiVersion).toBe(`${admissionGroup}/v1`);
    expect(server.received[0]!.path).toBe('/add-label.example.com?timeout=5s');
    const { uid, object, ...rest } = review!.request;
    expect(uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(object).toMatchObject({ metadata: { name: 'cm', labels: { app: 'a' } } });
    expect(rest).toEqual({
      kind: { group: '', version: 'v1', kind: 'ConfigMap' },
      resource: { group: '', version: 'v1', resource: 'configmaps' },
      requestKind: { group: '', version: 'v1', kind: 'ConfigMap' },
      requestResource: { group: '', version: 'v1', resource: 'configmaps' },
      name: 'cm',
      namespace: 'prod',
      operation: 'CREATE',
      userInfo: { username: 'alice', uid: 'u-1', groups: ['devs', 'system:authenticated'] },
      oldObject: null,
      dryRun: false,
      options: { kind: 'CreateOptions', apiVersion: `${naming.metaGroup}/v1`, fieldManager: 'kubectl' },
    });
    expect(JSON.parse(annotations[`mutation.webhook.${admissionGroup}/round_0_index_0`]!)).toEqual({ configuration: 'cfg', webhook: 'add-label.example.com', mutated: true });
    // A patched pod gets its defaults back (a container added by the patch gets its own).
    mutating = [config('cfg', hook('sidecar.example.com', { rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }] }))];
    answer(() => ({ allowed: true, patchType: 'JSONPatch', patch: patchOf([{ op: 'add', path: '/spec/containers/-', value: { name: 'sidecar', image: 'busybox' } }]) }));
    const pod = request({ resource: resource('', 'v1', 'pods'), object: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'i' }] } } });
    await dispatcher.mutate(pod);
    const sidecar = ((pod.object!.spec as JsonObject).containers as JsonObject[])[1]!;
    expect(sidecar).toMatchObject({ name: 'sidecar', image: 'busybox', terminationMessagePath: '/dev/termination-log', imagePullPolicy: 'Always' });
  });

  it('denies with upstream’s message and the code of the webhook’s status, passes warnings and audit annotations on', async () => {
    validating = [config('cfg', hook('deny.example.com'))];
    answer(() => ({ allowed: false, status: { code: 403, reason: 'Forbidden', message: 'configmaps need an owner' }, warnings: ['first warning'], auditAnnotations: { decision: 'no' } }));
    const annotations: Record<string, string> = {};
    const req = request({ annotate: (k, v) => (annotations[k] = v) });
    expect(await failure(dispatcher.validate(req))).toBe('403 Forbidden admission webhook "deny.example.com" denied the request: configmaps need an owner');
    expect(req.warnings).toEqual(['299 - "first warning"']);
    expect(annotations).toEqual({ 'deny.example.com/decision': 'no' });
    answer(() => ({ allowed: false }));
    expect(await failure(dispatcher.validate(request()))).toBe('400  admission webhook "deny.example.com" denied the request without explanation');
    const text = await registry.getSingleMetricAsString('apiserver_admission_webhook_rejection_count');
    expect(text).toContain('apiserver_admission_webhook_rejection_count{name="deny.example.com",type="validate",operation="CREATE",error_type="no_error",rejection_code="403"} 1');
    const requests = await registry.getSingleMetricAsString('apiserver_admission_webhook_request_total');
    expect(requests).toContain('apiserver_admission_webhook_request_total{name="deny.example.com",type="validate",operation="CREATE",code="400",rejected="true"} 1');
    expect(await registry.getSingleMetricAsString('apiserver_admission_webhook_admission_duration_seconds')).toContain('apiserver_admission_webhook_admission_duration_seconds_count{name="deny.example.com",type="validate",operation="CREATE",rejected="true"} 2');
  });

  it.each<[string, (review: Review, res: ServerResponse) => unknown, RegExp]>([
    ['time out', () => new Promise((resolve) => setTimeout(() => resolve({}), 1500)), /failed to call webhook: Post "https:\/\/127\.0\.0\.1:\d+\/broken\.example\.com\?timeout=1s": context deadline exceeded$/],
    ['crash (connection reset)', (_r, res) => res.socket?.destroy(), /failed to call webhook: Post "https:\/\/127\.0\.0\.1:\d+\/broken\.example\.com\?timeout=1s": .*(EOF|ECONNRESET|connection reset)/],
    ['answer garbage', (_r, res) => { res.writeHead(200, { 'content-type': 'application/json' }); res.end('<html>'); }, /received invalid webhook response: the response is not JSON$/],
    ['answer another uid', (r) => ({ apiVersion: r.apiVersion, kind: 'AdmissionReview', response: { uid: 'other', allowed: true } }), /received invalid webhook response: expected response.uid="[0-9a-f-]+", got "other"$/],
    ['answer another kind', () => ({ apiVersion: 'v1', kind: 'Status' }), new RegExp(`received invalid webhook response: expected webhook response of ${admissionGroup.replace(/\./g, '\\.')}/v1, Kind=AdmissionReview, got v1, Kind=Status$`)],
  ])('a webhook that does %s fails the request (Fail: 500) or is passed over (Ignore)', async (_what, behave, message) => {
    server.handle((r, res) => behave(JSON.parse(r.body) as Review, res));
    validating = [config('cfg', hook('broken.example.com', { timeoutSeconds: 1 }))];
    const failed = await failure(dispatcher.validate(request()));
    expect(failed).toMatch(/^500 InternalError Internal error occurred: failed calling webhook "broken\.example\.com": /);
    expect(failed).toMatch(message);
    validating = [config('cfg', hook('broken.example.com', { timeoutSeconds: 1, failurePolicy: 'Ignore' }))];
    expect(await failure(dispatcher.validate(request()))).toBe('ok');
    expect(await registry.getSingleMetricAsString('apiserver_admission_webhook_fail_open_count')).toContain('apiserver_admission_webhook_fail_open_count{name="broken.example.com",type="validate"} 1');
  });

  it('calls a webhook only for namespaces and objects its selectors match', async () => {
    answer(() => ({ allowed: true }));
    validating = [config('cfg', hook('ns.example.com', { namespaceSelector: { matchLabels: { env: 'prod' } } }), hook('obj.example.com', { objectSelector: { matchExpressions: [{ key: 'app', operator: 'In', values: ['b'] }] } }))];
    await dispatcher.validate(request());
    expect(server.received.map((r) => r.path)).toEqual(['/ns.example.com?timeout=5s']);
    server.received.length = 0;
    await dispatcher.validate(request({ namespace: 'dev', object: { metadata: { name: 'cm', labels: { app: 'b' } } } }));
    expect(server.received.map((r) => r.path)).toEqual(['/obj.example.com?timeout=5s']);
    // The old object's labels are enough, as upstream.
    server.received.length = 0;
    await dispatcher.validate(request({ operation: 'UPDATE', namespace: 'dev', oldObject: { metadata: { name: 'cm', labels: { app: 'b' } } } }));
    expect(server.received.map((r) => r.path)).toEqual(['/obj.example.com?timeout=5s']);
    // A Namespace is matched by its own labels.
    server.received.length = 0;
    validating = [config('cfg', hook('ns.example.com', { namespaceSelector: { matchLabels: { env: 'prod' } }, rules: [{ operations: ['*'], apiGroups: [''], apiVersions: ['v1'], resources: ['namespaces'] }] }))];
    await dispatcher.validate(request({ resource: resource('', 'v1', 'namespaces'), namespace: '', name: 'other', object: { metadata: { name: 'other', labels: { env: 'prod' } } } }));
    await dispatcher.validate(request({ resource: resource('', 'v1', 'namespaces'), namespace: '', name: 'other2', object: { metadata: { name: 'other2' } } }));
    expect(reviews().map((r) => r.request.name)).toEqual(['other']);
  });

  it('matches rules by operation, group, version, resource, sub-resource and scope', async () => {
    answer(() => ({ allowed: true }));
    const rule = (resources: string[], extra: JsonObject = {}) => ({ rules: [{ operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources, ...extra }] });
    validating = [
      config('cfg', hook('star.example.com', rule(['*'])), hook('status.example.com', rule(['pods/status'])), hook('all.example.com', rule(['*/*'])), hook('cluster.example.com', rule(['*'], { scope: 'Cluster' })), hook('delete.example.com', { rules: [{ operations: ['DELETE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }] })),
    ];
    const called = async (req: AdmissionRequest) => {
      server.received.length = 0;
      await dispatcher.validate(req);
      return server.received.map((r) => r.path.replace(/\?.*/, '').slice(1).replace('.example.com', '')).sort();
    };
    const pods = resource('', 'v1', 'pods');
    expect(await called(request({ resource: pods }))).toEqual(['all', 'star']);
    expect(await called(request({ resource: pods, operation: 'UPDATE', subresource: 'status', oldObject: {} }))).toEqual(['all', 'status']);
    expect(await called(request({ resource: pods, operation: 'DELETE', object: undefined, oldObject: { metadata: { name: 'cm' } } }))).toEqual(['all', 'delete', 'star']);
    expect(await called(request({ resource: resource('', 'v1', 'nodes'), namespace: '' }))).toEqual(['all', 'cluster', 'star']);
  });

  it('match conditions: false skips the webhook; an error follows the failure policy', async () => {
    answer(() => ({ allowed: true }));
    const conditions = (failurePolicy: string, ...expressions: string[]) => ({ failurePolicy, matchConditions: expressions.map((expression, i) => ({ name: `c${i}`, expression })) });
    validating = [config('cfg', hook('cel.example.com', conditions('Fail', "request.userInfo.username == 'alice'", "object.metadata.labels.app == 'a'", 'oldObject == null', "authorizer.group('').resource('configmaps').check('delete').allowed() == false")))];
    await dispatcher.validate(request());
    expect(server.received).toHaveLength(1);
    await dispatcher.validate(request({ user: { name: 'bob', groups: [] } }));
    expect(server.received).toHaveLength(1);
    // The admin may delete configmaps: the last condition is false.
    await dispatcher.validate(request({ user: { name: 'admin', groups: [] } }));
    expect(server.received).toHaveLength(1);
    validating = [config('cfg', hook('cel.example.com', conditions('Fail', 'object.spec.missing == 1')))];
    expect(await failure(dispatcher.validate(request()))).toMatch(/^403 Forbidden configmaps "cm" is forbidden: failed to evaluate match conditions for webhook "cel\.example\.com": expression 'c0' resulted in error: /);
    validating = [config('cfg', hook('cel.example.com', conditions('Ignore', 'object.spec.missing == 1')))];
    expect(await failure(dispatcher.validate(request()))).toBe('ok');
    // A false condition decides even when another one errs.
    validating = [config('cfg', hook('cel.example.com', conditions('Fail', 'object.spec.missing == 1', 'false')))];
    expect(await failure(dispatcher.validate(request()))).toBe('ok');
    expect(server.received).toHaveLength(1);
  });

  it('reinvokes an IfNeeded webhook once when a later webhook changed the object', async () => {
    mutating = [config('a', hook('first.example.com', { reinvocationPolicy: 'IfNeeded' })), config('b', hook('second.example.com', { reinvocationPolicy: 'Never' }))];
    server.handle((r) => {
      const review = JSON.parse(r.body) as Review;
      const labels = ((review.request.object!.metadata as JsonObject).labels ?? {}) as Record<string, string>;
      const ops = r.path.startsWith('/first')
        ? [{ op: 'add', path: '/metadata/labels/saw-second', value: String('second' in labels) }]
        : 'second' in labels ? [] : [{ op: 'add', path: '/metadata/labels/second', value: 'yes' }];
      return { apiVersion: review.apiVersion, kind: 'AdmissionReview', response: { uid: review.request.uid, allowed: true, patchType: 'JSONPatch', patch: patchOf(ops) } };
    });
    const req = request();
    await dispatcher.mutate(req);
    expect(server.received.map((r) => r.path.replace(/\?.*/, ''))).toEqual(['/first.example.com', '/second.example.com', '/first.example.com']);
    expect((req.object!.metadata as JsonObject).labels).toEqual({ app: 'a', 'saw-second': 'true', second: 'yes' });
    // Without IfNeeded, or without a later change, nothing is called twice.
    server.received.length = 0;
    mutating = [config('a', hook('first.example.com', { reinvocationPolicy: 'Never' })), config('b', hook('second.example.com'))];
    await dispatcher.mutate(request());
    expect(server.received).toHaveLength(2);
  });

  it('dry run: a webhook with side effects refuses it without a call; NoneOnDryRun is called with dryRun true', async () => {
    answer(() => ({ allowed: true }));
    for (const sideEffects of ['Unknown', 'Some']) {
      validating = [config('cfg', hook('effects.example.com', { sideEffects, failurePolicy: 'Ignore' }))];
      expect(await failure(dispatcher.validate(request({ dryRun: true })))).toBe('400 BadRequest admission webhook "effects.example.com" does not support dry run');
    }
    expect(server.received).toHaveLength(0);
    validating = [config('cfg', hook('effects.example.com', { sideEffects: 'NoneOnDryRun' }))];
    await dispatcher.validate(request({ dryRun: true }));
    expect(reviews()[0]!.request).toMatchObject({ dryRun: true, options: { dryRun: ['All'] } });
  });

  it('matchPolicy Equivalent sends another group’s version of the object and converts the patch back; Exact does not call', async () => {
    const eventsRule = { rules: [{ operations: ['CREATE'], apiGroups: [eventsGroup], apiVersions: ['v1'], resources: ['events'] }] };
    mutating = [config('cfg', hook('events.example.com', eventsRule))];
    answer((review) => {
      expect(review.request.object).toMatchObject({ apiVersion: `${eventsGroup}/v1`, kind: 'Event', note: 'hello', regarding: { name: 'p' } });
      return { allowed: true, patchType: 'JSONPatch', patch: patchOf([{ op: 'replace', path: '/note', value: 'patched' }]) };
    });
    const event = { apiVersion: 'v1', kind: 'Event', metadata: { name: 'e', namespace: 'prod' }, message: 'hello', involvedObject: { kind: 'Pod', name: 'p' }, reason: 'r', type: 'Normal' };
    const req = request({ resource: resource('', 'v1', 'events'), name: 'e', object: structuredClone(event) });
    await dispatcher.mutate(req);
    expect(req.object).toMatchObject({ apiVersion: 'v1', kind: 'Event', message: 'patched', involvedObject: { name: 'p' } });
    expect(reviews()[0]!.request).toMatchObject({
      kind: { group: eventsGroup, version: 'v1', kind: 'Event' },
      resource: { group: eventsGroup, version: 'v1', resource: 'events' },
      requestKind: { group: '', version: 'v1', kind: 'Event' },
      requestResource: { group: '', version: 'v1', resource: 'events' },
    });
    server.received.length = 0;
    mutating = [config('cfg', hook('events.example.com', { ...eventsRule, matchPolicy: 'Exact' }))];
    await dispatcher.mutate(request({ resource: resource('', 'v1', 'events'), name: 'e', object: structuredClone(event) }));
    expect(server.received).toHaveLength(0);
  });

  it('speaks v1beta1 to a webhook that only accepts it', async () => {
    mutating = [config('cfg', hook('old.example.com', { admissionReviewVersions: ['v1beta2', 'v1beta1'] }))];
    // A v1beta1 answer need not repeat the uid, and may leave patchType out.
    server.handle((r) => ({ apiVersion: (JSON.parse(r.body) as Review).apiVersion, kind: 'AdmissionReview', response: { allowed: true, patch: patchOf([{ op: 'add', path: '/data/x', value: 'y' }]) } }));
    const req = request();
    await dispatcher.mutate(req);
    expect(reviews()[0]!.apiVersion).toBe(`${admissionGroup}/v1beta1`);
    expect(req.object!.data).toEqual({ k: 'v', x: 'y' });
  });

  it('calls validating webhooks in parallel', async () => {
    // Each answer waits until both calls have arrived: sequential calls would time out.
    let arrived = 0;
    let release: () => void = () => {};
    const both = new Promise<void>((resolve) => (release = resolve));
    server.handle(async (r) => {
      if (++arrived === 2) release();
      await both;
      const review = JSON.parse(r.body) as Review;
      return { apiVersion: review.apiVersion, kind: 'AdmissionReview', response: { uid: review.request.uid, allowed: true } };
    });
    validating = [config('a', hook('one.example.com', { timeoutSeconds: 2 })), config('b', hook('two.example.com', { timeoutSeconds: 2 }))];
    expect(await failure(dispatcher.validate(request()))).toBe('ok');
    expect(arrived).toBe(2);
  });

  it('reaches a webhook through a service reference, checking the certificate for <service>.<namespace>.svc', async () => {
    answer(() => ({ allowed: false, status: { message: 'through the service' } }));
    validating = [config('cfg', hook('svc.example.com', { clientConfig: { service: { namespace: 'webhooks', name: 'hook', path: '/validate', port: 443 }, caBundle: server.caBundle } }))];
    expect(await failure(dispatcher.validate(request()))).toBe('400  admission webhook "svc.example.com" denied the request: through the service');
    expect(server.received[0]!.path).toBe('/validate?timeout=5s');
    validating = [config('cfg', hook('svc.example.com', { clientConfig: { service: { namespace: 'webhooks', name: 'missing', path: '/validate', port: 443 }, caBundle: server.caBundle } }))];
    expect(await failure(dispatcher.validate(request()))).toBe('500 InternalError Internal error occurred: failed calling webhook "svc.example.com": failed to call webhook: Post "https://missing.webhooks.svc:443/validate?timeout=5s": service "missing" not found');
  });

  it('never sends webhook configurations themselves to webhooks', async () => {
    answer(() => ({ allowed: false }));
    validating = [config('cfg', hook('all.example.com', { rules: [{ operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*/*'] }] }))];
    const r = resource('admissionregistration.k8s.io', 'v1', 'validatingwebhookconfigurations');
    expect(await failure(dispatcher.validate(request({ resource: r, namespace: '', name: 'cfg', object: { metadata: { name: 'cfg' } } })))).toBe('ok');
    expect(await failure(dispatcher.validate(request()))).toMatch(/^400 .*denied the request/);
  });
});
