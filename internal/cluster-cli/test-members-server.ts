// internal/cluster-cli/test-members-server is test support: a real HTTPS server (node:https)
// standing in for a replica's /cluster/v1 API (members, join tokens), with a cluster PKI directory from the generator
// and an admin kubeconfig for it. It verifies client certificates as the API server does
// (chained to ca.crt) and records each request (with its body). Tests set `respond` to choose the answer.
// Imports: pki (generator and kubeconfig text).

import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { clusterPkiPaths, generateClusterPki, type ClusterPkiPaths } from '../pki/cluster-pki.js';
import { kubeconfigText } from '../pki/pki.js';

export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  /** Subject CN of the client certificate, '' without one. */
  clientCn: string;
  /** The request body as text. */
  body: string;
}

export type Responder = (req: RecordedRequest, res: ServerResponse) => void;

export interface TestMembersServer {
  dir: string;
  pki: ClusterPkiPaths;
  url: string;
  /** An admin kubeconfig for `url` (context admin@clusterd). */
  kubeconfig: string;
  requests: RecordedRequest[];
  respond: Responder;
  /** Writes another kubeconfig in dir: `server` and credentials overridable. */
  writeKubeconfig(name: string, o?: { server?: string; caPem?: string; certPem?: string; keyPem?: string }): string;
  close(): Promise<void>;
}

export const SAMPLE_MEMBERS = [
  { name: 'a', id: 123, role: 'leader', peerAddress: '127.0.0.1:2380', apiAddress: 'https://127.0.0.1:6443', term: 3, applied: 120, lag: 0, configHash: 'sha256:abc', reachable: true },
  { name: 'b', id: 45678, role: 'follower', peerAddress: '127.0.0.1:2381', apiAddress: 'https://127.0.0.1:6444', term: 3, applied: 118, lag: 2, configHash: 'sha256:abc', reachable: true },
  { name: 'c', id: 9, role: 'learner', peerAddress: 'c.example.com:2380', apiAddress: 'https://c.example.com:6443', term: 3, applied: 40, lag: 80, configHash: 'sha256:abc', reachable: false },
];

export const json = (res: ServerResponse, status: number, body: unknown): void => {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
};

export const statusBody = (code: number, reason: string, message: string) => ({
  kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code,
});

/** The default answers: the sample list, and DELETE of a listed member. */
export const defaultResponder: Responder = (req, res) => {
  if (req.method === 'GET' && req.url === '/cluster/v1/members') return json(res, 200, { kind: 'MemberList', members: SAMPLE_MEMBERS });
  const m = /^\/cluster\/v1\/members\/([^/]+)$/.exec(req.url);
  if (req.method === 'DELETE' && m) {
    if (SAMPLE_MEMBERS.some((x) => x.name === m[1])) return json(res, 200, { kind: 'Status', apiVersion: 'v1', status: 'Success', message: `member "${m[1]}" removed` });
    return json(res, 404, statusBody(404, 'NotFound', `member "${decodeURIComponent(m[1]!)}" not found`));
  }
  json(res, 404, statusBody(404, 'NotFound', 'the server could not find the requested resource'));
};

export async function startTestMembersServer(): Promise<TestMembersServer> {
  const dir = mkdtempSync(join(tmpdir(), 'clusterd-members-'));
  const { replicas } = await generateClusterPki(join(dir, 'pki'), [{ name: 'a', hosts: ['127.0.0.1'] }]);
  const pki = replicas[0]!;
  const read = (p: string) => readFileSync(p, 'utf8');
  const requests: RecordedRequest[] = [];
  const state: { respond: Responder } = { respond: defaultResponder };
  const server: Server = createServer(
    { cert: read(pki.serverCert), key: read(pki.serverKey), ca: read(pki.caCert), requestCert: true, rejectUnauthorized: true },
    (req, res) => {
      const peer = (req.socket as TLSSocket).getPeerCertificate();
      const recorded = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, clientCn: [peer?.subject?.CN ?? ''].flat().join(','), body: '' };
      requests.push(recorded);
      req.setEncoding('utf8');
      req.on('data', (d: string) => (recorded.body += d));
      req.on('end', () => state.respond(recorded, res));
    },
  );
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const writeKubeconfig: TestMembersServer['writeKubeconfig'] = (name, o = {}) => {
    const path = join(dir, name);
    writeFileSync(
      path,
      kubeconfigText({
        server: o.server ?? url,
        caPem: o.caPem ?? read(pki.caCert),
        certPem: o.certPem ?? read(pki.adminCert),
        keyPem: o.keyPem ?? read(pki.adminKey),
      }),
    );
    return path;
  };
  return {
    dir,
    pki: clusterPkiPaths(join(dir, 'pki'), 'a'),
    url,
    kubeconfig: writeKubeconfig('admin.kubeconfig'),
    requests,
    get respond() {
      return state.respond;
    },
    set respond(r: Responder) {
      state.respond = r;
    },
    writeKubeconfig,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
