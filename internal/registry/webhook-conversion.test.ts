// The conversion webhook client against a real HTTPS webhook server (own CA, caBundle): the
// ConversionReview sent for each review version and naming, what is and is not sent, the
// reply's checks, and a service reference resolved through a Service and its Endpoints.
import { describe, it, expect, beforeAll, afterAll, beforeEach } from 'vitest';
import type { ServerResponse } from 'node:http';
import { startHttpsWebhookServer, type HttpsWebhookServer } from '../testserver/https-webhook-server.js';
import { EndpointServiceResolver } from '../webhook/client-config.js';
import { createNaming } from '../naming/naming.js';
import { StatusError } from '../apierrors/status.js';
import type { CustomResourceWebhookConversion } from '../schema/catalog.js';
import { WebhookConverter } from './webhook-conversion.js';
import { hostPortReply as correctReply } from '../testserver/host-port-converter.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- free-form JSON bodies

const v1Obj = (name: string, extra: Obj = {}): Obj => ({
  apiVersion: 'example.com/v1',
  kind: 'Endpoint',
  metadata: { name, namespace: 'default', uid: `uid-${name}`, resourceVersion: '7', generation: 1, labels: { app: 'x' } },
  spec: { host: 'db.local', port: 5432 },
  ...extra,
});

describe('conversion webhook client', () => {
  let server: HttpsWebhookServer;
  let conversion: CustomResourceWebhookConversion;
  const k8s = () => new WebhookConverter(new EndpointServiceResolver(async () => undefined), createNaming('kubernetes'), 2_000);

  beforeAll(async () => {
    server = await startHttpsWebhookServer({ dnsNames: ['converter.webhooks.svc'], handler: (req) => correctReply(req) });
  });
  afterAll(async () => {
    await server.close();
  });
  beforeEach(() => {
    server.received.length = 0;
    server.handle((req) => correctReply(req));
    conversion = { reviewVersion: 'v1', clientConfig: { url: `${server.url}/convert`, caBundle: server.caBundle } };
  });

  const failureOf = async (p: Promise<unknown>): Promise<StatusError> => {
    const e = await p.then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(e).toBeInstanceOf(StatusError);
    return e as StatusError;
  };

  it('sends a v1 ConversionReview over TLS (caBundle) with upstream timeout parameter and takes the converted objects', async () => {
    const out = await k8s().convert([v1Obj('a'), v1Obj('b')], 'example.com/v2', conversion, false);
    expect(out.map((o) => o.spec)).toEqual([{ hostPort: 'db.local:5432' }, { hostPort: 'db.local:5432' }]);
    expect(out.map((o) => o.apiVersion)).toEqual(['example.com/v2', 'example.com/v2']);
    expect(server.received).toHaveLength(1);
    const req = server.received[0]!;
    expect(req.method).toBe('POST');
    expect(req.path).toBe('/convert?timeout=2s');
    const review = JSON.parse(req.body) as Obj;
    expect(review.apiVersion).toBe('apiextensions.k8s.io/v1');
    expect(review.kind).toBe('ConversionReview');
    expect(review.request.desiredAPIVersion).toBe('example.com/v2');
    expect(review.request.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect((review.request.objects as Obj[]).map((o) => o.metadata.name)).toEqual(['a', 'b']);
  });

  it('sends only objects not yet in the desired version, keeps the order, and makes no call when none need converting', async () => {
    const already = { ...v1Obj('b'), apiVersion: 'example.com/v2', spec: { hostPort: 'other:1' } };
    const out = await k8s().convert([v1Obj('a'), already, v1Obj('c')], 'example.com/v2', conversion, false);
    expect(out.map((o) => (o as Obj).metadata.name)).toEqual(['a', 'b', 'c']);
    expect(out[1]).toBe(already);
    expect(out[2]!.spec).toEqual({ hostPort: 'db.local:5432' });
    const sent = (JSON.parse(server.received[0]!.body) as Obj).request.objects as Obj[];
    expect(sent.map((o) => o.metadata.name)).toEqual(['a', 'c']);

    server.received.length = 0;
    const same = await k8s().convert([already], 'example.com/v2', conversion, true);
    expect(same).toEqual([already]);
    expect(server.received).toHaveLength(0);
  });

  it('converts back from v2 to v1', async () => {
    const v2 = { ...v1Obj('a'), apiVersion: 'example.com/v2', spec: { hostPort: 'cache:6379' } };
    const [out] = await k8s().convert([v2], 'example.com/v1', conversion, true);
    expect(out!.spec).toEqual({ host: 'cache', port: 6379 });
  });

  it('speaks v1beta1 when the definition asks for it, and the naming decides the review group', async () => {
    const beta = { ...conversion, reviewVersion: 'v1beta1' as const };
    // A v1beta1 reply is not checked for its kind or uid, as upstream never checked them.
    server.handle((req) => {
      const r = correctReply(req);
      return { ...r, apiVersion: 'apiextensions.k8s.io/v1beta1', response: { ...r.response, uid: 'not-the-request-uid' } };
    });
    const [out] = await k8s().convert([v1Obj('a')], 'example.com/v2', beta, true);
    expect(out!.spec).toEqual({ hostPort: 'db.local:5432' });
    expect((JSON.parse(server.received[0]!.body) as Obj).apiVersion).toBe('apiextensions.k8s.io/v1beta1');

    server.handle((req) => correctReply(req));
    const cluster = new WebhookConverter(new EndpointServiceResolver(async () => undefined), createNaming('cluster'), 2_000);
    await cluster.convert([v1Obj('a')], 'example.com/v2', conversion, true);
    expect((JSON.parse(server.received[1]!.body) as Obj).apiVersion).toBe('apiextensions.cluster.io/v1');
  });

  it('takes labels and annotations from the webhook and restores every other metadata field', async () => {
    server.handle((req) =>
      correctReply(req, (objs) =>
        objs.map((o) => ({ ...o, metadata: { ...o.metadata, labels: { app: 'y' }, annotations: { note: 'converted' }, generation: 99, resourceVersion: '1' } })),
      ),
    );
    const [out] = await k8s().convert([v1Obj('a')], 'example.com/v2', conversion, true);
    expect(out!.metadata).toEqual({ name: 'a', namespace: 'default', uid: 'uid-a', resourceVersion: '7', generation: 1, labels: { app: 'y' }, annotations: { note: 'converted' } });
  });

  it('fails with upstream messages as a 500 Status: wrong uid, wrong review kind, a Failure result', async () => {
    const c = k8s();
    server.handle((req) => ({ ...correctReply(req), response: { ...correctReply(req).response, uid: 'wrong' } }));
    let e = await failureOf(c.convert([v1Obj('a')], 'example.com/v2', conversion, true));
    expect(e.code).toBe(500);
    expect(e.reason).toBe('');
    expect(e.message).toMatch(/^conversion webhook for example\.com\/v1, Kind=Endpoint failed: expected response\.uid="[0-9a-f-]{36}", got "wrong"$/);

    server.handle((req) => ({ ...correctReply(req), kind: 'AdmissionReview' }));
    e = await failureOf(c.convert([v1Obj('a')], 'example.com/v2', conversion, true));
    expect(e.message).toBe(
      'conversion webhook for example.com/v1, Kind=Endpoint failed: expected webhook response of apiextensions.k8s.io/v1, Kind=ConversionReview, got apiextensions.k8s.io/v1, Kind=AdmissionReview',
    );

    server.handle((req) => ({ ...correctReply(req), response: { uid: (JSON.parse(req.body) as Obj).request.uid, result: { status: 'Failure', message: 'cannot convert port' } } }));
    e = await failureOf(c.convert([v1Obj('a')], 'example.com/v2', conversion, true));
    expect(e.message).toBe('conversion webhook for example.com/v1, Kind=Endpoint failed: cannot convert port');

    server.handle((req) => ({ ...correctReply(req), response: { uid: (JSON.parse(req.body) as Obj).request.uid, result: { status: 'Failure' } } }));
    e = await failureOf(c.convert([v1Obj('a')], 'example.com/v2', conversion, true));
    expect(e.message).toBe("conversion webhook for example.com/v1, Kind=Endpoint failed: response.result.status was 'Failure', not 'Success'");
  });

  it('fails on a wrong count, a wrong apiVersion or kind, and a changed name, namespace or uid', async () => {
    const c = k8s();
    server.handle((req) => correctReply(req, (objs) => objs.slice(1)));
    let e = await failureOf(c.convert([v1Obj('a'), v1Obj('b')], 'example.com/v2', conversion, false));
    expect(e.message).toBe('conversion webhook for example.com/v1, Kind=Endpoint returned 1 objects, expected 2');

    server.handle((req) => correctReply(req, (objs) => objs.map((o) => ({ ...o, apiVersion: 'example.com/v3' }))));
    e = await failureOf(c.convert([v1Obj('a')], 'example.com/v2', conversion, true));
    expect(e.message).toBe('conversion webhook for example.com/v1, Kind=Endpoint returned invalid object: invalid groupVersion (expected example.com/v2, received example.com/v3)');

    server.handle((req) => correctReply(req, (objs) => objs.map((o) => ({ ...o, kind: 'Other' }))));
    e = await failureOf(c.convert([v1Obj('a'), v1Obj('b')], 'example.com/v2', conversion, false));
    expect(e.message).toBe('conversion webhook for example.com/v1, Kind=Endpoint returned invalid converted object at index 0: invalid kind (expected Endpoint, received Other)');

    for (const [field, label, value] of [
      ['name', 'name', 'renamed'],
      ['namespace', 'namespace', 'elsewhere'],
      ['uid', 'UID', 'other-uid'],
    ] as const) {
      server.handle((req) => correctReply(req, (objs) => objs.map((o) => ({ ...o, metadata: { ...o.metadata, [field]: value } }))));
      e = await failureOf(c.convert([v1Obj('a')], 'example.com/v2', conversion, true));
      const before = field === 'name' ? 'a' : field === 'namespace' ? 'default' : 'uid-a';
      expect(e.message).toBe(`conversion webhook for example.com/v1, Kind=Endpoint returned invalid object: must have the same ${label}: ${before} != ${value}`);
    }

    server.handle((req) => correctReply(req, (objs) => objs.map((o) => ({ ...o, metadata: { ...o.metadata, labels: { 'bad key!': 'x' } } }))));
    e = await failureOf(c.convert([v1Obj('a')], 'example.com/v2', conversion, true));
    expect(e.message).toMatch(/^conversion webhook for example\.com\/v1, Kind=Endpoint returned invalid metadata: metadata\.labels: Invalid value: "bad key!"/);
  });

  it('fails on a non-200 answer, garbage instead of JSON, a timeout, and a caBundle that does not match', async () => {
    const c = k8s();
    server.handle((_req, res: ServerResponse) => {
      res.writeHead(503, { 'content-type': 'text/plain' });
      res.end('overloaded');
    });
    let e = await failureOf(c.convert([v1Obj('a')], 'example.com/v2', conversion, true));
    expect(e.message).toBe(`conversion webhook for example.com/v1, Kind=Endpoint failed: Post "${server.url}/convert?timeout=2s" answered HTTP 503`);

    server.handle((_req, res: ServerResponse) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{not json');
    });
    e = await failureOf(c.convert([v1Obj('a')], 'example.com/v2', conversion, true));
    expect(e.message).toMatch(/^conversion webhook for example\.com\/v1, Kind=Endpoint failed: .* did not answer JSON$/);

    const quick = new WebhookConverter(new EndpointServiceResolver(async () => undefined), createNaming('kubernetes'), 200);
    server.handle(() => new Promise((resolve) => setTimeout(() => resolve({}), 1_000)));
    e = await failureOf(quick.convert([v1Obj('a')], 'example.com/v2', conversion, true));
    expect(e.message).toMatch(/^conversion webhook for example\.com\/v1, Kind=Endpoint failed: .*did not answer within 200ms$/);

    server.handle((req) => correctReply(req));
    const other = await startHttpsWebhookServer({ handler: () => ({}) });
    try {
      e = await failureOf(c.convert([v1Obj('a')], 'example.com/v2', { ...conversion, clientConfig: { ...conversion.clientConfig, caBundle: other.caBundle } }, true));
      expect(e.message).toMatch(/^conversion webhook for example\.com\/v1, Kind=Endpoint failed: .*certificate/);
    } finally {
      await other.close();
    }
  });

  it('calls a service reference at the Service endpoints, checking the certificate for <name>.<namespace>.svc', async () => {
    const reads: string[] = [];
    const resolver = new EndpointServiceResolver(async (resource, ns, name) => {
      reads.push(`${resource}/${ns}/${name}`);
      if (resource === 'services') return { spec: { ports: [{ name: 'https', port: 443 }] } };
      return { subsets: [{ addresses: [{ ip: '127.0.0.1' }], ports: [{ name: 'https', port: server.port }] }] };
    });
    const c = new WebhookConverter(resolver, createNaming('kubernetes'), 2_000);
    const svc: CustomResourceWebhookConversion = { reviewVersion: 'v1', clientConfig: { service: { namespace: 'webhooks', name: 'converter', path: '/crd' }, caBundle: server.caBundle } };
    const [out] = await c.convert([v1Obj('a')], 'example.com/v2', svc, true);
    expect(out!.spec).toEqual({ hostPort: 'db.local:5432' });
    expect(server.received[0]!.path).toBe('/crd?timeout=2s');
    expect(reads).toEqual(['services/webhooks/converter', 'endpoints/webhooks/converter']);

    // A service whose certificate does not name it is refused.
    const wrongName: CustomResourceWebhookConversion = { ...svc, clientConfig: { ...svc.clientConfig, service: { namespace: 'webhooks', name: 'other' } } };
    const e = await failureOf(c.convert([v1Obj('a')], 'example.com/v2', wrongName, true));
    expect(e.message).toMatch(/^conversion webhook for example\.com\/v1, Kind=Endpoint failed: .*other\.webhooks\.svc/);
  });
});
