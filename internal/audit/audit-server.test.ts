// Auditing in a real in-process server (real TLS, the default cluster naming): what is on and off,
// the Audit-Id header, failed authentication, a deprecated custom resource version (one Warning,
// the metric and the annotation; built-in beta versions unmarked), the legacy format.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { defaultConfig } from '../config/flags.js';
import { createCertificateAuthority, issueCertificate } from '../pki/certificates.js';
import { ApiClient } from '../testserver/api-client.js';
import { startTestServer } from '../testserver/test-server.js';

async function auditedServer(policy: string, extra: Partial<ReturnType<typeof defaultConfig>['audit']> = {}, overrides: Partial<ReturnType<typeof defaultConfig>> = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'audit-srv-'));
  writeFileSync(join(dir, 'policy.yaml'), policy);
  const logPath = join(dir, 'audit.log');
  const t = await startTestServer({ ...overrides, audit: { ...defaultConfig().audit, policyFile: join(dir, 'policy.yaml'), logPath, ...extra } });
  return { t, lines: () => readFileSync(logPath, 'utf8').split('\n').filter(Boolean) };
}

const ALL_METADATA = 'apiVersion: audit.cluster.io/v1\nkind: Policy\nrules:\n- level: Metadata\n';

const SCHEMA = { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } };
const DEPRECATED_CRD = {
  apiVersion: 'apiextensions.cluster.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'gadgets.audit.example.com' },
  spec: {
    group: 'audit.example.com',
    scope: 'Namespaced',
    names: { plural: 'gadgets', singular: 'gadget', kind: 'Gadget' },
    versions: [
      { name: 'v1', served: true, storage: true, schema: SCHEMA },
      { name: 'v1beta1', served: true, storage: false, deprecated: true, schema: SCHEMA },
    ],
  },
};

describe('auditing in the server', () => {
  it('is off without a policy file and a path: no filter, no Audit-Id header', async () => {
    const t = await startTestServer({ audit: { ...defaultConfig().audit, policyFile: undefined, logPath: join(tmpdir(), 'never-written.log') } });
    try {
      const r = await t.admin.request('GET', '/api/v1/namespaces/default');
      expect(r.status).toBe(200);
      expect(r.headers['audit-id']).toBeUndefined();
    } finally {
      await t.stop();
    }
  });

  it('returns the audit ID as Audit-Id on plain and streamed responses, and audits failed authentication', async () => {
    const { t, lines } = await auditedServer(ALL_METADATA);
    let watchId: string | undefined;
    try {
      const r = await t.admin.request('GET', '/api/v1/namespaces/default');
      expect(r.headers['audit-id']).toMatch(/^[0-9a-f-]{36}$/);
      const w = await t.admin.request('GET', '/api/v1/namespaces?watch=true&timeoutSeconds=1');
      watchId = w.headers['audit-id'] as string;
      expect(watchId).toMatch(/^[0-9a-f-]{36}$/);
      const other = await createCertificateAuthority('someone-else');
      const { certPem, keyPem } = await issueCertificate(other, { commonName: 'mallory', organizations: ['system:masters'], usage: 'client' });
      const forged = new ApiClient(t.server.url, { caPem: (t.admin as unknown as { creds: { caPem: string } }).creds.caPem, certPem, keyPem });
      expect((await forged.request('GET', '/api/v1/secrets')).status).toBe(401);
      forged.close();
    } finally {
      await t.stop();
    }
    const events = lines().map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(events.every((e) => e.apiVersion === 'audit.cluster.io/v1')).toBe(true);
    const watch = events.filter((e) => e.auditID === watchId).map((e) => e.stage);
    expect(watch).toEqual(['RequestReceived', 'ResponseStarted', 'ResponseComplete']);
    const failed = events.filter((e) => (e.responseStatus as { code?: number } | undefined)?.code === 401);
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({ stage: 'ResponseStarted', verb: 'list', user: {}, objectRef: { resource: 'secrets' }, responseStatus: { status: 'Failure', reason: 'Unauthorized' } });
  });

  it('marks a deprecated version once per request from one source: one Warning, the gauge, the audit annotation', async () => {
    const { t, lines } = await auditedServer(ALL_METADATA, {}, { runtimeConfig: [{ key: 'api/beta', value: true }] });
    const path = (v: string, rest = '') => `/apis/audit.example.com/${v}/namespaces/default/gadgets${rest}`;
    const text = 'audit.example.com/v1beta1 Gadget is deprecated; use audit.example.com/v1 Gadget';
    // Node joins repeated headers with ', ': a second Warning would show as a second `299 -`.
    const warnings = (h: string | string[] | undefined): string[] => (Array.isArray(h) ? h.join(', ') : h ?? '').match(/299 - "[^"]*"/g) ?? [];
    try {
      expect((await t.admin.post('/apis/apiextensions.cluster.io/v1/customresourcedefinitions', DEPRECATED_CRD)).status).toBe(200);
      const deadline = Date.now() + 10_000;
      while ((await t.admin.get(path('v1beta1'))).status !== 200) {
        if (Date.now() > deadline) throw new Error('CRD not served in time');
        await new Promise((r) => setTimeout(r, 25));
      }
      const created = await t.admin.post(path('v1beta1'), { apiVersion: 'audit.example.com/v1beta1', kind: 'Gadget', metadata: { name: 'g1' } });
      const got = await t.admin.get(path('v1beta1', '/g1'));
      const listed = await t.admin.get(path('v1beta1'));
      const watched = await t.admin.get(path('v1beta1', '?watch=true&timeoutSeconds=1'));
      for (const r of [created, got, listed, watched]) {
        expect(r.status).toBeLessThan(300);
        expect(warnings(r.headers.warning)).toEqual([`299 - "${text}"`]);
      }
      expect(warnings((await t.admin.get(path('v1', '/g1'))).headers.warning)).toEqual([]);
      // A built-in beta version past its deprecation release (schema/lifecycle): the same marks,
      // with the planned removal; one introduced in this release is not marked.
      const beta = await t.admin.get('/apis/networking.cluster.io/v1beta1/ipaddresses');
      expect(beta.status).toBe(200);
      expect(warnings(beta.headers.warning)).toEqual(['299 - "networking.cluster.io/v1beta1 IPAddress is deprecated in v1.34+, unavailable in v1.37+; use networking.cluster.io/v1 IPAddress"']);
      const fresh = await t.admin.get('/apis/storagemigration.cluster.io/v1beta1/storageversionmigrations');
      expect(fresh.status).toBe(200);
      expect(fresh.headers.warning).toBeUndefined();
      const metrics = (await t.admin.get('/metrics')).text();
      expect(metrics).toMatch(/^apiserver_requested_deprecated_apis\{[^}]*version="v1beta1"[^}]*\} 1$/m);
      expect(metrics).toMatch(/^apiserver_requested_deprecated_apis\{group="networking.cluster.io",version="v1beta1",resource="ipaddresses",subresource="",removed_release="1.37"\} 1$/m);
      expect(metrics).not.toMatch(/^apiserver_requested_deprecated_apis\{[^}]*group="storagemigration/m);
    } finally {
      await t.stop();
    }
    const events = lines().map((l) => JSON.parse(l) as { objectRef?: { apiGroup?: string; apiVersion?: string }; stage: string; annotations?: Record<string, string> });
    const done = (group: string, version: string) => events.filter((e) => e.objectRef?.apiGroup === group && e.objectRef?.apiVersion === version && e.stage === 'ResponseComplete');
    const deprecated = done('audit.example.com', 'v1beta1');
    expect(deprecated.length).toBeGreaterThanOrEqual(4);
    for (const e of deprecated) {
      expect(e.annotations?.['cluster.io/deprecated']).toBe('true');
      // Custom resource versions have no planned removal release: no annotation for one.
      expect(e.annotations?.['cluster.io/removed-release']).toBeUndefined();
    }
    for (const e of [...done('audit.example.com', 'v1'), ...done('storagemigration.cluster.io', 'v1beta1')]) expect(e.annotations?.['cluster.io/deprecated']).toBeUndefined();
    expect(done('storagemigration.cluster.io', 'v1beta1')).toHaveLength(1);
    const builtin = done('networking.cluster.io', 'v1beta1');
    expect(builtin).toHaveLength(1);
    expect(builtin[0]!.annotations).toMatchObject({ 'cluster.io/deprecated': 'true', 'cluster.io/removed-release': '1.37' });
  });

  it('writes upstream\'s legacy one-line form with --audit-log-format=legacy', async () => {
    const { t, lines } = await auditedServer(ALL_METADATA, { format: 'legacy' });
    try {
      await t.admin.request('GET', '/api/v1/namespaces/default', { headers: { 'user-agent': 'audit-test' } });
    } finally {
      await t.stop();
    }
    const line = lines().find((l) => l.includes('uri="/api/v1/namespaces/default"') && l.includes('stage="ResponseComplete"'));
    expect(line).toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+Z AUDIT: id="[0-9a-f-]{36}" stage="ResponseComplete" ip="127\.0\.0\.1" method="get" user="admin" groups="\\"system:masters\\",\\"system:authenticated\\"" as="<self>" asgroups="<lookup>" user-agent="audit-test" namespace="default" uri="\/api\/v1\/namespaces\/default" response="200"$/);
  });
});
