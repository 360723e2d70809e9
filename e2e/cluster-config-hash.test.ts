// Three replicas, each reading its own copy of the authentication configuration (a static token
// file): while the copies agree every replica is ready; when one replica's copy changes, the
// replicas whose loaded configuration differs from the leader's fail the named `config-hash`
// readyz check (excludable with ?exclude=) and set clusterd_config_hash_mismatch to 1; putting
// the file back clears both, without a restart.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClusterProcess, sleep } from './support/cluster-process.js';
import { HttpsClient, adminCredentials } from './support/https-client.js';

const SAME = 'static-token-1,sam,sam-uid,"devs,ops"\n';
const OTHER = 'static-token-1,sam,sam-uid,"devs,ops"\nstatic-token-2,tom,tom-uid\n';

describe('configuration hash across replicas', () => {
  let dir: string;
  let cluster: ClusterProcess;
  let http: HttpsClient;
  const tokens = (name: string) => join(dir, `tokens-${name}.csv`);

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'clusterd-config-hash-'));
    for (const name of ['a', 'b', 'c']) writeFileSync(tokens(name), SAME);
    cluster = await ClusterProcess.started({ argsFor: (name) => [`--token-auth-file=${tokens(name)}`] });
    http = new HttpsClient(adminCredentials(cluster.pkiDir));
  });
  afterAll(async () => {
    http?.close();
    await cluster?.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Per replica: whether its config-hash check passes, and its mismatch gauge. */
  const observe = async () => {
    const seen = new Map<string, { check: boolean; gauge: number; excluded: number }>();
    for (const name of cluster.names) {
      const ready = await http.request(cluster.url(name), 'GET', '/readyz?verbose');
      const excluded = await http.request(cluster.url(name), 'GET', '/readyz?exclude=config-hash');
      const metrics = await http.request(cluster.url(name), 'GET', '/metrics');
      const gauge = /^clusterd_config_hash_mismatch (\d+)$/m.exec(metrics.body);
      seen.set(name, { check: ready.body.includes('[+]config-hash ok'), gauge: Number(gauge?.[1] ?? NaN), excluded: excluded.status });
      if (!ready.body.includes('[+]config-hash ok')) expect(ready.body, name).toContain('[-]config-hash failed');
    }
    return seen;
  };
  const until = async (want: (name: string) => boolean) => {
    let seen = await observe();
    const matches = () => cluster.names.every((n) => seen.get(n)!.check === !want(n) && seen.get(n)!.gauge === (want(n) ? 1 : 0));
    for (let i = 0; i < 150 && !matches(); i++) {
      await sleep(200);
      seen = await observe();
    }
    return { seen, ok: matches() };
  };

  it('agreeing copies: every replica passes the check', async () => {
    const { seen, ok } = await until(() => false);
    expect(ok, JSON.stringify([...seen])).toBe(true);
  });

  it("a replica whose copy differs from the leader's fails the named check and sets the metric; restoring it clears both", async () => {
    const leader = await cluster.waitForLeader();
    // The replica whose file changes is never the leader, so it alone differs from the leader.
    const odd = cluster.names.find((n) => n !== leader)!;
    writeFileSync(tokens(odd), OTHER);
    const differs = await until((n) => n === odd);
    expect(differs.ok, JSON.stringify([...differs.seen])).toBe(true);
    // The check is named: excluding it makes the replica ready again.
    expect(differs.seen.get(odd)!.excluded).toBe(200);
    writeFileSync(tokens(odd), SAME);
    const agrees = await until(() => false);
    expect(agrees.ok, JSON.stringify([...agrees.seen])).toBe(true);
  });
});
