// matchPolicy Equivalent for a custom resource whose versions a conversion webhook converts
// (issue 18 §2, §3), under both namings, against a real server and one real HTTPS server that
// is both the CRD's conversion webhook (/convert) and an admission webhook (/admit): a
// ValidatingAdmissionPolicy and a mutating webhook registered for v2 see a v1 write converted to
// v2 by the conversion webhook, the webhook's patch is converted back to v1, and a failing
// conversion fails the request as upstream's admission does.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { startTestServer, type TestServer } from '../testserver/test-server.js';
import { startHttpsWebhookServer, type HttpsWebhookServer, type ReceivedRequest } from '../testserver/https-webhook-server.js';
import { hostPortCrd, hostPortReply } from '../testserver/host-port-converter.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- free-form JSON bodies

async function waitFor(cond: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 25));
  }
}

const NS = 'adm-conv';
const V1 = `/apis/conv.example.com/v1/namespaces/${NS}/backends`;
const v1 = (name: string, host: string, port: number): Obj => ({ apiVersion: 'conv.example.com/v1', kind: 'Backend', metadata: { name }, spec: { host, port } });

/** What an admission webhook was sent: parsed AdmissionReviews at /admit. */
const admissionReviews = (hook: HttpsWebhookServer): Obj[] => hook.received.filter((r) => r.path.startsWith('/admit')).map((r) => JSON.parse(r.body) as Obj);
const conversionTargets = (hook: HttpsWebhookServer): string[] => hook.received.filter((r) => r.path.startsWith('/convert')).map((r) => (JSON.parse(r.body) as Obj).request.desiredAPIVersion as string);

/** The admission webhook: every v2 Backend's port becomes 443 (a JSON patch on the v2 object). */
function admit(req: ReceivedRequest): Obj {
  const review = JSON.parse(req.body) as Obj;
  const hostPort = String(review.request.object.spec.hostPort);
  const patch = [{ op: 'replace', path: '/spec/hostPort', value: `${hostPort.split(':')[0]}:443` }];
  return { apiVersion: review.apiVersion, kind: 'AdmissionReview', response: { uid: review.request.uid, allowed: true, patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(patch)).toString('base64') } };
}

describe.each(['cluster', 'kubernetes'] as const)('matchPolicy Equivalent through a conversion webhook (--naming=%s)', (naming) => {
  const domain = naming === 'cluster' ? 'cluster.io' : 'k8s.io';
  const AR = `admissionregistration.${domain}/v1`;
  let t: TestServer;
  let hook: HttpsWebhookServer;
  let conversionBroken = false;

  beforeAll(async () => {
    hook = await startHttpsWebhookServer({
      handler: (req, res) => {
        if (req.path.startsWith('/admit')) return admit(req);
        if (conversionBroken) {
          res.writeHead(500).end('conversion down');
          return undefined;
        }
        return hostPortReply(req);
      },
    });
    t = await startTestServer({ naming });
    const crd = hostPortCrd(`apiextensions.${domain}`, { strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1'], clientConfig: { url: `${hook.url}/convert`, caBundle: hook.caBundle } } });
    const r = await t.admin.post(`/apis/apiextensions.${domain}/v1/customresourcedefinitions`, crd);
    expect(r.status, r.text()).toBeLessThan(300);
    expect((await t.admin.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS, labels: { conv: 'on' } } })).status).toBeLessThan(300);
    await waitFor(async () => (await t.admin.get(V1)).status === 200);
  });
  afterAll(async () => {
    await t?.stop();
    await hook?.close();
  });

  it('a ValidatingAdmissionPolicy for v2 sees a v1 write as v2, converted by the webhook; a failed conversion fails under Fail', async () => {
    const rules = { resourceRules: [{ apiGroups: ['conv.example.com'], apiVersions: ['v2'], operations: ['CREATE', 'UPDATE'], resources: ['backends'] }], namespaceSelector: { matchLabels: { conv: 'on' } } };
    const policy = {
      apiVersion: AR,
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name: 'hostport-443' },
      spec: {
        failurePolicy: 'Fail',
        matchConstraints: { ...rules, matchPolicy: 'Equivalent' },
        validations: [
          { expression: "object.apiVersion == 'conv.example.com/v2' && request.kind.version == 'v2' && request.requestKind.version == 'v1'", message: 'not seen as v2' },
          { expression: "object.spec.hostPort.endsWith(':443')", messageExpression: "'hostPort ' + object.spec.hostPort + ' is not on 443'" },
        ],
      },
    };
    expect((await t.admin.post(`/apis/${AR}/validatingadmissionpolicies`, policy)).status).toBeLessThan(300);
    const binding = { apiVersion: AR, kind: 'ValidatingAdmissionPolicyBinding', metadata: { name: 'hostport-443' }, spec: { policyName: 'hostport-443', validationActions: ['Deny'] } };
    expect((await t.admin.post(`/apis/${AR}/validatingadmissionpolicybindings`, binding)).status).toBeLessThan(300);

    let denied: { status: number; json<T>(): T } | undefined;
    await waitFor(async () => {
      denied = await t.admin.post(V1, v1('web', 'web', 80));
      return denied.status !== 200 && denied.status !== 201;
    });
    expect(denied!.status).toBe(422);
    expect(denied!.json<Obj>().message).toBe(
      `backends.conv.example.com "web" is forbidden: ValidatingAdmissionPolicy 'hostport-443' with binding 'hostport-443' denied request: hostPort web:80 is not on 443`,
    );
    hook.received.length = 0;
    const ok = await t.admin.post(V1, v1('web', 'web', 443));
    expect(ok.status).toBe(200);
    // The policy's view: one review to v2 (the stored and answered version is v1: no other call).
    expect(conversionTargets(hook)).toEqual(['conv.example.com/v2']);

    conversionBroken = true;
    try {
      const failed = await t.admin.post(V1, v1('api', 'api', 443));
      expect(failed.status).toBe(422);
      expect(failed.json<Obj>().message).toContain(
        "ValidatingAdmissionPolicy 'hostport-443' with binding 'hostport-443' denied request: failed to configure binding: failed to convert object version: conversion webhook for conv.example.com/v1, Kind=Backend failed:",
      );
      expect((await t.admin.get(`${V1}/api`)).status).toBe(404);
    } finally {
      conversionBroken = false;
    }
  });

  it('a mutating webhook for v2 gets the v2 object and its patch is converted back to v1; a failed conversion is a 500', async () => {
    const configuration = {
      apiVersion: AR,
      kind: 'MutatingWebhookConfiguration',
      metadata: { name: 'port-443' },
      webhooks: [
        {
          name: 'port-443.conv.example.com',
          rules: [{ apiGroups: ['conv.example.com'], apiVersions: ['v2'], operations: ['CREATE'], resources: ['backends'] }],
          matchPolicy: 'Equivalent',
          namespaceSelector: { matchLabels: { conv: 'on' } },
          clientConfig: { url: `${hook.url}/admit`, caBundle: hook.caBundle },
          sideEffects: 'None',
          admissionReviewVersions: ['v1'],
        },
      ],
    };
    expect((await t.admin.post(`/apis/${AR}/mutatingwebhookconfigurations`, configuration)).status).toBeLessThan(300);
    let created: { status: number; json<T>(): T } | undefined;
    let n = 0;
    // Until this replica's cache has the configuration: the patched port shows it was called.
    await waitFor(async () => {
      hook.received.length = 0;
      created = await t.admin.post(V1, v1(`db-${n++}`, 'db', 443));
      return admissionReviews(hook).length > 0;
    });
    const review = admissionReviews(hook)[0]!;
    expect(review.request.object).toMatchObject({ apiVersion: 'conv.example.com/v2', spec: { hostPort: 'db:443' } });
    expect(review.request.kind).toEqual({ group: 'conv.example.com', version: 'v2', kind: 'Backend' });
    expect(review.request.requestKind).toEqual({ group: 'conv.example.com', version: 'v1', kind: 'Backend' });

    hook.received.length = 0;
    // Port 80 would be refused by the policy above: the webhook's patch (to v2's hostPort) comes
    // back to v1's port before the validating phase.
    const patched = await t.admin.post(V1, v1('cache', 'cache', 80));
    expect(patched.status).toBe(200);
    expect(patched.json<Obj>().spec).toEqual({ host: 'cache', port: 443 });
    expect(created!.status).toBe(200);
    // To v2 for the webhook, back to v1 with its patch, to v2 for the policy.
    expect(conversionTargets(hook)).toEqual(['conv.example.com/v2', 'conv.example.com/v1', 'conv.example.com/v2']);

    conversionBroken = true;
    try {
      const failed = await t.admin.post(V1, v1('queue', 'queue', 443));
      expect(failed.status).toBe(500);
      expect(failed.json<Obj>().message).toContain('conversion webhook for conv.example.com/v1, Kind=Backend failed:');
      expect((await t.admin.get(`${V1}/queue`)).status).toBe(404);
    } finally {
      conversionBroken = false;
    }
  });
});
