import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { delimiter, join } from 'node:path';
import { readFileSync } from 'node:fs';
import type { CommandIo } from './args.js';
import { runCaptured } from './run-captured.js';
import { runTokenCommand, tokenHelp, tokensTable } from './token-command.js';
import { json, startTestMembersServer, statusBody, type TestMembersServer } from './test-members-server.js';
import { LevelRevisionStore } from '../store/revision-store.js';
import { silentLogger } from '../log/logger.js';
import { handleJoinTokens, JoinTokens, JOIN_TOKEN_PREFIX } from '../cluster/join-tokens.js';
import { caHashOf, parseJoinToken } from '../pki/join-token.js';

// The server end is the real one: the /cluster/v1/tokens handler over a LevelDB store, behind
// a real HTTPS server that checks the kubeconfig's client certificate.
let srv: TestMembersServer;
let store: LevelRevisionStore;
let clock = Date.parse('2026-11-28T10:00:00Z');
let tokens: JoinTokens;
let caHash: string;

beforeAll(async () => {
  srv = await startTestMembersServer();
  store = await LevelRevisionStore.open({ storage: 'leveldb', path: join(srv.dir, 'store') });
  tokens = new JoinTokens(store, silentLogger, () => clock);
  caHash = caHashOf(readFileSync(srv.pki.caCert, 'utf8'));
});
afterAll(async () => {
  await store.close();
  await srv.close();
});
beforeEach(async () => {
  srv.requests.length = 0;
  srv.respond = (req, res) => {
    void handleJoinTokens(req.method, req.url, async () => req.body, { tokens, caHash: () => caHash }).then(async (r) => {
      if (!r) return json(res, 404, statusBody(404, 'NotFound', 'the server could not find the requested resource'));
      res.writeHead(r.status, { 'content-type': 'application/json' }).end(await r.text());
    });
  };
  for (const t of await tokens.list()) await tokens.revoke(t.id);
});

const token = (argv: string[], env: NodeJS.ProcessEnv = {}) => runCaptured(['token', ...argv], env);

describe('clusterd token', () => {
  it('--help explains the three commands, every flag and the join-token file', async () => {
    const { code, stdout } = await token(['--help']);
    expect(code).toBe(0);
    expect(stdout).toBe(tokenHelp());
    for (const text of ['token create', 'token list', 'token revoke ID', '--ttl=DURATION', 'Default 24h', '0 means it', '--description=TEXT', '--kubeconfig=FILE', '-o, --output=json', '<pki-dir>/join-token', 'Exit status']) {
      expect(stdout).toContain(text);
    }
    expect((await token(['create', '--help'])).stdout).toBe(tokenHelp());
  });

  it('create prints the token, recorded with the default TTL of 24h and the description', async () => {
    const { code, stdout, stderr } = await token(['create', '--description', 'node d', '--kubeconfig', srv.kubeconfig]);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toMatch(new RegExp(`^K10${caHash}::[a-z0-9]{6}\\.[a-z0-9]{16}\\n$`));
    const parsed = parseJoinToken(stdout);
    expect(await tokens.check(parsed)).toEqual({ ok: true, id: parsed.id });
    const [listed] = await tokens.list();
    expect(listed).toMatchObject({ id: parsed.id, expires: '2026-11-29T10:00:00Z', description: 'node d' });
    expect(srv.requests).toMatchObject([{ method: 'POST', url: '/cluster/v1/tokens', clientCn: 'admin' }]);
    expect(JSON.parse(srv.requests[0]!.body)).toEqual({ ttlSeconds: 86_400, description: 'node d' });
  });

  it('--ttl takes a Go duration; 0 never expires', async () => {
    const a = parseJoinToken((await token(['create', '--ttl=1h30m', `--kubeconfig=${srv.kubeconfig}`])).stdout);
    const b = parseJoinToken((await token(['create', '--ttl', '0', `--kubeconfig=${srv.kubeconfig}`])).stdout);
    const byId = new Map((await tokens.list()).map((r) => [r.id, r]));
    expect(byId.get(a.id!)!.expires).toBe('2026-11-28T11:30:00Z');
    expect(byId.get(b.id!)!.expires).toBeNull();
  });

  it('list shows ID, time left, expiry and description (expired and <forever> too), never a secret', async () => {
    const short = parseJoinToken((await token(['create', '--ttl=10s', '--description=short', '--kubeconfig', srv.kubeconfig])).stdout);
    const day = parseJoinToken((await token(['create', '--kubeconfig', srv.kubeconfig])).stdout);
    const never = parseJoinToken((await token(['create', '--ttl=0', '--description=forever', '--kubeconfig', srv.kubeconfig])).stdout);
    clock += 3_600_000;
    try {
      const { code, stdout } = await runList();
      expect(code).toBe(0);
      const rows = stdout.trimEnd().split('\n');
      expect(rows[0]).toMatch(/^ID\s+TTL\s+EXPIRES\s+DESCRIPTION$/);
      const row = (id: string) => rows.find((r) => r.startsWith(id))!.split(/\s{3,}/);
      expect(row(short.id!)).toEqual([short.id, 'expired', '2026-11-28T10:00:10Z', 'short']);
      expect(row(day.id!)).toEqual([day.id, '23h', '2026-11-29T10:00:00Z', '<none>']);
      expect(row(never.id!)).toEqual([never.id, '<forever>', '<never>', 'forever']);
      for (const t of [short, day, never]) expect(stdout).not.toContain(t.secret);

      const asJson = await token(['list', '-o', 'json', '--kubeconfig', srv.kubeconfig]);
      const parsed = JSON.parse(asJson.stdout) as { tokens: Array<{ id: string; expired: boolean }> };
      expect(parsed.tokens.map((t) => [t.id, t.expired]).sort()).toEqual([[short.id, true], [day.id, false], [never.id, false]].sort());
      expect(asJson.stdout).not.toMatch(/sha256|secret/);
    } finally {
      clock -= 3_600_000;
    }
    async function runList() {
      const io: CommandIo & { stdout: string } = { stdout: '', env: {}, out: (t) => void (io.stdout += t), err: () => {} };
      const code = await runTokenCommand(['list', '--kubeconfig', srv.kubeconfig], io, () => clock);
      return { code, stdout: io.stdout };
    }
  });

  it('says so on stderr when there are no tokens', async () => {
    expect(await token(['list', '--kubeconfig', srv.kubeconfig])).toEqual({ code: 0, stdout: '', stderr: 'No join tokens found.\n' });
  });

  it('revoke ID (or the whole token) deletes it; an unknown id exits 1 with the server message', async () => {
    const t = (await token(['create', '--kubeconfig', srv.kubeconfig])).stdout.trim();
    const { id } = parseJoinToken(t);
    expect(await token(['revoke', id!, '--kubeconfig', srv.kubeconfig])).toEqual({ code: 0, stdout: `join token "${id}" revoked\n`, stderr: '' });
    expect(await tokens.check(parseJoinToken(t))).toMatchObject({ ok: false, reason: 'unknown' });
    expect(await token(['revoke', id!, '--kubeconfig', srv.kubeconfig])).toEqual({ code: 1, stdout: '', stderr: `clusterd token: join token "${id}" not found\n` });
    const whole = (await token(['create', '--kubeconfig', srv.kubeconfig])).stdout.trim();
    expect((await token(['revoke', whole, '--kubeconfig', srv.kubeconfig])).code).toBe(0);
    expect((await store.range(JOIN_TOKEN_PREFIX)).kvs).toEqual([]);
  });

  it('prints the message of a refusal (403 for a user who may not) and exits 1', async () => {
    srv.respond = (_req, res) => json(res, 403, statusBody(403, 'Forbidden', 'forbidden: User "bob" cannot post path "/cluster/v1/tokens"'));
    expect(await token(['create', '--kubeconfig', srv.kubeconfig])).toEqual({ code: 1, stdout: '', stderr: 'clusterd token: forbidden: User "bob" cannot post path "/cluster/v1/tokens"\n' });
    srv.respond = (_req, res) => json(res, 404, statusBody(404, 'NotFound', 'the server could not find the requested resource'));
    expect((await token(['list', '--kubeconfig', srv.kubeconfig])).stderr).toMatch(/has no join-token API \(\/cluster\/v1\/tokens not found\): is it a clustered clusterd\?/);
  });

  it.each([
    [[], {}, 'clusterd token needs a command: create, list or revoke (see clusterd token --help)'],
    [['make'], {}, 'unknown command "make": create, list or revoke (see clusterd token --help)'],
    [['create'], {}, '--kubeconfig is required (or set KUBECONFIG) (see clusterd token --help)'],
    [['list'], { KUBECONFIG: `a${delimiter}b` }, 'KUBECONFIG lists several files; name one with --kubeconfig'],
    [['create', '--ttl', '1d', '--kubeconfig', 'k'], {}, '--ttl: invalid duration "1d" (examples: 500ms, 10s, 5m, 1h30m)'],
    [['create', '--ttl', '1500ms', '--kubeconfig', 'k'], {}, '--ttl must be whole seconds, got 1500ms'],
    [['create', 'x', '--kubeconfig', 'k'], {}, 'unexpected argument "x": create takes no arguments'],
    [['create', '-o', 'json', '--kubeconfig', 'k'], {}, '--output does not apply to create (see clusterd token --help)'],
    [['list', '--ttl=1h', '--kubeconfig', 'k'], {}, '--ttl does not apply to list (see clusterd token --help)'],
    [['list', '-o', 'wide', '--kubeconfig', 'k'], {}, 'invalid value "wide" for --output: must be json'],
    [['revoke', '--kubeconfig', 'k'], {}, 'clusterd token revoke needs the ID of the token to revoke'],
    [['revoke', 'abc123', 'def456', '--kubeconfig', 'k'], {}, 'unexpected argument "def456": revoke takes one ID'],
    [['revoke', 'ABC', '--kubeconfig', 'k'], {}, 'invalid token "ABC": give its ID (6 characters of a-z and 0-9, as list shows it) or the whole token'],
    [['revoke', 'K10abcdef0123456789', '--kubeconfig', 'k'], {}, 'invalid token "K10abc…": give its ID (6 characters of a-z and 0-9, as list shows it) or the whole token'],
    [['revoke', 'abc123', '--description=x', '--kubeconfig', 'k'], {}, '--description does not apply to revoke (see clusterd token --help)'],
  ])('exits 2 on %j (env %j) without calling the server', async (argv, env, message) => {
    expect(await token(argv, env)).toEqual({ code: 2, stdout: '', stderr: `clusterd token: ${message}\n` });
    expect(srv.requests).toEqual([]);
  });
});

describe('tokensTable', () => {
  it('reads <forever>/<never> for a token without expiry and <none> for no description', () => {
    const now = Date.parse('2026-11-28T10:00:00Z');
    expect(tokensTable([{ id: 'abc123', created: '', expires: null, expired: false, description: '' }, { id: 'def456', created: '', expires: '2026-11-28T10:05:00Z', expired: false, description: 'x y' }], now)).toBe(
      ['ID       TTL         EXPIRES                DESCRIPTION', 'abc123   <forever>   <never>                <none>', 'def456   5m          2026-11-28T10:05:00Z   x y', ''].join('\n'),
    );
  });
});
