// internal/testserver/https-webhook-server owns a real HTTPS server for tests of the webhooks the
// API server calls (admission, conversion, extension API servers): its own CA, a serving
// certificate for 127.0.0.1 and the given DNS names (a service's `<name>.<namespace>.svc`), the
// CA as the base64 `caBundle` a client config carries, and a handler per request. Test-only.
// Imports: pki/certificates.

import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { createCertificateAuthority, issueCertificate } from '../pki/certificates.js';

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
  /** The common name of the client certificate, when one was presented. */
  clientCn: string | undefined;
}

/** Answers a request: a JSON value (status 200), or a full reply. */
export type WebhookHandler = (req: ReceivedRequest, res: ServerResponse) => unknown | Promise<unknown>;

export interface HttpsWebhookServer {
  readonly url: string;
  readonly port: number;
  /** base64 PEM of the server's CA, as `clientConfig.caBundle` carries it. */
  readonly caBundle: string;
  readonly caPem: string;
  readonly received: ReceivedRequest[];
  /** TLS connections accepted so far (keep-alive tests count them). */
  readonly connections: number;
  /** Replaces the handler (tests switch behaviour between cases). */
  handle(handler: WebhookHandler): void;
  close(): Promise<void>;
}

export async function startHttpsWebhookServer(options: {
  dnsNames?: string[];
  handler: WebhookHandler;
  requestCert?: boolean;
  /** HTTP/1.1 upgrade requests (recorded like the others); without it they are refused. */
  upgrade?: (req: ReceivedRequest, socket: Duplex, head: Buffer) => void;
}): Promise<HttpsWebhookServer> {
  const ca = await createCertificateAuthority('test-webhook-server-ca');
  const serving = await issueCertificate(ca, { commonName: 'webhook', dnsNames: options.dnsNames ?? [], ipAddresses: ['127.0.0.1'], usage: 'server' });
  let handler = options.handler;
  const received: ReceivedRequest[] = [];
  const server: Server = createServer({ cert: serving.certPem, key: serving.keyPem, requestCert: options.requestCert ?? false, rejectUnauthorized: false }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const peer = (req.socket as import('node:tls').TLSSocket).getPeerCertificate?.();
      const r: ReceivedRequest = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        clientCn: peer && typeof peer.subject?.CN === 'string' ? peer.subject.CN : undefined,
      };
      received.push(r);
      Promise.resolve()
        .then(() => handler(r, res))
        .then((reply) => {
          if (res.headersSent || res.writableEnded) return;
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify(reply));
        })
        .catch((e: unknown) => {
          if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
          res.end(String(e));
        });
    });
  });
  let connections = 0;
  server.on('secureConnection', () => connections++);
  const upgrade = options.upgrade;
  if (upgrade) {
    server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      const peer = (req.socket as import('node:tls').TLSSocket).getPeerCertificate?.();
      const r: ReceivedRequest = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body: '', clientCn: peer && typeof peer.subject?.CN === 'string' ? peer.subject.CN : undefined };
      received.push(r);
      upgrade(r, socket, head);
    });
  }
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `https://127.0.0.1:${port}`,
    port,
    caBundle: Buffer.from(ca.certPem).toString('base64'),
    caPem: ca.certPem,
    received,
    get connections() {
      return connections;
    },
    handle(h) {
      handler = h;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
