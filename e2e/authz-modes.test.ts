// Authorization modes end to end, against real server processes: an ABAC policy file (a user
// certificate allowed read-only in one namespace) under both namings; AlwaysDeny (only
// system:masters gets through, health included, as upstream); AlwaysAllow (anonymous turned off);
// --authorization-config reloaded while requests run: every answer is that of one whole
// configuration, an invalid file keeps the chain in force and counts a failed reload; the file
// and --authorization-mode together stop the server.
import { mkdtempSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient } from '../internal/testserver/api-client.js';
import { parseExposition, valueOf } from '../internal/testserver/prometheus-text.js';
import { issueCertificate, loadCertificateAuthority } from '../internal/pki/certificates.js';
import { startServerProcess, type ServerProcess } from './support/server-process.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A client with a certificate for `user` in `groups`, signed by the server's CA; or none (anonymous). */
async function clientFor(server: ServerProcess, user?: string, groups: string[] = []): Promise<ApiClient> {
  const pki = join(server.dataDir, 'pki');
  const caPem = readFileSync(join(pki, 'ca.crt'), 'utf8');
  if (user === undefined) return new ApiClient(server.url, { caPem });
  const ca = await loadCertificateAuthority(caPem, readFileSync(join(pki, 'ca.key'), 'utf8'));
  const { certPem, keyPem } = await issueCertificate(ca, { commonName: user, organizations: groups, usage: 'client' });
  return new ApiClient(server.url, { caPem, certPem, keyPem });
}

const message = (body: string): string => (JSON.parse(body) as { message: string }).message;

for (const naming of ['cluster', 'kubernetes'] as const) {
  describe(`--authorization-mode=ABAC with --naming=${naming}`, () => {
    let server: ServerProcess;
    let alice: ApiClient;
    beforeAll(async () => {
      const dataDir = mkdtempSync(join(tmpdir(), 'clusterd-abac-'));
      const apiVersion = `abac.authorization.${naming === 'cluster' ? 'cluster.io' : 'kubernetes.io'}/v1beta1`;
      const policy = (spec: Record<string, unknown>) => JSON.stringify({ apiVersion, kind: 'Policy', spec });
      writeFileSync(
        join(dataDir, 'policy.jsonl'),
        ['# alice reads everything in team-a, and nothing else', '', policy({ user: 'alice', namespace: 'team-a', resource: '*', apiGroup: '*', readonly: true }), policy({ group: 'system:authenticated', nonResourcePath: '/version', readonly: true })].join('\n') + '\n',
      );
      server = await startServerProcess([`--naming=${naming}`, '--storage=memory', '--authorization-mode=ABAC', `--authorization-policy-file=${join(dataDir, 'policy.jsonl')}`], dataDir);
      alice = await clientFor(server, 'alice', ['dev']);
      for (const ns of ['team-a', 'team-b']) expect((await server.admin.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } })).status).toBeLessThan(300);
      expect((await server.admin.post('/api/v1/namespaces/team-a/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings' }, data: { a: '1' } })).status).toBeLessThan(300);
    });
    afterAll(async () => {
      alice?.close();
      await server?.stop();
    });

    it('lets alice read in team-a and nothing more', async () => {
      const got = await alice.get('/api/v1/namespaces/team-a/configmaps/settings');
      expect(got.status).toBe(200);
      expect(got.json<{ data: Record<string, string> }>().data).toEqual({ a: '1' });
      expect((await alice.get('/api/v1/namespaces/team-a/configmaps')).status).toBe(200);
      expect((await alice.get('/apis/apps/v1/namespaces/team-a/deployments')).status).toBe(200);
      expect((await alice.get('/version')).status).toBe(200);

      const create = await alice.post('/api/v1/namespaces/team-a/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'mine' } });
      expect(create.status).toBe(403);
      expect(create.json()).toMatchObject({ kind: 'Status', reason: 'Forbidden', code: 403 });
      expect(message(create.text())).toBe('configmaps is forbidden: User "alice" cannot create resource "configmaps" in API group "" in the namespace "team-a": No policy matched.');
      const other = await alice.get('/api/v1/namespaces/team-b/configmaps');
      expect(other.status).toBe(403);
      expect(message(other.text())).toBe('configmaps is forbidden: User "alice" cannot list resource "configmaps" in API group "" in the namespace "team-b": No policy matched.');
      expect((await alice.get('/api/v1/namespaces')).status).toBe(403);
      // system:masters is allowed before the policy is consulted.
      expect((await server.admin.post('/api/v1/namespaces/team-a/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'admins' } })).status).toBeLessThan(300);
    });
  });
}

describe('--authorization-mode=AlwaysDeny', () => {
  let server: ServerProcess;
  beforeAll(async () => {
    server = await startServerProcess(['--storage=memory', '--authorization-mode=AlwaysDeny']);
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('lets system:masters through and nobody else, health included', async () => {
    expect((await server.admin.get('/api/v1/namespaces')).status).toBe(200);
    expect((await server.admin.get('/healthz')).status).toBe(200);
    const bob = await clientFor(server, 'bob', ['ops']);
    const anonymous = await clientFor(server);
    try {
      const list = await bob.get('/api/v1/namespaces');
      expect(list.status).toBe(403);
      expect(message(list.text())).toBe('namespaces is forbidden: User "bob" cannot list resource "namespaces" in API group "" at the cluster scope: Everything is forbidden.');
      const health = await anonymous.get('/healthz');
      expect(health.status).toBe(403);
      expect(message(health.text())).toBe('forbidden: User "system:anonymous" cannot get path "/healthz": Everything is forbidden.');
    } finally {
      bob.close();
      anonymous.close();
    }
  });
});

describe('--authorization-mode=AlwaysAllow', () => {
  let server: ServerProcess;
  beforeAll(async () => {
    server = await startServerProcess(['--storage=memory', '--authorization-mode=AlwaysAllow']);
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('allows every authenticated user and turns anonymous requests off, as upstream', async () => {
    const bob = await clientFor(server, 'bob');
    const anonymous = await clientFor(server);
    try {
      expect((await bob.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'bobs' } })).status).toBeLessThan(300);
      expect((await anonymous.get('/version')).status).toBe(401);
      expect(server.logs()).toContain('anonymous authentication is not allowed with the AlwaysAllow authorizer');
    } finally {
      bob.close();
      anonymous.close();
    }
  });
});

describe('--authorization-config', () => {
  const config = (authorizers: Array<Record<string, unknown>>) => JSON.stringify({ apiVersion: 'apiserver.config.cluster.io/v1', kind: 'AuthorizationConfiguration', authorizers });
  // A: Node and RBAC (no bindings for these users; what the bootstrap roles grant: health and
  // version to everyone, self reviews to the authenticated). B: Node alone, which has no
  // opinion on anyone here. Each request's answer tells which whole chain decided it.
  const A = config([{ type: 'Node', name: 'nodes-a' }, { type: 'RBAC', name: 'rbac-a' }]);
  const B = config([{ type: 'Node', name: 'nodes-b' }]);
  const INVALID = config([{ type: 'RBAC', name: 'one' }, { type: 'RBAC', name: 'two' }]);

  it('cannot be combined with --authorization-mode', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'clusterd-authz-'));
    writeFileSync(join(dir, 'authz.json'), A);
    await expect(startServerProcess(['--storage=memory', `--authorization-config=${join(dir, 'authz.json')}`, '--authorization-mode=RBAC'])).rejects.toThrow(
      /server exited with 2 before serving:[\s\S]*--authorization-config can not be specified when --authorization-mode or --authorization-webhook-\* flags are defined/,
    );
  });

  it('stops the start on an invalid file, naming the problem', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'clusterd-authz-'));
    writeFileSync(join(dir, 'authz.json'), INVALID);
    await expect(startServerProcess(['--storage=memory', `--authorization-config=${join(dir, 'authz.json')}`])).rejects.toThrow(/server exited with 1 before serving:[\s\S]*authorizers\[1\]\.type: Duplicate value: \\?"RBAC\\?"/);
  });

  describe('reloaded under load', () => {
    let server: ServerProcess;
    let file: string;
    beforeAll(async () => {
      const dir = mkdtempSync(join(tmpdir(), 'clusterd-authz-'));
      file = join(dir, 'authz.json');
      writeFileSync(file, A);
      server = await startServerProcess(['--storage=memory', `--authorization-config=${file}`], dir);
    });
    afterAll(async () => {
      await server?.stop();
    });

    /** Replaced as a ConfigMap volume or an editor does (a new file renamed over the old one). */
    const replace = (text: string): void => {
      writeFileSync(`${file}.tmp`, text);
      renameSync(`${file}.tmp`, file);
    };
    const metrics = async () => parseExposition((await server.admin.get('/metrics')).text());
    const reloads = async (status: string): Promise<number> => {
      const sample = (await metrics()).samples.find((s) => s.name === 'apiserver_authorization_config_controller_automatic_reloads_total' && s.labels.status === status);
      return sample?.value ?? 0;
    };

    it('answers every request with one whole configuration, and an invalid file keeps the one in force', async () => {
      const anonymous = await clientFor(server);
      const alice = await clientFor(server, 'alice');
      const ssar = { apiVersion: 'authorization.cluster.io/v1', kind: 'SelfSubjectAccessReview', spec: { nonResourceAttributes: { path: '/version', verb: 'get' } } };
      // What each configuration answers, per request kind.
      type Seen = 'A' | 'B' | `other: ${string}`;
      const versionAnswer = async (): Promise<Seen> => {
        const r = await anonymous.get('/version');
        if (r.status === 200) return 'A';
        if (r.status === 403 && message(r.text()) === 'forbidden: User "system:anonymous" cannot get path "/version"') return 'B';
        return `other: ${r.status} ${r.text()}`;
      };
      const reviewAnswer = async (): Promise<Seen> => {
        const r = await alice.post('/apis/authorization.cluster.io/v1/selfsubjectaccessreviews', ssar);
        if (r.status < 300 && r.json<{ status: { allowed: boolean } }>().status.allowed === true) return 'A';
        if (r.status === 403 && message(r.text()).startsWith('selfsubjectaccessreviews.authorization.cluster.io is forbidden: User "alice" cannot create resource "selfsubjectaccessreviews"')) return 'B';
        return `other: ${r.status} ${r.text()}`;
      };
      const seen: Seen[] = [];
      let running = true;
      const worker = async (ask: () => Promise<Seen>) => {
        while (running) seen.push(await ask());
      };
      const workers = [worker(versionAnswer), worker(versionAnswer), worker(reviewAnswer), worker(reviewAnswer)];
      /** Waits until `want` answers a fresh request of each kind (the file is polled every second). */
      const until = async (want: 'A' | 'B'): Promise<void> => {
        for (let i = 0; i < 100; i++) {
          if ((await versionAnswer()) === want && (await reviewAnswer()) === want) return;
          await sleep(100);
        }
        throw new Error(`configuration ${want} never took effect`);
      };
      try {
        await until('A');
        replace(B);
        await until('B');
        replace(A);
        await until('A');
        expect(await reloads('success')).toBe(2);

        const failuresBefore = await reloads('failure');
        replace(INVALID);
        for (let i = 0; i < 100 && (await reloads('failure')) === failuresBefore; i++) await sleep(100);
        expect(await reloads('failure')).toBe(failuresBefore + 1);
        // The chain in force stays A while the invalid file sits there.
        const afterInvalid = seen.length;
        await sleep(1500);
        expect(seen.slice(afterInvalid).every((s) => s === 'A')).toBe(true);
        expect(seen.length - afterInvalid).toBeGreaterThan(0);
        expect(server.logs()).toContain('authorization configuration not reloaded: keeping the previous one');

        replace(B);
        await until('B');
      } finally {
        running = false;
        await Promise.all(workers);
        anonymous.close();
        alice.close();
      }
      const others = seen.filter((s) => s !== 'A' && s !== 'B');
      expect(others).toEqual([]);
      expect(seen.filter((s) => s === 'A').length).toBeGreaterThan(0);
      expect(seen.filter((s) => s === 'B').length).toBeGreaterThan(0);
      // Decisions are counted under the configured names.
      const m = await metrics();
      expect(valueOf(m, 'apiserver_authorization_decisions_total', { type: 'RBAC', name: 'rbac-a', decision: 'allowed' })).toBeGreaterThan(0);
      expect(await reloads('success')).toBe(3);
    });
  });
});
