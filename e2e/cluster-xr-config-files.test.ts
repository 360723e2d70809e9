// Three replicas, each reading its own copy of a structured authorization configuration
// (--authorization-config) and authentication configuration (--authentication-config): the same
// change made to all three copies takes effect on each replica without a restart, and a replica
// whose copy differs from the leader's says so in its config-hash readyz check and metric.
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request as httpsRequest } from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClusterProcess, sleep } from './support/cluster-process.js';
import { HttpsClient, adminCredentials } from './support/https-client.js';

const authz = (authorizers: Array<Record<string, unknown>>) => JSON.stringify({ apiVersion: 'apiserver.config.cluster.io/v1', kind: 'AuthorizationConfiguration', authorizers });
// A: Node and RBAC (the bootstrap roles let anyone read /version). B: Node alone, which has no
// opinion on an anonymous /version.
const AUTHZ_A = authz([{ type: 'Node', name: 'node' }, { type: 'RBAC', name: 'rbac' }]);
const AUTHZ_B = authz([{ type: 'Node', name: 'node' }]);
const authn = (paths: string[]) =>
  JSON.stringify({ apiVersion: 'apiserver.config.cluster.io/v1', kind: 'AuthenticationConfiguration', anonymous: { enabled: true, conditions: paths.map((path) => ({ path })) } });
// Anonymous requests only to these paths (others are 401).
const AUTHN_A = authn(['/livez', '/readyz', '/healthz', '/version']);
const AUTHN_B = authn(['/livez', '/readyz', '/healthz']);

describe('structured access-control files on every replica', () => {
  let dir: string;
  let cluster: ClusterProcess;
  let http: HttpsClient;
  const file = (kind: 'authz' | 'authn', name: string) => join(dir, `${kind}-${name}.json`);
  /** Replaced as a ConfigMap volume does (a new file renamed over the old one). */
  const write = (path: string, text: string): void => {
    writeFileSync(`${path}.tmp`, text);
    renameSync(`${path}.tmp`, path);
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'clusterd-xr-config-'));
    for (const name of ['a', 'b', 'c']) {
      write(file('authz', name), AUTHZ_A);
      write(file('authn', name), AUTHN_A);
    }
    cluster = await ClusterProcess.started({ argsFor: (name) => [`--authorization-config=${file('authz', name)}`, `--authentication-config=${file('authn', name)}`] });
    http = new HttpsClient(adminCredentials(cluster.pkiDir));
  });
  afterAll(async () => {
    http?.close();
    await cluster?.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  /** An anonymous GET /version (no client certificate). */
  const anonymousVersion = (name: string): Promise<number> =>
    new Promise((resolve, reject) => {
      const req = httpsRequest(new URL('/version', cluster.url(name)), { rejectUnauthorized: false }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', reject);
      req.end();
    });
  const everyReplica = async (want: number): Promise<Record<string, number>> => {
    const seen: Record<string, number> = {};
    // Files are watched and re-read: give each replica a moment to notice.
    for (const name of cluster.names) {
      for (let i = 0; i < 100; i++) {
        seen[name] = await anonymousVersion(name);
        if (seen[name] === want) break;
        await sleep(100);
      }
    }
    return seen;
  };
  const hashCheck = async (name: string) => {
    const ready = await http.request(cluster.url(name), 'GET', '/readyz?verbose');
    const metrics = await http.request(cluster.url(name), 'GET', '/metrics');
    return { ok: ready.body.includes('[+]config-hash ok'), mismatch: Number(/^clusterd_config_hash_mismatch (\d+)$/m.exec(metrics.body)?.[1] ?? NaN) };
  };
  const untilHashes = async (differs: (name: string) => boolean) => {
    const seen: Record<string, { ok: boolean; mismatch: number }> = {};
    for (const name of cluster.names) {
      for (let i = 0; i < 150; i++) {
        seen[name] = await hashCheck(name);
        if (seen[name].ok === !differs(name) && seen[name].mismatch === (differs(name) ? 1 : 0)) break;
        await sleep(200);
      }
    }
    return seen;
  };

  it('the same authorization change on every copy takes effect on every replica', async () => {
    expect(await everyReplica(200)).toEqual({ a: 200, b: 200, c: 200 });
    for (const name of cluster.names) write(file('authz', name), AUTHZ_B);
    expect(await everyReplica(403)).toEqual({ a: 403, b: 403, c: 403 });
    expect(await untilHashes(() => false)).toEqual(Object.fromEntries(cluster.names.map((n) => [n, { ok: true, mismatch: 0 }])));
    for (const name of cluster.names) write(file('authz', name), AUTHZ_A);
    expect(await everyReplica(200)).toEqual({ a: 200, b: 200, c: 200 });
  });

  it('the same authentication change on every copy takes effect on every replica', async () => {
    for (const name of cluster.names) write(file('authn', name), AUTHN_B);
    expect(await everyReplica(401)).toEqual({ a: 401, b: 401, c: 401 });
    expect(await untilHashes(() => false)).toEqual(Object.fromEntries(cluster.names.map((n) => [n, { ok: true, mismatch: 0 }])));
    for (const name of cluster.names) write(file('authn', name), AUTHN_A);
    expect(await everyReplica(200)).toEqual({ a: 200, b: 200, c: 200 });
  });

  it("a follower whose authorization copy differs from the leader's fails config-hash and sets the metric; restored, both clear", async () => {
    const leader = await cluster.waitForLeader();
    const odd = cluster.names.find((n) => n !== leader)!;
    write(file('authz', odd), AUTHZ_B);
    expect(await untilHashes((n) => n === odd)).toEqual(Object.fromEntries(cluster.names.map((n) => [n, n === odd ? { ok: false, mismatch: 1 } : { ok: true, mismatch: 0 }])));
    write(file('authz', odd), AUTHZ_A);
    expect(await untilHashes(() => false)).toEqual(Object.fromEntries(cluster.names.map((n) => [n, { ok: true, mismatch: 0 }])));
  });
});
