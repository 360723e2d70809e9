// internal/testserver/webhook-token-server owns a real token review service for tests: HTTPS
// under its own CA, requiring the API server's client certificate when asked to, answering
// TokenReview requests from a table of tokens (audience aware for the users given audiences of
// their own, as upstream's contract for such a service says), and writing the kubeconfig-format file the API
// server's --authentication-token-webhook-config-file reads. Test-only.
// Imports: pki/certificates.

import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createCertificateAuthority, issueCertificate } from '../pki/certificates.js';

export interface ReviewedUser {
  username: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
  /**
   * The audiences the token is valid for. Given: the service answers the ones the review asks
   * for in status.audiences, and not authenticated when there are none. Absent: audience
   * agnostic (no status.audiences; the API server applies its own).
   */
  audiences?: string[];
}

export interface WebhookTokenServer {
  readonly url: string;
  /** TokenReview bodies received (tests check the version and that they were sent at all). */
  readonly received: Array<{ apiVersion: string; token: string; audiences: string[] | undefined; clientCn: string | undefined }>;
  /** Writes the kubeconfig for the API server into `dir` and returns its path. */
  writeKubeconfig(dir: string): string;
  close(): Promise<void>;
}

/** `users`: token → user; any other token is answered `authenticated: false`. */
export async function startWebhookTokenServer(users: Record<string, ReviewedUser>): Promise<WebhookTokenServer> {
  const ca = await createCertificateAuthority('test-webhook-ca');
  const serving = await issueCertificate(ca, { commonName: '127.0.0.1', ipAddresses: ['127.0.0.1'], usage: 'server' });
  const client = await issueCertificate(ca, { commonName: 'apiserver-webhook-client', usage: 'client' });
  const received: WebhookTokenServer['received'] = [];
  const server: Server = createServer({ cert: serving.certPem, key: serving.keyPem, ca: ca.certPem, requestCert: true, rejectUnauthorized: true }, (req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (d: string) => (body += d));
    req.on('end', () => {
      const review = JSON.parse(body) as { apiVersion: string; spec: { token: string; audiences?: string[] } };
      const peer = (req.socket as import('node:tls').TLSSocket).getPeerCertificate();
      received.push({ apiVersion: review.apiVersion, token: review.spec.token, audiences: review.spec.audiences, clientCn: typeof peer?.subject?.CN === 'string' ? peer.subject.CN : undefined });
      const entry = users[review.spec.token];
      let status: Record<string, unknown>;
      if (!entry) status = { authenticated: false, error: 'unknown token' };
      else {
        const { audiences, ...user } = entry;
        const common = audiences ? (review.spec.audiences ?? []).filter((a) => audiences.includes(a)) : undefined;
        if (common && common.length === 0) status = { authenticated: false, error: 'token not valid for the audiences asked for' };
        else status = { authenticated: true, user, ...(common ? { audiences: common } : {}) };
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ apiVersion: review.apiVersion, kind: 'TokenReview', status }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/authenticate`;
  return {
    url,
    received,
    writeKubeconfig(dir) {
      const b64 = (s: string) => Buffer.from(s).toString('base64');
      const path = join(dir, 'token-webhook.kubeconfig');
      writeFileSync(
        path,
        [
          'apiVersion: v1',
          'kind: Config',
          'clusters:',
          '- name: reviewer',
          '  cluster:',
          `    server: ${url}`,
          `    certificate-authority-data: ${b64(ca.certPem)}`,
          'users:',
          '- name: apiserver',
          '  user:',
          `    client-certificate-data: ${b64(client.certPem)}`,
          `    client-key-data: ${b64(client.keyPem)}`,
          'contexts:',
          '- name: webhook',
          '  context: { cluster: reviewer, user: apiserver }',
          'current-context: webhook',
          '',
        ].join('\n'),
      );
      return path;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
