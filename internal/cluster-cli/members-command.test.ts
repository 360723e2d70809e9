import { describe, it, expect, beforeAll, afterAll, beforeEach } from 'vitest';
import { delimiter } from 'node:path';
import { runCaptured } from './run-captured.js';
import { formatTable, membersHelp } from './members-command.js';
import { defaultResponder, json, SAMPLE_MEMBERS, startTestMembersServer, statusBody, type TestMembersServer } from './test-members-server.js';

let srv: TestMembersServer;
beforeAll(async () => {
  srv = await startTestMembersServer();
});
afterAll(() => srv.close());
beforeEach(() => {
  srv.respond = defaultResponder;
  srv.requests.length = 0;
});

const members = (argv: string[], env: NodeJS.ProcessEnv = {}) => runCaptured(['members', ...argv], env);

describe('clusterd members', () => {
  it('--help explains every flag and both forms', async () => {
    const { code, stdout } = await members(['--help']);
    expect(code).toBe(0);
    expect(stdout).toBe(membersHelp());
    for (const text of ['--kubeconfig=FILE', '--context=NAME', '-o, --output=json|wide', '-h, --help', 'members remove NAME', 'Exit status']) expect(stdout).toContain(text);
    expect((await members(['remove', '--help'])).stdout).toBe(membersHelp());
  });

  it('--help says what CONFIG HASH is: the access-control files the replica loaded (the config-hash readyz check), not the membership', async () => {
    const { stdout } = await members(['--help']);
    const wide = stdout.slice(stdout.indexOf('wide:'), stdout.indexOf('-h, --help')).replace(/\s+/g, ' ');
    expect(wide).toContain('authentication and authorization configuration');
    expect(wide).toContain('config-hash');
    expect(wide).not.toContain('membership');
  });

  it('prints the members as a table', async () => {
    const { code, stdout, stderr } = await members(['--kubeconfig', srv.kubeconfig]);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toBe(
      [
        'NAME   ROLE       PEER ADDRESS         API ADDRESS                  TERM   APPLIED   LAG   REACHABLE',
        'a      leader     127.0.0.1:2380       https://127.0.0.1:6443       3      120       0     yes',
        'b      follower   127.0.0.1:2381       https://127.0.0.1:6444       3      118       2     yes',
        'c      learner    c.example.com:2380   https://c.example.com:6443   3      40        80    no',
        '',
      ].join('\n'),
    );
    expect(srv.requests).toMatchObject([{ method: 'GET', url: '/cluster/v1/members', clientCn: 'admin' }]);
  });

  it('-o wide adds the member id and configuration hash; missing fields print as <none>', async () => {
    srv.respond = (_req, res) => json(res, 200, { kind: 'MemberList', members: [SAMPLE_MEMBERS[0], { name: 'd', role: 'learner', id: 77 }] });
    const { code, stdout } = await members(['-o', 'wide', `--kubeconfig=${srv.kubeconfig}`]);
    expect(code).toBe(0);
    expect(stdout).toBe(
      [
        'NAME   ROLE      PEER ADDRESS     API ADDRESS              TERM     APPLIED   LAG      REACHABLE   ID    CONFIG HASH',
        'a      leader    127.0.0.1:2380   https://127.0.0.1:6443   3        120       0        yes         123   sha256:abc',
        'd      learner   <none>           <none>                   <none>   <none>    <none>   <none>      77    <none>',
        '',
      ].join('\n'),
    );
  });

  it('-o json prints {"members": [...]} as received', async () => {
    const odd = { ...SAMPLE_MEMBERS[1], future: { field: [1, 2] } };
    srv.respond = (_req, res) => json(res, 200, { kind: 'MemberList', apiVersion: 'cluster/v1', members: [odd] });
    const { code, stdout } = await members(['-ojson'], { KUBECONFIG: srv.kubeconfig });
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toEqual({ members: [odd] });
    expect(stdout).toBe(JSON.stringify({ members: [odd] }, null, 4) + '\n');
  });

  it('says so on stderr when there are no members', async () => {
    srv.respond = (_req, res) => json(res, 200, { kind: 'MemberList', members: [] });
    expect(await members(['--kubeconfig', srv.kubeconfig])).toEqual({ code: 0, stdout: '', stderr: 'No members found.\n' });
  });

  it('remove NAME deletes the member and prints the server message', async () => {
    const { code, stdout } = await members(['remove', 'b', '--kubeconfig', srv.kubeconfig]);
    expect(code).toBe(0);
    expect(stdout).toBe('member "b" removed\n');
    expect(srv.requests).toMatchObject([{ method: 'DELETE', url: '/cluster/v1/members/b', clientCn: 'admin' }]);
  });

  it('prints the message of a Status refusal and exits 1', async () => {
    expect(await members(['remove', 'zz', '--kubeconfig', srv.kubeconfig])).toEqual({ code: 1, stdout: '', stderr: 'clusterd members: member "zz" not found\n' });
    srv.respond = (_req, res) => json(res, 403, statusBody(403, 'Forbidden', 'members is forbidden: User "bob" cannot list members'));
    expect(await members(['--kubeconfig', srv.kubeconfig])).toEqual({
      code: 1, stdout: '', stderr: 'clusterd members: members is forbidden: User "bob" cannot list members\n',
    });
  });

  it('exits 1 when the kubeconfig cannot be used or the server not reached', async () => {
    const missing = await members(['--kubeconfig', '/nonexistent/config']);
    expect(missing).toEqual({ code: 1, stdout: '', stderr: 'clusterd members: cannot read kubeconfig /nonexistent/config: no such file\n' });
    const down = srv.writeKubeconfig('down.kubeconfig', { server: 'https://127.0.0.1:1' });
    const unreachable = await members(['--kubeconfig', down]);
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toMatch(/^clusterd members: cannot reach https:\/\/127\.0\.0\.1:1: connect ECONNREFUSED/);
    expect((await members(['--kubeconfig', srv.kubeconfig, '--context', 'nope'])).stderr).toMatch(/context "nope" not found in contexts/);
  });

  it.each([
    [[], {}, '--kubeconfig is required (or set KUBECONFIG) (see clusterd members --help)'],
    [[], { KUBECONFIG: `a${delimiter}b` }, 'KUBECONFIG lists several files; name one with --kubeconfig'],
    [['-o', 'yaml', '--kubeconfig', 'k'], {}, 'invalid value "yaml" for --output: must be one of json, wide'],
    [['list', '--kubeconfig', 'k'], {}, 'unknown command "list": use "clusterd members" to list or "clusterd members remove NAME" (see clusterd members --help)'],
    [['remove', '--kubeconfig', 'k'], {}, 'clusterd members remove needs the NAME of the replica to remove'],
    [['remove', 'a', 'b', '--kubeconfig', 'k'], {}, 'unexpected argument "b": remove takes one NAME'],
    [['remove', 'A_1', '--kubeconfig', 'k'], {}, 'invalid replica name "A_1": lower-case letters, digits and \'-\', starting and ending with a letter or digit'],
    [['remove', 'a', '-o', 'json', '--kubeconfig', 'k'], {}, '--output applies to listing, not to remove'],
    [['--kubeconfig'], {}, 'flag needs an argument: --kubeconfig'],
    [['--server', 'x'], {}, 'unknown flag: --server (see clusterd members --help)'],
  ])('exits 2 on %j (env %j) without calling the server', async (argv, env, message) => {
    expect(await members(argv, env)).toEqual({ code: 2, stdout: '', stderr: `clusterd members: ${message}\n` });
    expect(srv.requests).toEqual([]);
  });
});

describe('formatTable', () => {
  it('pads every column but the last, three spaces apart, as kubectl does', () => {
    expect(formatTable(['A', 'LONG HEADER', 'Z'], [['xxxx', 'y', ''], ['', '', 'last']])).toBe('A      LONG HEADER   Z\nxxxx   y\n                     last\n');
  });
});
