// End-to-end: the external authenticators of a real server process against a real OIDC
// provider, a real token review service and a real authenticating proxy certificate, driven
// with real kubectl (tokens, and the `clusterd credential` exec plugin).
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { base64url, SignJWT } from 'jose';
import { createPublicKey } from 'node:crypto';
import { startServerProcess, PROJECT_ROOT, type ServerProcess } from './support/server-process.js';
import { kubectl, kubectlAvailable } from './support/kubectl.js';
import { ApiClient } from '../internal/testserver/api-client.js';
import { startOidcProvider, type OidcProvider } from '../internal/testserver/oidc-provider.js';
import { startWebhookTokenServer, type WebhookTokenServer } from '../internal/testserver/webhook-token-server.js';
import { createCertificateAuthority, issueCertificate, type KeyPairPem } from '../internal/pki/certificates.js';
import { readFileSync } from 'node:fs';

const haveKubectl = kubectlAvailable();
if (!haveKubectl && process.env['CI'] === 'true') throw new Error('kubectl is required under CI=true');

const API_AUDIENCES = ['https://clusterd.example', 'second-api'];

const indent = (pem: string, n: number) => pem.trim().split('\n').map((l) => ' '.repeat(n) + l).join('\n');

function authConfig(idp: OidcProvider, usernamePrefix: string): string {
  return `apiVersion: apiserver.config.k8s.io/v1beta1
kind: AuthenticationConfiguration
jwt:
- issuer:
    url: ${idp.issuer}
    audiences: [clusterd, kubectl]
    audienceMatchPolicy: MatchAny
    certificateAuthority: |
${indent(idp.caPem, 6)}
  claimValidationRules:
  - expression: 'claims.level >= 1'
    message: level must be at least 1
  claimMappings:
    username: { claim: sub, prefix: "${usernamePrefix}" }
    groups: { claim: groups, prefix: "oidc:" }
    uid: { claim: uid }
    extra:
    - key: example.com/tenant
      valueExpression: claims.tenant
anonymous:
  enabled: true
  conditions:
  - path: /livez
`;
}

describe.skipIf(!haveKubectl)('external authentication (OIDC, exec plugin, webhook, proxy)', () => {
  let dir: string;
  let idp: OidcProvider;
  let webhook: WebhookTokenServer;
  let server: ServerProcess;
  let configPath: string;
  let proxy: KeyPairPem;
  let otherProxy: KeyPairPem;
  let caPem: string;
  const claims = { sub: 'alice', aud: 'kubectl', groups: ['dev'], uid: 'alice-uid', tenant: 'blue', level: 2 };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'clusterd-authn-'));
    const proxyCa = await createCertificateAuthority('front-proxy-ca');
    [idp, webhook, proxy, otherProxy] = await Promise.all([
      startOidcProvider(),
      startWebhookTokenServer({
        'webhook-token-1': { username: 'wanda', uid: 'w-1', groups: ['webhookers'], extra: { 'example.com/via': ['webhook'] } },
        'webhook-vault-token': { username: 'victor', groups: ['vaulters'], audiences: ['vault'] },
      }),
      issueCertificate(proxyCa, { commonName: 'front-proxy', usage: 'client' }),
      issueCertificate(proxyCa, { commonName: 'not-allowed', usage: 'client' }),
    ]);
    writeFileSync(join(dir, 'proxy-ca.crt'), proxyCa.certPem);
    configPath = join(dir, 'authn.yaml');
    writeFileSync(configPath, authConfig(idp, 'oidc:'));
    server = await startServerProcess([
      `--authentication-config=${configPath}`,
      `--authentication-token-webhook-config-file=${webhook.writeKubeconfig(dir)}`,
      '--authentication-token-webhook-version=v1',
      '--requestheader-username-headers=X-Remote-User',
      '--requestheader-uid-headers=X-Remote-Uid',
      '--requestheader-group-headers=X-Remote-Group',
      '--requestheader-extra-headers-prefix=X-Remote-Extra-',
      `--requestheader-client-ca-file=${join(dir, 'proxy-ca.crt')}`,
      '--requestheader-allowed-names=front-proxy',
      '--log-level=debug',
      `--api-audiences=${API_AUDIENCES.join(',')}`,
      // Stock kubectl (auth whoami) speaks the upstream group names.
      '--naming=kubernetes',
    ]);
    caPem = readFileSync(join(server.dataDir, 'pki', 'ca.crt'), 'utf8');
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
    await Promise.all([idp?.close(), webhook?.close()]);
    rmSync(dir, { recursive: true, force: true });
  });

  /** A kubeconfig for the server whose user is `user` (YAML lines under `user:`). */
  const kubeconfigWith = (name: string, userYaml: string, clusterExtra = ''): string => {
    const path = join(dir, `${name}.kubeconfig`);
    writeFileSync(
      path,
      `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster:
    server: ${server.url}
    certificate-authority-data: ${Buffer.from(caPem).toString('base64')}
${clusterExtra}users:
- name: u
  user:
${userYaml}
contexts:
- name: x
  context: { cluster: c, user: u }
current-context: x
`,
    );
    return path;
  };
  const whoami = async (kubeconfig: string) => {
    const r = await kubectl(kubeconfig, ['auth', 'whoami', '-o', 'json']);
    return { ...r, user: r.code === 0 ? (JSON.parse(r.stdout) as { status: { userInfo: Record<string, unknown> } }).status.userInfo : undefined };
  };
  const withToken = (token: string) => kubeconfigWith(`t${Math.random().toString(36).slice(2)}`, `    token: ${token}`);

  it('kubectl with an OIDC ID token: whoami shows user, uid, groups and extra', async () => {
    const r = await whoami(withToken(await idp.mint(claims)));
    expect(r.stderr).toBe('');
    expect(r.user).toEqual({ username: 'oidc:alice', uid: 'alice-uid', groups: ['oidc:dev', 'system:authenticated'], extra: { 'example.com/tenant': ['blue'] } });
  });

  it.each<[string, () => Promise<string>]>([
    ['expired', () => idp.mint(claims, { expiresIn: -60 })],
    ['for another audience', () => idp.mint({ ...claims, aud: 'someone-else' })],
    ['from an unknown issuer', async () => (await idp.mint({ ...claims, iss: 'https://unknown.example' }))],
    ['failing a CEL claim rule', () => idp.mint({ ...claims, level: 0 })],
    ['missing the uid claim', () => idp.mint({ ...claims, uid: undefined })],
  ])('an OIDC token %s is 401', async (_name, mint) => {
    const r = await whoami(withToken(await mint()));
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/Unauthorized|must be logged in/);
  });

  it('picks up a key rotated at the provider', async () => {
    await idp.rotate();
    const kc = withToken(await idp.mint({ ...claims, sub: 'rotated' }));
    // The key set is refetched for an unknown key id at most every 2 s: the first tries may
    // land inside the interval of the fetch the earlier tests caused.
    let r = await whoami(kc);
    for (let i = 0; i < 30 && r.user === undefined; i++) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      r = await whoami(kc);
    }
    expect(r.user?.['username']).toBe('oidc:rotated');
  });

  it('kubectl through the exec plugin: one refresh per kubectl run, v1 and v1beta1, cluster info from the extension', async () => {
    const refresh = idp.addRefreshToken({ ...claims, sub: 'exec-user' }, { expiresIn: 600 });
    writeFileSync(join(dir, 'refresh'), refresh);
    const cmd = join(PROJECT_ROOT, 'bin', 'clusterd');
    const extension = `  extensions:
  - name: client.authentication.k8s.io/exec
    extension:
      issuer-url: ${idp.issuer}
      client-id: kubectl
      ca-data: ${Buffer.from(idp.caPem).toString('base64')}
`;
    const clusterExtra = extension.split('\n').map((l) => (l ? `  ${l}` : l)).join('\n');
    for (const version of ['v1', 'v1beta1']) {
      const kc = kubeconfigWith(
        `exec-${version}`,
        `    exec:
      apiVersion: client.authentication.k8s.io/${version}
      command: ${cmd}
      args: [credential, --refresh-token-file=${join(dir, 'refresh')}]
      interactiveMode: Never
      provideClusterInfo: true`,
        clusterExtra,
      );
      const before = idp.served.get('/token') ?? 0;
      const r = await whoami(kc);
      expect(r.stderr).toBe('');
      expect(r.user?.['username']).toBe('oidc:exec-user');
      // Several requests (discovery and the review) in one kubectl run, one token fetched.
      // Several discovery requests that authorization refuses (system:masters only until the
      // authorization issue): authenticated, so 403 and never 401.
      const get = await kubectl(kc, ['get', 'namespaces']);
      expect(get.stderr).toMatch(/Forbidden/);
      expect(get.stderr).not.toMatch(/Unauthorized|must be logged in/);
      expect((idp.served.get('/token') ?? 0) - before).toBe(2);
    }
  });

  it('the exec plugin refuses to prompt when stdin is not interactive', async () => {
    const cmd = join(PROJECT_ROOT, 'bin', 'clusterd');
    const kc = kubeconfigWith(
      'exec-noprompt',
      `    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: ${cmd}
      args: [credential, --issuer-url=${idp.issuer}, --client-id=kubectl]
      interactiveMode: Never`,
    );
    const r = await whoami(kc);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('standard input is not interactive');
  });

  it('webhook token authentication (v1), cached', async () => {
    const r = await whoami(withToken('webhook-token-1'));
    expect(r.user).toEqual({ username: 'wanda', uid: 'w-1', groups: ['webhookers', 'system:authenticated'], extra: { 'example.com/via': ['webhook'] } });
    await whoami(withToken('webhook-token-1'));
    const calls = webhook.received.filter((x) => x.token === 'webhook-token-1');
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ apiVersion: 'authentication.k8s.io/v1', clientCn: 'apiserver-webhook-client' });
    const bad = await whoami(withToken('webhook-token-unknown'));
    expect(bad.stderr).toMatch(/Unauthorized|must be logged in/);
  });

  it('authenticating proxy: headers count only with the proxy\'s verified certificate and an allowed name', async () => {
    const headers = {
      'X-Remote-User': 'proxied',
      'X-Remote-Uid': 'p-1',
      'X-Remote-Group': 'g1',
      'X-Remote-Extra-Acme.com%2Fproject': 'apollo',
      'content-type': 'application/json',
    };
    const body = { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' };
    const path = '/apis/authentication.k8s.io/v1/selfsubjectreviews';
    const viaProxy = new ApiClient(server.url, { caPem, certPem: proxy.certPem, keyPem: proxy.keyPem });
    const notAllowed = new ApiClient(server.url, { caPem, certPem: otherProxy.certPem, keyPem: otherProxy.keyPem });
    const noCert = new ApiClient(server.url, { caPem });
    try {
      const ok = await viaProxy.post(path, body, headers);
      expect(ok.status).toBeLessThan(300);
      expect(ok.json<{ status: { userInfo: unknown } }>().status.userInfo).toEqual({ username: 'proxied', uid: 'p-1', groups: ['g1', 'system:authenticated'], extra: { 'acme.com/project': ['apollo'] } });
      // The admin's (cluster CA) certificate is a user, never a proxy: the headers are ignored.
      const admin = await server.admin.post(path, body, headers);
      expect(admin.json<{ status: { userInfo: { username: string } } }>().status.userInfo.username).toBe('admin');
      // A proxy certificate with a CN not in --requestheader-allowed-names, and no certificate at all: 401.
      expect((await notAllowed.post(path, body, headers)).status).toBe(401);
      expect((await noCert.post(path, body, headers)).status).toBe(401);
    } finally {
      viaProxy.close();
      notAllowed.close();
      noCert.close();
    }
  });

  it('anonymous only on the configured paths', async () => {
    const anon = new ApiClient(server.url, { caPem });
    try {
      expect((await anon.get('/livez')).status).toBe(200);
      expect((await anon.get('/api')).status).toBe(401);
    } finally {
      anon.close();
    }
  });

  it('hostile tokens are 401 and never logged', async () => {
    const pub = createPublicKey({ key: idp.publicJwk as never, format: 'jwk' }).export({ type: 'spki', format: 'pem' });
    const payload = { ...claims, iss: idp.issuer, exp: Math.floor(Date.now() / 1000) + 600, sub: 'mallory' };
    const hostile = [
      `${base64url.encode('{"alg":"none"}')}.${base64url.encode(JSON.stringify(payload))}.`,
      await new SignJWT(payload).setProtectedHeader({ alg: 'HS256', kid: idp.publicJwk.kid! }).sign(Buffer.from(pub)),
      'not.a.jwt',
      `eyJ${'A'.repeat(8000)}.eyJ.sig`,
      (await idp.mint(claims)).slice(0, -4) + 'AAAA',
    ];
    const anon = new ApiClient(server.url, { caPem });
    try {
      for (const t of hostile) {
        const r = await anon.get('/api', { authorization: `Bearer ${t}` });
        expect(r.status).toBe(401);
        expect(r.json<{ kind: string; code: number }>()).toMatchObject({ kind: 'Status', code: 401 });
      }
    } finally {
      anon.close();
    }
    const logs = server.logs();
    // Neither a token nor any distinctive part of one (short parts such as "jwt" are ordinary words).
    for (const t of hostile) for (const part of [t, ...t.split('.').filter((p) => p.length >= 16)]) expect(logs.includes(part), part.slice(0, 40)).toBe(false);
    expect(logs).toContain('unable to authenticate the request');
    expect(logs).not.toContain('webhook-token-1');
  });

  /** A TokenReview of `token` by the admin, with `audiences` when given. */
  const review = async (token: string, audiences?: string[]) => {
    const r = await server.admin.post('/apis/authentication.k8s.io/v1/tokenreviews', {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenReview',
      spec: { token, ...(audiences ? { audiences } : {}) },
    });
    expect(r.status).toBeLessThan(300);
    return r.json<{ status: { authenticated?: boolean; user?: { username?: string }; audiences?: string[]; error?: string } }>().status;
  };

  it('TokenReview of an OIDC token: audience agnostic, so valid for the API audiences asked for and nothing else', async () => {
    const token = await idp.mint(claims);
    const plain = await review(token);
    expect(plain).toMatchObject({ authenticated: true, user: { username: 'oidc:alice' }, audiences: API_AUDIENCES });
    const some = await review(token, ['elsewhere', 'second-api']);
    expect(some).toMatchObject({ authenticated: true, user: { username: 'oidc:alice' }, audiences: ['second-api'] });
    // No API audience asked for: the JWT authenticator is not asked, and no other method knows the token.
    const other = await review(token, ['elsewhere']);
    expect(other.authenticated).toBeFalsy();
    expect(other.audiences).toBeUndefined();
    expect(other.error).toMatch(/^invalid bearer token/);
  });

  it('TokenReview of webhook tokens: the review carries the audiences; the answer counts for those it is valid for', async () => {
    // An audience-agnostic answer (no status.audiences) is valid for the API audiences.
    expect(await review('webhook-token-1', ['second-api', 'elsewhere'])).toMatchObject({ authenticated: true, user: { username: 'wanda' }, audiences: ['second-api'] });
    expect(webhook.received.at(-1)).toMatchObject({ token: 'webhook-token-1', audiences: ['second-api', 'elsewhere'] });
    expect((await review('webhook-token-1', ['vault'])).authenticated).toBeFalsy();
    // An audience-aware service: its status.audiences decide.
    expect(await review('webhook-vault-token', ['vault', 'elsewhere'])).toMatchObject({ authenticated: true, user: { username: 'victor' }, audiences: ['vault'] });
    expect(webhook.received.at(-1)).toMatchObject({ token: 'webhook-vault-token', audiences: ['vault', 'elsewhere'] });
    // No audiences in the review: the API audiences are asked for, for which this token is not valid.
    const plain = await review('webhook-vault-token');
    expect(plain.authenticated).toBeFalsy();
    expect(webhook.received.at(-1)).toMatchObject({ token: 'webhook-vault-token', audiences: API_AUDIENCES });
    // And so a request with it is one 401 from the bearer-token union.
    const anon = new ApiClient(server.url, { caPem });
    try {
      const r = await anon.get('/api', { authorization: 'Bearer webhook-vault-token' });
      expect(r.status).toBe(401);
    } finally {
      anon.close();
    }
  });

  it('a token every token method rejects is one error of the bearer-token union', async () => {
    const s = await review('webhook-token-unknown');
    expect(s.authenticated).toBeFalsy();
    expect(s.error).toBe('invalid bearer token, webhook: unknown token');
  });

  it('reloads the configuration: a valid change applies, an invalid one keeps the old and counts a failure', async () => {
    const metric = async (status: string) => {
      const text = (await server.admin.get('/metrics')).text();
      const m = new RegExp(`apiserver_authentication_config_controller_automatic_reloads_total\\{[^}]*status="${status}"[^}]*\\} (\\d+)`).exec(text);
      return m ? Number(m[1]) : 0;
    };
    const token = await idp.mint({ ...claims, sub: 'reloaded' });
    const until = async (check: () => Promise<boolean>) => {
      for (let i = 0; i < 100 && !(await check()); i++) await new Promise((r) => setTimeout(r, 100));
    };
    writeFileSync(configPath, authConfig(idp, 'v2:'));
    await until(async () => (await whoami(withToken(token))).user?.['username'] === 'v2:reloaded');
    expect((await whoami(withToken(token))).user?.['username']).toBe('v2:reloaded');
    expect(await metric('success')).toBe(1);
    expect((await server.admin.get('/metrics')).text()).toMatch(/apiserver_authentication_config_controller_automatic_reload_last_timestamp_seconds\{status="success",apiserver_id_hash="sha256:[0-9a-f]{64}"\} \d/);

    writeFileSync(configPath, authConfig(idp, 'v3:').replace('claims.level >= 1', 'claims.level >='));
    await until(async () => (await metric('failure')) === 1);
    expect(await metric('failure')).toBe(1);
    expect((await whoami(withToken(token))).user?.['username']).toBe('v2:reloaded');
    expect(server.logs()).toContain('authentication configuration not reloaded');
  });
});
