// Every authentication method on every replica of a three-replica cluster started with the same
// files, under the default (cluster) naming: a static token, an OIDC ID token (structured
// configuration), a webhook-reviewed token, a bootstrap token whose secret was written through
// another replica, a service-account token minted by TokenRequest on one replica and verified
// on the others (the signing key is the cluster's, not the replica's), and the authenticating
// proxy's headers. Each is checked with SelfSubjectReview, the API's "who am I".
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCertificateAuthority, issueCertificate, type KeyPairPem } from '../internal/pki/certificates.js';
import { ApiClient } from '../internal/testserver/api-client.js';
import { startOidcProvider, type OidcProvider } from '../internal/testserver/oidc-provider.js';
import { startWebhookTokenServer, type WebhookTokenServer } from '../internal/testserver/webhook-token-server.js';
import { ClusterProcess, sleep } from './support/cluster-process.js';

const AUTHN = 'authentication.cluster.io';
const BOOTSTRAP_ID = 'c1u5te';
const BOOTSTRAP_TOKEN = `${BOOTSTRAP_ID}.0123456789abcdef`;

type UserInfo = { username: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> };

describe('authentication on every replica of a cluster', () => {
  let dir: string;
  let idp: OidcProvider;
  let webhook: WebhookTokenServer;
  let proxy: KeyPairPem;
  let cluster: ClusterProcess;
  let caPem: string;
  const clients: ApiClient[] = [];
  const client = (replica: string, creds: { certPem?: string; keyPem?: string } = {}): ApiClient => {
    const c = new ApiClient(cluster.url(replica), { caPem, ...creds });
    clients.push(c);
    return c;
  };
  const admin = (replica: string): ApiClient => client(replica, { certPem: readFileSync(join(cluster.pkiDir, 'admin.crt'), 'utf8'), keyPem: readFileSync(join(cluster.pkiDir, 'admin.key'), 'utf8') });

  /** SelfSubjectReview through `replica` with these headers: the user, or the failure's status. */
  const whoami = async (replica: string, headers: Record<string, string>, creds: { certPem?: string; keyPem?: string } = {}): Promise<UserInfo | number> => {
    const r = await client(replica, creds).request('POST', `/apis/${AUTHN}/v1/selfsubjectreviews`, { body: { apiVersion: `${AUTHN}/v1`, kind: 'SelfSubjectReview' }, headers });
    if (r.status >= 300) return r.status;
    return r.json<{ status: { userInfo: UserInfo } }>().status.userInfo;
  };
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'clusterd-authn-cluster-'));
    const proxyCa = await createCertificateAuthority('front-proxy-ca');
    [idp, webhook, proxy] = await Promise.all([
      startOidcProvider(),
      startWebhookTokenServer({ 'webhook-token-1': { username: 'wanda', uid: 'w-1', groups: ['webhookers'] } }),
      issueCertificate(proxyCa, { commonName: 'front-proxy', usage: 'client' }),
    ]);
    writeFileSync(join(dir, 'proxy-ca.crt'), proxyCa.certPem);
    writeFileSync(join(dir, 'tokens.csv'), 'static-token-1,sam,sam-uid,"devs,ops"\n');
    const caLines = idp.caPem.trim().split('\n').map((l) => `      ${l}`).join('\n');
    writeFileSync(
      join(dir, 'authn.yaml'),
      `apiVersion: apiserver.config.${AUTHN.split('.').slice(1).join('.')}/v1
kind: AuthenticationConfiguration
jwt:
- issuer:
    url: ${idp.issuer}
    audiences: [clusterd]
    certificateAuthority: |
${caLines}
  claimMappings:
    username: { claim: sub, prefix: "oidc:" }
    groups: { claim: groups, prefix: "oidc:" }
`,
    );
    cluster = await ClusterProcess.started({
      extraArgs: [
        `--authentication-config=${join(dir, 'authn.yaml')}`,
        `--token-auth-file=${join(dir, 'tokens.csv')}`,
        `--authentication-token-webhook-config-file=${webhook.writeKubeconfig(dir)}`,
        '--enable-bootstrap-token-auth',
        '--requestheader-username-headers=X-Remote-User',
        '--requestheader-group-headers=X-Remote-Group',
        `--requestheader-client-ca-file=${join(dir, 'proxy-ca.crt')}`,
        '--requestheader-allowed-names=front-proxy',
      ],
    });
    caPem = readFileSync(join(cluster.pkiDir, 'ca.crt'), 'utf8');
  }, 180_000);

  afterAll(async () => {
    for (const c of clients) c.close();
    await cluster?.destroy();
    await Promise.all([idp?.close(), webhook?.close()]);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('a static token, an OIDC token and a webhook token name the same user on every replica', async () => {
    const oidc = await idp.mint({ sub: 'olga', aud: 'clusterd', groups: ['admins'] });
    for (const replica of cluster.names) {
      expect(await whoami(replica, bearer('static-token-1')), replica).toEqual({ username: 'sam', uid: 'sam-uid', groups: ['devs', 'ops', 'system:authenticated'] });
      expect(await whoami(replica, bearer(oidc)), replica).toEqual({ username: 'oidc:olga', groups: ['oidc:admins', 'system:authenticated'] });
      expect(await whoami(replica, bearer('webhook-token-1')), replica).toEqual({ username: 'wanda', uid: 'w-1', groups: ['webhookers', 'system:authenticated'] });
      expect(await whoami(replica, bearer('no-such-token')), replica).toBe(401);
    }
  });

  it('a service-account token minted through one replica is accepted by every replica until its account is deleted', async () => {
    const [first, ...others] = cluster.names as [string, ...string[]];
    const a = admin(first);
    expect((await a.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'authn' } })).status).toBeLessThan(300);
    const sa = await a.post('/api/v1/namespaces/authn/serviceaccounts', { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'robot' } });
    expect(sa.status).toBeLessThan(300);
    const minted = await a.post('/api/v1/namespaces/authn/serviceaccounts/robot/token', { apiVersion: `${AUTHN}/v1`, kind: 'TokenRequest', spec: { expirationSeconds: 3600 } });
    expect(minted.status, minted.text()).toBeLessThan(300);
    const token = minted.json<{ status: { token: string } }>().status.token;
    const uid = sa.json<{ metadata: { uid: string } }>().metadata.uid;
    for (const replica of [first, ...others]) {
      const user = await whoami(replica, bearer(token));
      expect(user, replica).toMatchObject({ username: 'system:serviceaccount:authn:robot', uid, groups: ['system:serviceaccounts', 'system:serviceaccounts:authn', 'system:authenticated'] });
    }
    // Lookup on: deleting the account through another replica revokes the token everywhere
    // (once each replica's cache has the deletion).
    expect((await admin(others[0]!).request('DELETE', '/api/v1/namespaces/authn/serviceaccounts/robot')).status).toBe(200);
    for (const replica of cluster.names) {
      let status: UserInfo | number = 0;
      for (let i = 0; i < 50 && status !== 401; i++) {
        status = await whoami(replica, bearer(token));
        if (status !== 401) await sleep(100);
      }
      expect(status, replica).toBe(401);
    }
  });

  it('a bootstrap token whose secret is written through one replica authenticates on the others', async () => {
    const [first] = cluster.names as [string, ...string[]];
    const secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: `bootstrap-token-${BOOTSTRAP_ID}`, namespace: 'kube-system' },
      type: 'bootstrap.cluster.io/token',
      stringData: { 'token-id': BOOTSTRAP_ID, 'token-secret': BOOTSTRAP_TOKEN.split('.')[1]!, 'usage-bootstrap-authentication': 'true', 'auth-extra-groups': 'system:bootstrappers:workers' },
    };
    const r = await admin(first).post('/api/v1/namespaces/kube-system/secrets', secret);
    expect(r.status, r.text()).toBeLessThan(300);
    for (const replica of cluster.names) {
      let user: UserInfo | number = 0;
      for (let i = 0; i < 50 && typeof user === 'number'; i++) {
        user = await whoami(replica, bearer(BOOTSTRAP_TOKEN));
        if (typeof user === 'number') await sleep(100);
      }
      expect(user, replica).toEqual({ username: `system:bootstrap:${BOOTSTRAP_ID}`, groups: ['system:bootstrappers', 'system:bootstrappers:workers', 'system:authenticated'] });
    }
  });

  it("the authenticating proxy's headers are trusted on every replica with its certificate, and only with it", async () => {
    const headers = { 'x-remote-user': 'proxied', 'x-remote-group': 'via-proxy' };
    for (const replica of cluster.names) {
      expect(await whoami(replica, headers, { certPem: proxy.certPem, keyPem: proxy.keyPem }), replica).toEqual({ username: 'proxied', groups: ['via-proxy', 'system:authenticated'] });
      // Without the proxy's certificate the headers are nobody's: anonymous may not review itself.
      expect(await whoami(replica, headers), replica).toBe(403);
    }
  });

  it('every replica reports one configuration hash covering the files read at start, and a changed token file changes it', async () => {
    const hashes = async () => {
      const seen = new Map<string, string>();
      for (const name of cluster.names) for (const m of await cluster.members(name, true)) if (m.name === name) seen.set(name, m.configHash);
      return seen;
    };
    const before = await hashes();
    expect(new Set(before.values()).size).toBe(1);
    expect([...before.values()][0]).toMatch(/^sha256:/);
    writeFileSync(join(dir, 'tokens.csv'), 'static-token-1,sam,sam-uid,"devs,ops"\nstatic-token-2,tom,tom-uid\n');
    let after = before;
    for (let i = 0; i < 100 && [...after.values()].some((h) => h === [...before.values()][0]); i++) {
      await sleep(100);
      after = await hashes();
    }
    expect(new Set(after.values()).size).toBe(1);
    expect([...after.values()][0]).not.toBe([...before.values()][0]);
  });
});
