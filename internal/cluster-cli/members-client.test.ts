import { describe, it, expect, beforeAll, afterAll, beforeEach } from 'vitest';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { readKubeconfig } from './kubeconfig.js';
import { listMembers, MembersApiError, removeMember } from './members-client.js';
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

const creds = () => readKubeconfig(srv.kubeconfig);

/** The MembersApiError a call fails with. */
async function failure(p: Promise<unknown>): Promise<MembersApiError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(MembersApiError);
    return e as MembersApiError;
  }
  throw new Error('expected the call to fail');
}

describe('listMembers', () => {
  it('GETs /cluster/v1/members with the kubeconfig client certificate and returns the list as received', async () => {
    srv.respond = (_req, res) => json(res, 200, { kind: 'MemberList', members: [{ ...SAMPLE_MEMBERS[0], extra: { x: 1 } }] });
    const list = await listMembers(creds());
    expect(list).toEqual({ kind: 'MemberList', members: [{ ...SAMPLE_MEMBERS[0], extra: { x: 1 } }] });
    expect(srv.requests).toHaveLength(1);
    expect(srv.requests[0]).toMatchObject({ method: 'GET', url: '/cluster/v1/members', clientCn: 'admin' });
    expect(srv.requests[0]!.headers['accept']).toBe('application/json');
  });

  it('puts the API path below a server URL with a path', async () => {
    srv.respond = (req, res) => (req.url === '/prefix/cluster/v1/members' ? json(res, 200, { kind: 'MemberList', members: [] }) : json(res, 404, {}));
    const list = await listMembers(readKubeconfig(srv.writeKubeconfig('prefix.kubeconfig', { server: `${srv.url}/prefix/` })));
    expect(list.members).toEqual([]);
  });

  it('fails with the message of a Status the server answers', async () => {
    srv.respond = (_req, res) => json(res, 503, statusBody(503, 'ServiceUnavailable', 'no leader: the cluster has lost quorum'));
    const e = await failure(listMembers(creds()));
    expect(e.message).toBe('no leader: the cluster has lost quorum');
    expect(e.code).toBe(503);
  });

  it('says when the server has no membership API, and when an answer is not a MemberList', async () => {
    const noApi = `${srv.url} has no membership API (/cluster/v1/members not found): is it a clustered clusterd?`;
    srv.respond = (_req, res) => res.writeHead(404).end('404 page not found');
    expect((await failure(listMembers(creds()))).message).toBe(noApi);
    // What a single-replica clusterd answers.
    srv.respond = (_req, res) => json(res, 404, statusBody(404, 'NotFound', 'the server could not find the requested resource'));
    expect((await failure(listMembers(creds()))).message).toBe(noApi);
    srv.respond = (_req, res) => res.writeHead(500).end('boom\n');
    expect((await failure(listMembers(creds()))).message).toBe(`${srv.url} answered 500: boom`);
    srv.respond = (_req, res) => json(res, 200, { kind: 'MemberList', members: 'a,b' });
    expect((await failure(listMembers(creds()))).message).toBe(`unexpected answer from ${srv.url}/cluster/v1/members: not a MemberList`);
  });

  it('refuses a server its CA did not sign, or that is not named in its certificate', async () => {
    const other = await startTestMembersServer();
    try {
      const wrongCa = readKubeconfig(srv.writeKubeconfig('wrong-ca.kubeconfig', { caPem: readFileSync(other.pki.caCert, 'utf8') }));
      expect((await failure(listMembers(wrongCa))).message).toMatch(
        /^cannot reach https:\/\/127\.0\.0\.1:\d+: .* \(the server's certificate is not signed by the kubeconfig's certificate-authority\)$/,
      );
    } finally {
      await other.close();
    }
    const named = { ...creds(), tlsServerName: 'kubernetes.default.svc' };
    expect((await listMembers(named)).members).toHaveLength(3);
    const misnamed = { ...creds(), tlsServerName: 'elsewhere.example.com' };
    expect((await failure(listMembers(misnamed))).message).toMatch(/Hostname\/IP does not match certificate's altnames/);
    expect((await listMembers({ ...creds(), caPem: undefined, insecureSkipTlsVerify: true })).members).toHaveLength(3);
  });

  it('is refused without a client certificate the cluster CA signed', async () => {
    const other = await startTestMembersServer();
    try {
      const foreign = readKubeconfig(
        srv.writeKubeconfig('foreign.kubeconfig', { certPem: readFileSync(other.pki.adminCert, 'utf8'), keyPem: readFileSync(other.pki.adminKey, 'utf8') }),
      );
      expect((await failure(listMembers(foreign))).message).toMatch(
        /^cannot reach https:\/\/127\.0\.0\.1:\d+: .* \(the server closed the connection before answering: is the client certificate from this cluster's CA\?\)$/,
      );
    } finally {
      await other.close();
    }
    expect((await failure(listMembers({ ...creds(), certPem: undefined, keyPem: undefined }))).message).toMatch(
      /^cannot reach https:\/\/127\.0\.0\.1:\d+: tlsv13 alert certificate required \(the server requires a client certificate and the kubeconfig user has none\)$/,
    );
    expect(srv.requests).toEqual([]);
  });

  it('gives up on a server that does not answer, and says when nothing listens', async () => {
    // The deadline fires once the server holds the request: no real waiting.
    let fire: (() => void) | undefined;
    srv.respond = () => fire!();
    const timers = { setTimeout: (fn: () => void) => (fire = fn), clearTimeout: () => undefined };
    const e = await failure(listMembers(creds(), { timeoutMs: 2500, timers }));
    expect(e.message).toMatch(/^cannot reach https:\/\/127\.0\.0\.1:\d+: no answer within 2.5 s$/);
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as { port: number }).port;
    await new Promise<void>((r) => closed.close(() => r()));
    expect((await failure(listMembers({ ...creds(), server: `https://127.0.0.1:${port}` }))).message).toBe(
      `cannot reach https://127.0.0.1:${port}: connect ECONNREFUSED 127.0.0.1:${port}`,
    );
  });
});

describe('removeMember', () => {
  it('DELETEs /cluster/v1/members/<name> and returns the server message', async () => {
    expect(await removeMember(creds(), 'b')).toBe('member "b" removed');
    expect(srv.requests[0]).toMatchObject({ method: 'DELETE', url: '/cluster/v1/members/b', clientCn: 'admin' });
    srv.respond = (_req, res) => res.writeHead(204).end();
    expect(await removeMember(creds(), 'b')).toBeUndefined();
  });

  it('fails with the Status message of a refusal', async () => {
    const e = await failure(removeMember(creds(), 'zz'));
    expect(e.message).toBe('member "zz" not found');
    expect(e.code).toBe(404);
  });
});
