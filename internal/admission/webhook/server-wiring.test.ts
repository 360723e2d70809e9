// Admission webhooks in a real in-process server (real TLS, the default cluster naming, an audit
// log): the configuration is validated on create, the webhook's warning reaches the response's
// Warning header, its audit annotations and the mutation annotation reach the audit event, and
// the metrics are on /metrics.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultConfig } from '../../config/flags.js';
import { startHttpsWebhookServer, type HttpsWebhookServer } from '../../testserver/https-webhook-server.js';
import { startTestServer, type TestServer } from '../../testserver/test-server.js';

describe('admission webhooks in the server', () => {
  let t: TestServer;
  let hook: HttpsWebhookServer;
  let logPath: string;

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'admission-wiring-'));
    writeFileSync(join(dir, 'policy.yaml'), 'apiVersion: audit.cluster.io/v1\nkind: Policy\nrules:\n- level: Metadata\n');
    logPath = join(dir, 'audit.log');
    t = await startTestServer({ audit: { ...defaultConfig().audit, policyFile: join(dir, 'policy.yaml'), logPath } });
    hook = await startHttpsWebhookServer({
      handler: (r) => {
        const review = JSON.parse(r.body) as { apiVersion: string; request: { uid: string } };
        const patch = Buffer.from(JSON.stringify([{ op: 'add', path: '/data/added', value: 'by-hook' }])).toString('base64');
        return { apiVersion: review.apiVersion, kind: 'AdmissionReview', response: { uid: review.request.uid, allowed: true, warnings: ['looked at by the hook'], auditAnnotations: { verdict: 'fine' }, patchType: 'JSONPatch', patch } };
      },
    });
  });
  afterAll(async () => {
    await t?.stop();
    await hook?.close();
  });

  const configuration = (timeoutSeconds: number) => ({
    apiVersion: 'admissionregistration.cluster.io/v1',
    kind: 'MutatingWebhookConfiguration',
    metadata: { name: 'wiring' },
    webhooks: [
      {
        name: 'wiring.example.com',
        clientConfig: { url: `${hook.url}/mutate`, caBundle: hook.caBundle },
        rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
        sideEffects: 'None',
        admissionReviewVersions: ['v1'],
        timeoutSeconds,
      },
    ],
  });

  it('refuses an invalid configuration with upstream’s message', async () => {
    const r = await t.admin.post('/apis/admissionregistration.cluster.io/v1/mutatingwebhookconfigurations', configuration(31));
    expect(r.status).toBe(422);
    expect(r.json<{ message: string }>().message).toContain('webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds');
  });

  it('passes the webhook’s warning, audit annotations and patch through', async () => {
    // A create answers 200 under the spec (upstream: 201).
    expect([200, 201]).toContain((await t.admin.post('/apis/admissionregistration.cluster.io/v1/mutatingwebhookconfigurations', configuration(5))).status);
    let r = await t.admin.post('/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { generateName: 'w-' }, data: { k: 'v' } });
    // The configuration reaches the dispatcher through the watch cache.
    for (let i = 0; i < 50 && hook.received.length === 0; i++) {
      await new Promise((res) => setTimeout(res, 50));
      r = await t.admin.post('/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { generateName: 'w-' }, data: { k: 'v' } });
    }
    expect([200, 201]).toContain(r.status);
    expect(r.json<{ data: Record<string, string> }>().data).toEqual({ k: 'v', added: 'by-hook' });
    expect(r.headers.warning).toBe('299 - "looked at by the hook"');
    const auditId = r.headers['audit-id'] as string;
    // The audit backend writes after the response: wait for the event.
    const completeEvent = () =>
      readFileSync(logPath, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { auditID: string; stage: string; annotations?: Record<string, string> })
        .find((e) => e.auditID === auditId && e.stage === 'ResponseComplete');
    for (let i = 0; i < 100 && !completeEvent(); i++) await new Promise((res) => setTimeout(res, 50));
    const complete = completeEvent();
    expect(complete?.annotations).toMatchObject({
      'wiring.example.com/verdict': 'fine',
      'mutation.webhook.admission.cluster.io/round_0_index_0': JSON.stringify({ configuration: 'wiring', webhook: 'wiring.example.com', mutated: true }),
    });
    const metrics = (await t.admin.request('GET', '/metrics')).text();
    expect(metrics).toMatch(/apiserver_admission_webhook_request_total\{name="wiring\.example\.com",type="admit",operation="CREATE",code="200",rejected="false"\} [1-9]/);
  });
});
