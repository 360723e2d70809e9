// Join tokens with a TTL on real processes (three replicas, then a fourth): `clusterd token
// create` on one replica makes a token another replica admits a joiner with (the tokens are
// replicated state); a revoked and an expired token are refused 401 by whichever member the
// joiner reaches, with a message saying which; `clusterd token list` shows what is expected
// (the join-token file's token too, with the default TTL), never a secret; a user who is not
// an administrator is refused 403. Uses the real CLI (bin/clusterd token …).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClusterProcess, sleep } from './support/cluster-process.js';
import { PROJECT_ROOT } from './support/server-process.js';

const CLUSTERD = join(PROJECT_ROOT, 'bin', 'clusterd');

const cli = (args: string[]): Promise<{ code: number; stdout: string; stderr: string }> =>
  new Promise((resolve) => {
    execFile(CLUSTERD, args, { timeout: 60_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? ((err as { code: number }).code) : -1) : 0;
      resolve({ code, stdout, stderr });
    });
  });

interface ListedToken {
  id: string;
  expires: string | null;
  expired: boolean;
  description: string;
  source?: string;
  created: string;
}

describe('join tokens with a TTL', () => {
  let cluster: ClusterProcess;
  let dir: string;
  const started = Date.now();
  const log = (l: string): void => console.log(`[${((Date.now() - started) / 1000).toFixed(1)}s] ${l}`);

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'clusterd-join-tokens-e2e-'));
    // A user who may use the API but is no administrator, for the 403.
    writeFileSync(join(dir, 'tokens.csv'), 'bob-static-token-0001,bob,bob-uid\n');
    cluster = await ClusterProcess.started({ log, extraArgs: [`--token-auth-file=${join(dir, 'tokens.csv')}`] });
  }, 180_000);
  afterAll(async () => {
    await cluster?.destroy();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const list = async (via: string): Promise<ListedToken[]> => {
    const r = await cli(['token', 'list', '-o', 'json', '--kubeconfig', cluster.kubeconfig(via)]);
    expect(r.code, r.stderr).toBe(0);
    return (JSON.parse(r.stdout) as { tokens: ListedToken[] }).tokens;
  };
  /** POST /cluster/v1/join as a joiner sends it (after pinning the CA), through `via`. */
  const joinRequest = (via: string, token: string, name = 'zz') => {
    const secretPart = token.slice(token.indexOf('::') + 2);
    const [id, secret] = secretPart.split('.');
    return cluster.http.json<{ code: number; reason: string; message: string }>(cluster.url(via), 'POST', '/cluster/v1/join', {
      name, peerAddress: '127.0.0.1:1', hosts: ['127.0.0.1'], secret, tokenId: id,
    });
  };

  it('a token created on one replica lets a fourth replica join through another; list shows it and the join-token file', async () => {
    const leader = await cluster.waitForLeader();
    const [creator, via] = [cluster.names.find((n) => n !== leader)!, leader];
    const created = await cli(['token', 'create', '--ttl=10m', '--description=for replica d', '--kubeconfig', cluster.kubeconfig(creator)]);
    expect(created.code, created.stderr).toBe(0);
    const token = created.stdout.trim();
    expect(token).toMatch(/^K10[0-9a-f]{64}::[a-z0-9]{6}\.[a-z0-9]{16}$/);
    const id = token.slice(token.indexOf('::') + 2, token.indexOf('::') + 8);
    log(`created token ${id} on ${creator}; joining d through ${via}`);

    await cluster.join('d', via, token);
    await cluster.waitReady('d', 120_000);
    // Ready is not yet listed by name: d publishes its member record once it has a leader.
    const ms = await cluster.publishedMembers(leader);
    expect(ms.map((m) => m.name).sort()).toContain('d');

    // Every replica (d too) lists the same tokens: the created one and the join-token file's.
    const fileSecret = readFileSync(join(cluster.pkiDir, 'join-token'), 'utf8').trim().split('::')[1]!;
    for (const name of cluster.names) {
      const tokens = await list(name);
      expect(tokens.map((t) => t.id).sort(), `tokens via ${name}`).toHaveLength(2);
      const mine = tokens.find((t) => t.id === id)!;
      expect(mine).toMatchObject({ description: 'for replica d', expired: false });
      const left = Date.parse(mine.expires!) - Date.now();
      expect(left).toBeGreaterThan(8 * 60_000);
      expect(left).toBeLessThanOrEqual(10 * 60_000);
      const file = tokens.find((t) => t.source === 'file')!;
      expect(file).toMatchObject({ description: 'the join-token file of the cluster PKI', expired: false });
      // The default TTL (24h) from when the cluster formed.
      expect(Date.parse(file.expires!) - Date.parse(file.created)).toBe(24 * 3600_000);
      expect(Date.parse(file.created)).toBeGreaterThan(started - 60_000);
      const text = JSON.stringify(tokens);
      expect(text).not.toContain(token.split('.')[1]);
      expect(text).not.toContain(fileSecret);
    }
    const table = await cli(['token', 'list', '--kubeconfig', cluster.kubeconfig('d')]);
    expect(table.stdout).toMatch(new RegExp(`^${id}\\s+(9m\\d+s|10m|[89]m\\d*s?)\\s+\\S+Z\\s+for replica d$`, 'm'));
  }, 300_000);

  it('a revoked token and an expired one are refused 401 by any member, saying which; list drops the revoked one', async () => {
    const names = cluster.names;
    const revoked = (await cli(['token', 'create', '--ttl=1h', '--kubeconfig', cluster.kubeconfig(names[0]!)])).stdout.trim();
    const revokedId = revoked.slice(revoked.indexOf('::') + 2, revoked.indexOf('::') + 8);
    const r = await cli(['token', 'revoke', revokedId, '--kubeconfig', cluster.kubeconfig(names[1]!)]);
    expect(r, r.stderr).toMatchObject({ code: 0, stdout: `join token "${revokedId}" revoked\n` });
    const short = (await cli(['token', 'create', '--ttl=2s', '--description=short', '--kubeconfig', cluster.kubeconfig(names[2]!)])).stdout.trim();
    const shortId = short.slice(short.indexOf('::') + 2, short.indexOf('::') + 8);
    await sleep(2500);
    for (const via of names) {
      const a = await joinRequest(via, revoked);
      expect(a.status, `revoked via ${via}`).toBe(401);
      expect(a.body.message).toBe(`join token "${revokedId}" is unknown or was revoked: make a new one with \`clusterd token create\` on a member`);
      const b = await joinRequest(via, short);
      expect(b.status, `expired via ${via}`).toBe(401);
      expect(b.body.message).toMatch(new RegExp(`^join token "${shortId}" expired at \\S+Z: make a new one with \`clusterd token create\` on a member$`));
    }
    const tokens = await list(names[3]!);
    expect(tokens.some((t) => t.id === revokedId)).toBe(false);
    expect(tokens.find((t) => t.id === shortId)).toMatchObject({ expired: true, description: 'short' });
    const table = await cli(['token', 'list', '--kubeconfig', cluster.kubeconfig(names[0]!)]);
    expect(table.stdout).toMatch(new RegExp(`^${shortId}\\s+expired\\s+\\S+Z\\s+short$`, 'm'));

    // A replica started with the expired token does not join: it exits with the message.
    const failed = await cluster.join('e', names[1]!, short).then(() => 'joined', (e: unknown) => String(e));
    expect(failed).toContain(`join token "${shortId}" expired at`);
    await cluster.forget('e');
  }, 300_000);

  it('a user who is not an administrator may not create, list or revoke tokens (403)', async () => {
    const bob = join(dir, 'bob.kubeconfig');
    const ca = Buffer.from(readFileSync(join(cluster.pkiDir, 'ca.crt'))).toString('base64');
    writeFileSync(bob, [
      'apiVersion: v1', 'kind: Config',
      `clusters: [{name: c, cluster: {server: "${cluster.url('a')}", certificate-authority-data: ${ca}}}]`,
      'users: [{name: bob, user: {token: bob-static-token-0001}}]',
      'contexts: [{name: bob, context: {cluster: c, user: bob}}]',
      'current-context: bob', '',
    ].join('\n'));
    for (const args of [['create'], ['list'], ['revoke', 'abc123']]) {
      const r = await cli(['token', ...args, '--kubeconfig', bob]);
      expect(r.code, args.join(' ')).toBe(1);
      expect(r.stderr, args.join(' ')).toMatch(/^clusterd token: forbidden: User "bob" cannot (post|get|delete) path "\/cluster\/v1\/tokens/);
    }
    expect(cluster.unexpectedExits.filter((x) => x.name !== 'e')).toEqual([]);
  }, 120_000);
});
