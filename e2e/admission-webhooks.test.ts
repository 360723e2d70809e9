// kubectl with admission webhooks, under both namings: a real server process, a real HTTPS
// webhook server reached through a service reference (a Service and Endpoints pointing at
// 127.0.0.1), webhook configurations applied with kubectl; a mutated object, a denied create
// with upstream's message, a warning kubectl prints, and the AdmissionReview group of the naming;
// on three replicas, a configuration written through one is acted on by every one.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClusterProcess } from './support/cluster-process.js';
import { kubectl, kubectlAvailable } from './support/kubectl.js';
import { startServerProcess, type ServerProcess } from './support/server-process.js';
import { startHttpsWebhookServer, type HttpsWebhookServer, type ReceivedRequest } from '../internal/testserver/https-webhook-server.js';
import { webhookServiceYaml } from './support/webhook-service.js';

if (!kubectlAvailable() && process.env.CI === 'true') throw new Error('kubectl is required under CI=true');

type Review = { apiVersion: string; request: { uid: string; operation: string; object: { metadata: { name: string; labels?: Record<string, string> } } } };

/** The test webhook: /mutate labels configmaps; /validate denies `forbidden: "yes"` and warns about `warn: "yes"`. */
function reply(req: ReceivedRequest): unknown {
  const review = JSON.parse(req.body) as Review;
  const labels = review.request.object?.metadata.labels ?? {};
  const response: Record<string, unknown> = { uid: review.request.uid, allowed: true };
  if (req.path.startsWith('/mutate')) {
    // An object without labels gets the whole map, one with labels the one key.
    const ops = labels.mutated
      ? []
      : Object.keys(labels).length > 0
        ? [{ op: 'add', path: '/metadata/labels/mutated', value: 'by-webhook' }]
        : [{ op: 'add', path: '/metadata/labels', value: { mutated: 'by-webhook' } }];
    response.patchType = 'JSONPatch';
    response.patch = Buffer.from(JSON.stringify(ops)).toString('base64');
  } else if (labels.forbidden === 'yes') {
    response.allowed = false;
    response.status = { code: 403, reason: 'Forbidden', message: 'configmaps may not carry the forbidden label' };
  } else if (labels.warn === 'yes') {
    response.warnings = ['this configmap is watched closely'];
  }
  return { apiVersion: review.apiVersion, kind: 'AdmissionReview', response };
}

const serviceYaml = (port: number) => webhookServiceYaml('admission-hook', port);

const webhooksYaml = (group: string, caBundle: string) => `apiVersion: ${group}/v1
kind: MutatingWebhookConfiguration
metadata: {name: label-configmaps}
webhooks:
- name: mutate.example.com
  clientConfig:
    caBundle: ${caBundle}
    service: {namespace: default, name: admission-hook, path: /mutate}
  rules: [{operations: [CREATE, UPDATE], apiGroups: [""], apiVersions: [v1], resources: [configmaps]}]
  namespaceSelector: {matchLabels: {webhooks: "on"}}
  sideEffects: None
  admissionReviewVersions: [v1]
---
apiVersion: ${group}/v1
kind: ValidatingWebhookConfiguration
metadata: {name: check-configmaps}
webhooks:
- name: validate.example.com
  clientConfig:
    caBundle: ${caBundle}
    service: {namespace: default, name: admission-hook, path: /validate}
  rules: [{operations: ["*"], apiGroups: [""], apiVersions: [v1], resources: [configmaps]}]
  namespaceSelector: {matchLabels: {webhooks: "on"}}
  sideEffects: None
  admissionReviewVersions: [v1]
`;

const configMap = (name: string, labels: Record<string, string>) => `apiVersion: v1
kind: ConfigMap
metadata:
  name: ${name}
  namespace: hooked
  labels: {${Object.entries(labels).map(([k, v]) => `${k}: "${v}"`).join(', ')}}
data: {k: v}
`;

async function waitFor(cond: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 100));
  }
}

for (const naming of ['kubernetes', 'cluster'] as const) {
  const domain = naming === 'kubernetes' ? 'k8s.io' : 'cluster.io';

  describe.skipIf(!kubectlAvailable())(`kubectl with admission webhooks (--naming=${naming})`, () => {
    let server: ServerProcess;
    let hook: HttpsWebhookServer;
    const k = (args: string[], input?: string) => kubectl(server.kubeconfig, args, input);
    const ok = async (args: string[], input?: string): Promise<string> => {
      const r = await k(args, input);
      if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${r.code}): ${r.stderr}`);
      return r.stdout;
    };

    beforeAll(async () => {
      hook = await startHttpsWebhookServer({ dnsNames: ['admission-hook.default.svc'], handler: reply });
      server = await startServerProcess([`--naming=${naming}`]);
      await ok(['apply', '-f', '-'], serviceYaml(hook.port));
      await ok(['create', 'namespace', 'hooked']);
      await ok(['label', 'namespace', 'hooked', 'webhooks=on']);
      expect(await ok(['apply', '-f', '-'], webhooksYaml(`admissionregistration.${domain}`, hook.caBundle))).toBe(
        `mutatingwebhookconfiguration.admissionregistration.${domain}/label-configmaps created\nvalidatingwebhookconfiguration.admissionregistration.${domain}/check-configmaps created\n`,
      );
      // The configurations are followed from the watch cache: wait until a dry run is mutated.
      await waitFor(async () => (await k(['create', 'configmap', 'probe', '-n', 'hooked', '--dry-run=server', '-o', 'jsonpath={.metadata.labels.mutated}'])).stdout === 'by-webhook');
    });
    afterAll(async () => {
      await server?.stop();
      await hook?.close();
    });

    it('mutates an applied object through the service, in an AdmissionReview of the naming’s group', async () => {
      hook.received.length = 0;
      expect(await ok(['apply', '-f', '-'], configMap('plain', { app: 'demo' }))).toBe('configmap/plain created\n');
      expect(await ok(['get', 'configmap', 'plain', '-n', 'hooked', '-o', 'jsonpath={.metadata.labels}'])).toBe('{"app":"demo","mutated":"by-webhook"}');
      const reviews = hook.received.map((r) => [r.path, (JSON.parse(r.body) as Review).apiVersion, (JSON.parse(r.body) as Review).request.operation]);
      expect(reviews).toEqual([
        ['/mutate?timeout=10s', `admission.${domain}/v1`, 'CREATE'],
        ['/validate?timeout=10s', `admission.${domain}/v1`, 'CREATE'],
      ]);
      // Outside the selected namespace nothing is called.
      hook.received.length = 0;
      await ok(['create', 'configmap', 'elsewhere', '-n', 'default']);
      expect(await ok(['get', 'configmap', 'elsewhere', '-o', 'jsonpath={.metadata.labels}'])).toBe('');
      expect(hook.received).toHaveLength(0);
    });

    it('refuses a denied create with upstream’s message', async () => {
      const r = await k(['apply', '-f', '-'], configMap('bad', { forbidden: 'yes' }));
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain('Error from server (Forbidden): error when creating "STDIN": admission webhook "validate.example.com" denied the request: configmaps may not carry the forbidden label');
      expect((await k(['get', 'configmap', 'bad', '-n', 'hooked'])).stderr).toContain('not found');
    });

    it('shows the webhook’s warning', async () => {
      const r = await k(['apply', '-f', '-'], configMap('watched', { warn: 'yes' }));
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toContain('Warning: this configmap is watched closely');
    });

    it('sends deletes to the validating webhook with the old object', async () => {
      hook.received.length = 0;
      await ok(['delete', 'configmap', 'plain', '-n', 'hooked']);
      const deletes = hook.received.map((r) => JSON.parse(r.body) as Review & { request: { oldObject: { metadata: { name: string } }; options: { kind: string } } });
      expect(deletes.map((d) => [d.request.operation, d.request.oldObject.metadata.name, d.request.options.kind])).toEqual([['DELETE', 'plain', 'DeleteOptions']]);
    });
  });
}

describe.skipIf(!kubectlAvailable())('admission webhooks on three replicas', () => {
  let cluster: ClusterProcess;
  let hook: HttpsWebhookServer;
  const k = (replica: string, args: string[], input?: string) => kubectl(cluster.kubeconfig(replica), args, input);

  beforeAll(async () => {
    hook = await startHttpsWebhookServer({ dnsNames: ['admission-hook.default.svc'], handler: reply });
    cluster = await ClusterProcess.started();
  });
  afterAll(async () => {
    await cluster?.destroy();
    await hook?.close();
  });

  it('a configuration applied through one replica is called by every replica, with the same answer', async () => {
    const [first] = cluster.names;
    const ok = async (replica: string, args: string[], input?: string) => {
      const r = await k(replica, args, input);
      if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} via ${replica}: ${r.stderr}`);
      return r.stdout;
    };
    await ok(first!, ['apply', '-f', '-'], serviceYaml(hook.port));
    await ok(first!, ['create', 'namespace', 'hooked']);
    await ok(first!, ['label', 'namespace', 'hooked', 'webhooks=on']);
    await ok(first!, ['apply', '-f', '-'], webhooksYaml('admissionregistration.cluster.io', hook.caBundle));
    for (const name of cluster.names) {
      // Each replica follows the configurations from its own watch cache.
      await waitFor(async () => (await k(name, ['create', 'configmap', 'probe', '-n', 'hooked', '--dry-run=server', '-o', 'jsonpath={.metadata.labels.mutated}'])).stdout === 'by-webhook');
      const denied = await k(name, ['apply', '-f', '-'], configMap(`bad-${name}`, { forbidden: 'yes' }));
      expect(denied.stderr, name).toContain('admission webhook "validate.example.com" denied the request: configmaps may not carry the forbidden label');
      expect(await ok(name, ['apply', '-f', '-'], configMap(`good-${name}`, { app: 'x' })), name).toBe(`configmap/good-${name} created\n`);
      expect(await ok(name, ['get', 'configmap', `good-${name}`, '-n', 'hooked', '-o', 'jsonpath={.metadata.labels.mutated}']), name).toBe('by-webhook');
    }
  });
});
