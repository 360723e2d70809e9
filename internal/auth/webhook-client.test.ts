// The outbound webhook client against a real HTTPS server: calls reuse kept-alive connections
// (no handshake per call), and targets trusting different CAs never share a connection.

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
    // 40 calls, at most 8 at once: at most 8 handshakes.
    expect(server.connections - before).toBeLessThanOrEqual(8);
    expect(server.connections - before).toBeGreaterThan(0);
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
