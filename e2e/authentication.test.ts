// Authentication end to end: real kubectl against a real server process, under both namings.
// A service-account token from the TokenRequest sub-resource (`kubectl create token` under the
// upstream naming; the same POST through `kubectl create --raw` under the cluster naming, where
// kubectl's built-in types carry other group names), a static token user and a bootstrap token
// user each ask "who am I" (SelfSubjectReview, allowed to every authenticated user); the
// service-account controller's objects, the token cleaner and the bootstrap signer; a refused
// token is 401 with anonymous access on and never appears in the server's log.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { createHmac } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { request } from 'node:https';
import { join } from 'node:path';
import { kubectl, kubectlAvailable } from './support/kubectl.js';
import { startServerProcess, type ServerProcess } from './support/server-process.js';

const STATIC_TOKEN = 'static-token-0123456789';
const BOOTSTRAP_ID = 'abcdef';
const BOOTSTRAP_SECRET = '0123456789abcdef';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A plain HTTPS request with only the CA (no client certificate): what an anonymous or token client sends. */
function raw(server: ServerProcess, path: string, token?: string): Promise<{ status: number; body: string }> {
  const ca = readFileSync(join(server.dataDir, 'pki', 'ca.crt'));
  return new Promise((resolve, reject) => {
    const req = request(`${server.url}${path}`, { ca, headers: token ? { authorization: `Bearer ${token}` } : {} }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

for (const naming of ['kubernetes', 'cluster'] as const) {
  describe.skipIf(!kubectlAvailable() && process.env.CI !== 'true')(`authentication with --naming=${naming}`, () => {
    let server: ServerProcess;
    let tokenKubeconfig: string;
    const authn = naming === 'kubernetes' ? 'authentication.k8s.io' : 'authentication.cluster.io';
    const domain = naming === 'kubernetes' ? 'kubernetes.io' : 'cluster.io';
    const ok = async (...args: string[]): Promise<string> => {
      const r = await kubectl(server.kubeconfig, args);
      if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} exited ${String(r.code)}: ${r.stderr}`);
      return r.stdout;
    };
    const okWith = async (input: string, ...args: string[]): Promise<string> => {
      const r = await kubectl(server.kubeconfig, args, input);
      if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} exited ${String(r.code)}: ${r.stderr}`);
      return r.stdout;
    };
    /** `kubectl auth whoami` with a bearer token (no client certificate), as its JSON. */
    const whoami = async (token: string): Promise<{ code: number | null; user?: Record<string, unknown>; stderr: string }> => {
      const r =
        naming === 'kubernetes'
          ? await kubectl(tokenKubeconfig, [`--token=${token}`, 'auth', 'whoami', '-o', 'json'])
          : await kubectl(tokenKubeconfig, [`--token=${token}`, 'create', '--raw', `/apis/${authn}/v1/selfsubjectreviews`, '-f', '-'], JSON.stringify({ apiVersion: `${authn}/v1`, kind: 'SelfSubjectReview' }));
      if (r.code !== 0) return { code: r.code, stderr: r.stderr };
      return { code: 0, user: (JSON.parse(r.stdout) as { status: { userInfo: Record<string, unknown> } }).status.userInfo, stderr: r.stderr };
    };
    const waitFor = async <T>(what: string, probe: () => Promise<T | undefined>): Promise<T> => {
      for (let i = 0; i < 100; i++) {
        const v = await probe();
        if (v !== undefined) return v;
        await sleep(100);
      }
      throw new Error(`timed out waiting for ${what}`);
    };

    beforeAll(async () => {
      const dataDir = mkdtempSync(join(tmpdir(), 'clusterd-authn-'));
      writeFileSync(join(dataDir, 'tokens.csv'), `${STATIC_TOKEN},alice,alice-uid,"dev,ops"\n`);
      server = await startServerProcess(
        [`--naming=${naming}`, '--storage=memory', '--enable-bootstrap-token-auth', '--controllers=*,bootstrapsigner,tokencleaner', '--log-level=debug', `--token-auth-file=${join(dataDir, 'tokens.csv')}`],
        dataDir,
      );
      tokenKubeconfig = join(server.dataDir, 'token.kubeconfig');
      const ca = readFileSync(join(server.dataDir, 'pki', 'ca.crt')).toString('base64');
      writeFileSync(
        tokenKubeconfig,
        `apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: ${server.url}\n    certificate-authority-data: ${ca}\nusers:\n- name: u\n  user: {}\ncontexts:\n- name: c\n  context: {cluster: c, user: u}\ncurrent-context: c\n`,
      );
    }, 60_000);
    afterAll(async () => {
      await server?.stop();
    });

    it('a new namespace gets the default service account and the CA config map; a bound token names the account, its pod and the credential', async () => {
      const caName = naming === 'kubernetes' ? 'kube-root-ca.crt' : 'cluster-root-ca.crt';
      await ok('create', 'namespace', 'team');
      const saUid = await waitFor('the default service account', async () => (await kubectl(server.kubeconfig, ['get', 'sa', 'default', '-n', 'team', '-o', 'jsonpath={.metadata.uid}'])).stdout || undefined);
      const caData = await waitFor('the CA config map', async () => (await kubectl(server.kubeconfig, ['get', 'configmap', caName, '-n', 'team', '-o', 'jsonpath={.data.ca\\.crt}'])).stdout || undefined);
      expect(caData.trim()).toBe(readFileSync(join(server.dataDir, 'pki', 'ca.crt'), 'utf8').trim());
      await ok('run', 'web', '-n', 'team', '--image=nginx');
      const podUid = await ok('get', 'pod', 'web', '-n', 'team', '-o', 'jsonpath={.metadata.uid}');

      let token: string;
      if (naming === 'kubernetes') {
        token = (await ok('create', 'token', 'default', '-n', 'team', '--audience=extra-aud', '--audience=https://kubernetes.default.svc.cluster.local', '--duration=20m', '--bound-object-kind=Pod', '--bound-object-name=web')).trim();
      } else {
        const body = { apiVersion: `${authn}/v1`, kind: 'TokenRequest', spec: { audiences: ['extra-aud', 'https://kubernetes.default.svc.cluster.local'], expirationSeconds: 1200, boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'web' } } };
        token = (JSON.parse(await okWith(JSON.stringify(body), 'create', '--raw', '/api/v1/namespaces/team/serviceaccounts/default/token', '-f', '-')) as { status: { token: string } }).status.token;
      }
      const claims = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;
      expect(claims).toMatchObject({ iss: 'https://kubernetes.default.svc.cluster.local', sub: 'system:serviceaccount:team:default', aud: ['extra-aud', 'https://kubernetes.default.svc.cluster.local'] });
      expect((claims.exp as number) - (claims.iat as number)).toBe(1200);
      expect(claims[domain]).toEqual({ namespace: 'team', pod: { name: 'web', uid: podUid }, serviceaccount: { name: 'default', uid: saUid } });

      const who = await whoami(token);
      expect(who.user).toEqual({
        username: 'system:serviceaccount:team:default',
        uid: saUid,
        groups: ['system:serviceaccounts', 'system:serviceaccounts:team', 'system:authenticated'],
        extra: {
          [`authentication.${domain}/credential-id`]: [`JTI=${String(claims.jti)}`],
          [`authentication.${domain}/pod-name`]: ['web'],
          [`authentication.${domain}/pod-uid`]: [podUid],
        },
      });

      // TokenReview (as the admin, the only one authorized to ask) honours the audiences asked for.
      const review = (audiences: string[]) =>
        okWith(JSON.stringify({ apiVersion: `${authn}/v1`, kind: 'TokenReview', spec: { token, audiences } }), 'create', '--raw', `/apis/${authn}/v1/tokenreviews`, '-f', '-').then((o) => (JSON.parse(o) as { status: Record<string, unknown> }).status);
      expect(await review(['extra-aud', 'nobody'])).toMatchObject({ authenticated: true, audiences: ['extra-aud'], user: { username: 'system:serviceaccount:team:default', uid: saUid } });
      expect(await review(['nobody'])).toEqual({ user: {}, error: expect.stringContaining('invalid for the target audiences') });

      // Deleting the pod the token is bound to revokes it.
      await ok('delete', 'pod', 'web', '-n', 'team', '--wait=false');
      const after = await waitFor('revocation', async () => {
        const w = await whoami(token);
        return w.code !== 0 ? w : undefined;
      });
      expect(after.stderr).toContain('Unauthorized');
      expect(server.logs()).not.toContain(token);
    });

    it('a static token user, and a refused token is 401 even though anonymous access is on', async () => {
      expect((await whoami(STATIC_TOKEN)).user).toEqual({ username: 'alice', uid: 'alice-uid', groups: ['dev', 'ops', 'system:authenticated'] });
      const bad = 'not-a-known-token-7f3a9c';
      const refused = await raw(server, '/version', bad);
      expect(refused.status).toBe(401);
      expect(JSON.parse(refused.body)).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'Unauthorized', code: 401 });
      expect((await raw(server, '/version')).status).toBe(200);
      expect(server.logs()).toContain('unable to authenticate the request');
      expect(server.logs()).not.toContain(bad);
    });

    it('a bootstrap token user; the signer signs cluster-info with it and the cleaner removes an expired token', async () => {
      const type = `bootstrap.${domain}/token`;
      const expiration = new Date(Date.now() + 3600_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
      await ok('create', 'secret', 'generic', `bootstrap-token-${BOOTSTRAP_ID}`, '-n', 'kube-system', `--type=${type}`, `--from-literal=token-id=${BOOTSTRAP_ID}`,
        `--from-literal=token-secret=${BOOTSTRAP_SECRET}`, '--from-literal=usage-bootstrap-authentication=true', '--from-literal=usage-bootstrap-signing=true',
        '--from-literal=auth-extra-groups=system:bootstrappers:workers', `--from-literal=expiration=${expiration}`);
      await ok('create', 'secret', 'generic', 'bootstrap-token-old000', '-n', 'kube-system', `--type=${type}`, '--from-literal=token-id=old000',
        '--from-literal=token-secret=0000000000000000', '--from-literal=usage-bootstrap-authentication=true', '--from-literal=expiration=2020-01-01T00:00:00Z');
      const token = `${BOOTSTRAP_ID}.${BOOTSTRAP_SECRET}`;
      const who = await waitFor('the bootstrap token in the cache', async () => (await whoami(token)).user);
      expect(who).toEqual({ username: `system:bootstrap:${BOOTSTRAP_ID}`, groups: ['system:bootstrappers', 'system:bootstrappers:workers', 'system:authenticated'] });
      expect((await whoami('old000.0000000000000000')).code).not.toBe(0);
      await waitFor('the cleaner', async () => ((await kubectl(server.kubeconfig, ['get', 'secret', 'bootstrap-token-old000', '-n', 'kube-system'])).code !== 0 ? true : undefined));

      const info = await waitFor('the signature', async () => {
        const out = await kubectl(server.kubeconfig, ['get', 'configmap', 'cluster-info', '-n', 'kube-public', '-o', 'json']);
        const data = out.code === 0 ? (JSON.parse(out.stdout) as { data: Record<string, string> }).data : undefined;
        return data?.[`jws-kubeconfig-${BOOTSTRAP_ID}`] ? data : undefined;
      });
      expect(info.kubeconfig).toContain(`server: ${server.url}`);
      // Spec §2.4: put the base64url payload between the dots and verify HS256 with the full token.
      const [header, , signature] = info[`jws-kubeconfig-${BOOTSTRAP_ID}`]!.split('.');
      const input = `${header}.${Buffer.from(info.kubeconfig!).toString('base64url')}`;
      expect(signature).toBe(createHmac('sha256', token).update(input).digest('base64url'));
      expect(Object.keys(info).filter((k) => k.startsWith('jws-'))).toEqual([`jws-kubeconfig-${BOOTSTRAP_ID}`]);
    });
  });
}

describe('a malformed token file', () => {
  it('stops the server at start with the file and line named', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'clusterd-authn-'));
    writeFileSync(join(dir, 'tokens.csv'), 'good-token,alice,u1\nshort-token,bob\n');
    await expect(startServerProcess(['--storage=memory', `--token-auth-file=${join(dir, 'tokens.csv')}`], dir)).rejects.toThrow(/tokens\.csv' line 2: must have at least 3 columns/);
  });
});
