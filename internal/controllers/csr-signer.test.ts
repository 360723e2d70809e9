// CertificateSigningRequests in a real in-process server (both namings), with requests made by
// the real openssl: upstream's validation of signerName, usages, expirationSeconds, the
// request and the approval conditions; an approved kube-apiserver-client request signed by the
// cluster CA for its expirationSeconds, and the certificate authenticating as the request's
// subject; a request with usages that signer does not allow marked Failed; other signers and
// unapproved requests left alone.
import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNaming } from '../naming/naming.js';
import { pkiPaths } from '../pki/pki.js';
import { ApiClient } from '../testserver/api-client.js';
import { startTestServer, type TestServer } from '../testserver/test-server.js';
import { apiServerClientUsageProblem } from './csr-signer.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- response bodies are free-form JSON
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const dir = mkdtempSync(join(tmpdir(), 'csr-test-'));
let n = 0;
function openssl(subject: string): { csr: string; key: string } {
  const key = join(dir, `k${++n}.key`);
  const csr = join(dir, `k${n}.csr`);
  execFileSync('openssl', ['req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', key, '-out', csr, '-subj', subject], { stdio: 'ignore' });
  return { csr: readFileSync(csr, 'utf8'), key: readFileSync(key, 'utf8') };
}
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('kube-apiserver-client usages', () => {
  it('needs client auth and allows only digital signature and key encipherment besides', () => {
    expect(apiServerClientUsageProblem(['digital signature', 'key encipherment', 'client auth'])).toBe('');
    expect(apiServerClientUsageProblem(['server auth', 'client auth'])).toBe('invalid usage for client certificate: server auth');
    expect(apiServerClientUsageProblem(['digital signature'])).toBe('missing required usage for client certificate: client auth');
  });
});

for (const mode of ['cluster', 'kubernetes'] as const) {
  describe(`certificate signing requests (--naming=${mode})`, () => {
    const naming = createNaming(mode);
    const CSRS = `/apis/${naming.group('certificates.k8s.io')}/v1/certificatesigningrequests`;
    const signer = `${naming.labelDomain}/kube-apiserver-client`;
    let t: TestServer;
    const alice = openssl('/CN=alice/O=devs');
    const csr = (name: string, spec: Obj = {}, request = alice.csr) => ({
      metadata: { name },
      spec: { request: Buffer.from(request).toString('base64'), signerName: signer, usages: ['client auth'], ...spec },
    });
    const create = async (body: Obj) => {
      const r = await t.admin.post(CSRS, body);
      return { status: r.status, body: r.json<Obj>() };
    };
    const approve = async (name: string, conditions: Obj[] = [{ type: 'Approved', status: 'True', reason: 'Test', message: 'ok' }]) => {
      const current = (await t.admin.get(`${CSRS}/${name}`)).json<Obj>();
      current.status = { ...(current.status ?? {}), conditions };
      const r = await t.admin.put(`${CSRS}/${name}/approval`, current);
      return { status: r.status, body: r.json<Obj>() };
    };
    const until = async (what: string, probe: () => Promise<Obj | undefined>) => {
      for (let i = 0; i < 250; i++) {
        const v = await probe();
        if (v) return v;
        await sleep(20);
      }
      throw new Error(`timed out waiting for ${what}`);
    };
    beforeAll(async () => {
      t = await startTestServer({ naming: mode });
    });
    afterAll(async () => {
      await t?.stop();
    });

    it('refuses what upstream validation refuses, with its words', async () => {
      const cases: Array<[Obj, string]> = [
        [csr('v1', { signerName: 'foo' }), `spec.signerName: Invalid value: "foo": must be a fully qualified domain and path of the form 'example.com/signer-name'`],
        [csr('v2', { signerName: 'example/foo' }), 'spec.signerName: Invalid value: "example": should be a domain with at least two segments separated by dots'],
        [csr('v3', { signerName: `${naming.labelDomain}/legacy-unknown` }), `spec.signerName: Invalid value: "${naming.labelDomain}/legacy-unknown": the legacy signerName is not allowed via this API version`],
        [csr('v4', { usages: ['client auth', 'flying'] }), 'spec.usages[1]: Unsupported value: "flying": supported values: "any", "cert sign"'],
        [csr('v5', { usages: ['client auth', 'client auth'] }), 'spec.usages[1]: Duplicate value: "client auth"'],
        [csr('v6', { usages: [] }), 'spec.usages: Required value'],
        [csr('v7', { expirationSeconds: 599 }), 'spec.expirationSeconds: Invalid value: 599: may not specify a duration less than 600 seconds (10 minutes)'],
        [csr('v8', {}, '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n'), 'PEM block type must be CERTIFICATE REQUEST'],
      ];
      for (const [body, message] of cases) {
        const r = await create(body);
        expect(r.status, body.metadata.name).toBe(422);
        expect(r.body.message, body.metadata.name).toContain(message);
      }
    });

    it('signs an approved kube-apiserver-client request for its expirationSeconds; the certificate authenticates', async () => {
      expect((await create(csr('alice', { usages: ['digital signature', 'key encipherment', 'client auth'], expirationSeconds: 3600 }))).status).toBe(200);
      // Not approved: nothing happens.
      await sleep(200);
      expect((await t.admin.get(`${CSRS}/alice`)).json<Obj>().status?.certificate).toBeUndefined();
      const both = await approve('alice', [
        { type: 'Approved', status: 'True' },
        { type: 'Denied', status: 'True' },
      ]);
      expect(both.status).toBe(422);
      expect(both.body.message).toContain('status.conditions[1].type: Invalid value: "Denied": Approved and Denied conditions are mutually exclusive');
      expect((await approve('alice')).status).toBe(200);
      const signed = await until('the certificate', async () => {
        const o = (await t.admin.get(`${CSRS}/alice`)).json<Obj>();
        return o.status?.certificate ? o : undefined;
      });
      const certPem = Buffer.from(signed.status.certificate, 'base64').toString('utf8');
      const cert = new X509Certificate(certPem);
      const caPem = readFileSync(pkiPaths(t.dataDir).caCert, 'utf8');
      expect(cert.verify(new X509Certificate(caPem).publicKey)).toBe(true);
      expect(cert.subject.split('\n')).toEqual(['CN=alice', 'O=devs']);
      const lifetime = Date.parse(cert.validTo) - Date.parse(cert.validFrom);
      // Backdated five minutes against clock skew, as upstream.
      expect(lifetime).toBeGreaterThan(3600_000);
      expect(lifetime).toBeLessThanOrEqual(3600_000 + 5 * 60_000 + 1000);
      const client = new ApiClient(t.server.url, { caPem, certPem, keyPem: alice.key });
      try {
        const who = await client.post(`/apis/${naming.group('authentication.k8s.io')}/v1/selfsubjectreviews`, {});
        expect(who.status, who.text()).toBe(200);
        expect(who.json<Obj>().status.userInfo).toMatchObject({ username: 'alice', groups: expect.arrayContaining(['devs', 'system:authenticated']) });
      } finally {
        client.close();
      }
      // Removing the approval is refused.
      const removed = await approve('alice', []);
      expect(removed.status).toBe(422);
      expect(removed.body.message).toContain('updates may not remove a condition of type "Approved"');
    });

    it('marks a request with usages the signer does not allow Failed, and leaves other signers alone', async () => {
      expect((await create(csr('server', { usages: ['server auth', 'client auth'] }))).status).toBe(200);
      expect((await approve('server')).status).toBe(200);
      const failed = await until('the Failed condition', async () => {
        const o = (await t.admin.get(`${CSRS}/server`)).json<Obj>();
        return (o.status?.conditions ?? []).some((c: Obj) => c.type === 'Failed') ? o : undefined;
      });
      expect(failed.status.conditions.find((c: Obj) => c.type === 'Failed')).toMatchObject({ status: 'True', reason: 'SignerValidationFailure', message: 'invalid usage for client certificate: server auth' });
      expect(failed.status.certificate).toBeUndefined();
      expect((await create(csr('other', { signerName: 'example.com/mine' }))).status).toBe(200);
      expect((await approve('other')).status).toBe(200);
      await sleep(300);
      const other = (await t.admin.get(`${CSRS}/other`)).json<Obj>();
      expect(other.status.certificate).toBeUndefined();
      expect(other.status.conditions.map((c: Obj) => c.type)).toEqual(['Approved']);
    });
  });
}
