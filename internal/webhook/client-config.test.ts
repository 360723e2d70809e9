// Tests for client-config: service references resolved through Services and Endpoints, the
// certificate checked for the service's DNS name, URLs with and without a caBundle.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpsWebhookServer, type HttpsWebhookServer } from '../testserver/https-webhook-server.js';
import { callWebhook, EndpointServiceResolver, type ObjectReader } from './client-config.js';
import { WebhookCallError } from '../auth/webhook-client.js';

type Obj = Record<string, unknown>;

function objects(map: Record<string, Obj>): ObjectReader {
  return async (resource, ns, name) => map[`${resource}/${ns}/${name}`];
}

describe('webhook client config', () => {
  let server: HttpsWebhookServer;
  beforeAll(async () => {
    server = await startHttpsWebhookServer({ dnsNames: ['hook.team.svc'], handler: (r) => ({ echoed: JSON.parse(r.body), path: r.path }) });
  });
  afterAll(() => server.close());

  const service = (ports: Obj[]): Obj => ({ metadata: { name: 'hook', namespace: 'team' }, spec: { ports } });
  const endpoints = (port: number, name?: string): Obj => ({
    subsets: [{ addresses: [{ ip: '127.0.0.1' }], ports: [{ ...(name ? { name } : {}), port }] }],
  });

  it('calls a service reference through its endpoints and checks the service DNS name', async () => {
    const resolver = new EndpointServiceResolver(objects({ 'services/team/hook': service([{ name: 'https', port: 8443 }]), 'endpoints/team/hook': endpoints(server.port, 'https') }));
    const reply = await callWebhook({ service: { namespace: 'team', name: 'hook', path: 'convert', port: 8443 }, caBundle: server.caBundle }, '{"a":1}', resolver, { timeoutMs: 5000, service: 'the webhook' });
    expect(reply).toEqual({ echoed: { a: 1 }, path: '/convert' });
  });

  it('refuses a certificate that does not name the service', async () => {
    const resolver = new EndpointServiceResolver(objects({ 'services/other/hook': service([{ port: 443 }]), 'endpoints/other/hook': endpoints(server.port) }));
    await expect(callWebhook({ service: { namespace: 'other', name: 'hook' }, caBundle: server.caBundle }, '{}', resolver, { timeoutMs: 5000, service: 'the webhook' })).rejects.toThrow(/hook\.other\.svc|altnames/);
  });

  it('a URL with the CA bundle works; without it the system roots refuse the test CA', async () => {
    const resolver = new EndpointServiceResolver(objects({}));
    await expect(callWebhook({ url: `${server.url}/x`, caBundle: server.caBundle }, '{}', resolver, { timeoutMs: 5000, service: 'the webhook' })).resolves.toEqual({ echoed: {}, path: '/x' });
    await expect(callWebhook({ url: `${server.url}/x` }, '{}', resolver, { timeoutMs: 5000, service: 'the webhook' })).rejects.toBeInstanceOf(WebhookCallError);
  });

  it.each([
    ['a missing service', {}, /service "hook" not found/],
    ['a port the service does not have', { 'services/team/hook': service([{ port: 80 }]) }, /no service port 443/],
    ['no endpoints', { 'services/team/hook': service([{ port: 443 }]) }, /no endpoints available/],
    ['endpoints without the named port', { 'services/team/hook': service([{ name: 'web', port: 443 }]), 'endpoints/team/hook': endpoints(1, 'other') }, /no endpoints available/],
  ])('%s is an error naming it', async (_case, objs, message) => {
    const resolver = new EndpointServiceResolver(objects(objs as Record<string, Obj>));
    await expect(callWebhook({ service: { namespace: 'team', name: 'hook' } }, '{}', resolver, { timeoutMs: 1000, service: 'w' })).rejects.toThrow(message);
  });

  it('a caBundle that holds no certificate is an error', async () => {
    const resolver = new EndpointServiceResolver(objects({}));
    await expect(callWebhook({ url: server.url, caBundle: Buffer.from('junk').toString('base64') }, '{}', resolver, { timeoutMs: 1000, service: 'w' })).rejects.toThrow(/unable to load root certificates/);
  });

  it('ExternalName services resolve to their external name', async () => {
    const resolver = new EndpointServiceResolver(objects({ 'services/team/ext': { spec: { type: 'ExternalName', externalName: 'localhost' } } }));
    await expect(resolver.resolve('team', 'ext', 8443)).resolves.toEqual({ host: 'localhost', port: 8443 });
  });
});
