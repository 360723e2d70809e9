// The outbound webhook client against a real HTTPS server: calls reuse kept-alive connections
// (no handshake per call), and targets trusting different CAs never share a connection.

import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeconfigCredentials } from '../cluster-cli/kubeconfig.js';
import { startHttpsWebhookServer, type HttpsWebhookServer } from '../testserver/https-webhook-server.js';
import { postJson, WebhookCallError } from './webhook-client.js';

describe('postJson', () => {
  let server: HttpsWebhookServer;
  let other: HttpsWebhookServer;
  beforeAll(async () => {
    server = await startHttpsWebhookServer({ handler: (r) => ({ echo: JSON.parse(r.body) as unknown }) });
    // Another server only for its CA, which does not sign `server`'s certificate.
    other = await startHttpsWebhookServer({ handler: () => ({}) });
  });
  afterAll(async () => {
    await server.close();
    await other.close();
  });
  const target = (caPem: string): KubeconfigCredentials => ({ path: '', context: '', server: `${server.url}/hook`, caPem, insecureSkipTlsVerify: false, certPem: undefined, keyPem: undefined, token: undefined, tlsServerName: undefined });
  const options = { timeoutMs: 10_000, service: 'the test webhook' };

  it('reuses kept-alive connections across calls', async () => {
    const before = server.connections;
    for (let round = 0; round < 5; round++) {
      const replies = await Promise.all(Array.from({ length: 8 }, (_, i) => postJson(target(server.caPem), JSON.stringify({ round, i }), options)));
      expect(replies).toEqual(Array.from({ length: 8 }, (_, i) => ({ echo: { round, i } })));
    }
    // 40 calls, at most 8 at once. undici sees a connection free again only once it has said so
    // (a turn after its reply), so a round that starts at once may open a few more; still far
    // fewer handshakes than calls.
    expect(server.connections - before).toBeLessThanOrEqual(16);
    expect(server.connections - before).toBeGreaterThan(0);
  });

  it.each([
    {
      name: 'a reply over the size cap',
      reply: (res: ServerResponse) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(`"${'x'.repeat((1 << 20) + 10)}"`);
      },
      expected: { kind: 'error', retryable: false, message: /sent a reply larger than 1048576 bytes/ },
    },
    { name: 'no answer within the timeout', reply: () => undefined, expected: { kind: 'timeout', retryable: false, message: /did not answer within 300ms/ } },
    { name: 'a connection closed under the call', reply: (res: ServerResponse) => res.socket?.destroy(), expected: { kind: 'error', retryable: true, message: /^calling the test webhook: (EOF|.*ECONNRESET)/ } },
    {
      name: 'an answer asking to retry later',
      reply: (res: ServerResponse) => {
        res.writeHead(503, { 'retry-after': '1' });
        res.end('busy');
      },
      expected: { kind: 'error', retryable: true, status: 503, message: /answered HTTP 503/ },
    },
    {
      name: 'an answer that is not JSON',
      reply: (res: ServerResponse) => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end('ok');
      },
      expected: { kind: 'error', retryable: false, status: 200, message: /did not answer JSON/ },
    },
  ])('classifies $name', async ({ reply, expected }) => {
    server.handle((_r, res) => new Promise<unknown>(() => reply(res)));
    try {
      const err = await postJson(target(server.caPem), '{}', { timeoutMs: 300, service: 'the test webhook' }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(WebhookCallError);
      const e = err as WebhookCallError;
      expect(e.message).toMatch(expected.message);
      expect({ kind: e.kind, retryable: e.retryable, status: e.status }).toEqual({ kind: expected.kind, retryable: expected.retryable, status: expected.status });
    } finally {
      server.handle((r) => ({ echo: JSON.parse(r.body) as unknown }));
    }
    // The next call still gets its answer (on a kept-alive or a new connection).
    expect(await postJson(target(server.caPem), '{"after":1}', options)).toEqual({ echo: { after: 1 } });
  });

  it('sends the bearer token and the JSON headers', async () => {
    await postJson({ ...target(server.caPem), token: 'secret-token' }, '{"t":1}', options);
    const last = server.received[server.received.length - 1]!;
    expect(last.headers.authorization).toBe('Bearer secret-token');
    expect(last.headers['content-type']).toBe('application/json');
    expect(last.headers.accept).toBe('application/json');
    expect(last.method).toBe('POST');
    expect(last.path).toBe('/hook');
    expect(last.body).toBe('{"t":1}');
  });

  it('never lets a target that trusts another CA use a verified connection', async () => {
    await postJson(target(server.caPem), '{}', options);
    const err = await postJson(target(other.caPem), '{}', options).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WebhookCallError);
    expect((err as Error).message).toMatch(/certificate/);
    // And the trusted target still works on its own connections.
    expect(await postJson(target(server.caPem), '{"a":1}', options)).toEqual({ echo: { a: 1 } });
  });
});
