// Custom resources converted by their definition's conversion webhook, against a real server
// and a real HTTPS webhook server: reads, list pages, watches, writes in a non-storage version,
// failures as upstream's 500 Status, the definition's validation and storedVersions.
import { describe, it, expect, beforeAll, afterAll, beforeEach } from 'vitest';
import type { ServerResponse } from 'node:http';
import { startTestServer, type TestServer } from '../testserver/test-server.js';
import { startHttpsWebhookServer, type HttpsWebhookServer } from '../testserver/https-webhook-server.js';
import { hostPortCrd, hostPortReply } from '../testserver/host-port-converter.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- free-form JSON bodies

const CRDS = '/apis/apiextensions.cluster.io/v1/customresourcedefinitions';
const V1 = '/apis/conv.example.com/v1/namespaces/default/backends';
const V2 = '/apis/conv.example.com/v2/namespaces/default/backends';

const crd = (conversion: Obj, storage: 'v1' | 'v2' = 'v1'): Obj => hostPortCrd('apiextensions.cluster.io', conversion, storage);

async function waitFor(cond: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 25));
  }
}

const v1 = (name: string, host = 'db', port = 5432): Obj => ({ apiVersion: 'conv.example.com/v1', kind: 'Backend', metadata: { name }, spec: { host, port } });
const v2 = (name: string, hostPort: string): Obj => ({ apiVersion: 'conv.example.com/v2', kind: 'Backend', metadata: { name }, spec: { hostPort } });

describe('conversion webhooks of custom resource definitions', () => {
  let t: TestServer;
  let hook: HttpsWebhookServer;
  let webhookConversion: Obj;
  /** ConversionReviews received since the last reset: desired version and object names. */
  const reviews = () => hook.received.map((r) => JSON.parse(r.body) as Obj).map((r) => ({ to: r.request.desiredAPIVersion, names: r.request.objects.map((o: Obj) => o.metadata.name) }));

  beforeAll(async () => {
    hook = await startHttpsWebhookServer({ handler: (req) => hostPortReply(req) });
    t = await startTestServer();
    webhookConversion = { strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1'], clientConfig: { url: `${hook.url}/convert`, caBundle: hook.caBundle } } };
    expect([200, 201]).toContain((await t.admin.post(CRDS, crd(webhookConversion))).status);
    await waitFor(async () => (await t.admin.get(`${V2}`)).status === 200);
  });
  afterAll(async () => {
    await t.stop();
    await hook.close();
  });
  beforeEach(() => {
    hook.handle((req) => hostPortReply(req));
    hook.received.length = 0;
  });

  it('refuses a webhook conversion without a review version the server speaks, or with a bad client config', async () => {
    const bad = async (webhook: Obj) => {
      const r = await t.admin.post(CRDS, { ...crd({ strategy: 'Webhook', webhook }), metadata: { name: 'others.conv.example.com' }, spec: { ...crd({}).spec, names: { plural: 'others', kind: 'Other' }, conversion: { strategy: 'Webhook', webhook } } });
      expect(r.status).toBe(422);
      return r.json<Obj>().message as string;
    };
    expect(await bad({ conversionReviewVersions: ['v3'], clientConfig: { url: 'https://x.example/' } })).toContain(
      'spec.conversion.webhook.conversionReviewVersions: Invalid value: ["v3"]: must include at least one of v1, v1beta1',
    );
    expect(await bad({ conversionReviewVersions: ['v1'], clientConfig: { url: 'http://x.example/' } })).toContain("'https' is the only allowed URL scheme");
    expect(await bad({ conversionReviewVersions: ['v1'], clientConfig: { url: 'https://x.example/', service: { namespace: 'a', name: 'b' } } })).toContain(
      'exactly one of url or service is required',
    );
  });

  it('reads an object stored as v1 in v2 through the webhook, and v1 without it', async () => {
    expect((await t.admin.post(V1, v1('a'))).status).toBe(200);
    expect(hook.received).toHaveLength(0);
    const got = (await t.admin.get(`${V2}/a`)).json<Obj>();
    expect(got.apiVersion).toBe('conv.example.com/v2');
    expect(got.spec).toEqual({ hostPort: 'db:5432' });
    expect(reviews()).toEqual([{ to: 'conv.example.com/v2', names: ['a'] }]);
    expect((await t.admin.get(`${V1}/a`)).json<Obj>().spec).toEqual({ host: 'db', port: 5432 });
    expect(hook.received).toHaveLength(1);
  });

  it('converts a list page with one ConversionReview', async () => {
    await t.admin.post(V1, v1('b', 'cache', 6379));
    await t.admin.post(V1, v1('c', 'queue', 5672));
    hook.received.length = 0;
    const list = (await t.admin.get(V2)).json<Obj>();
    expect(list.apiVersion).toBe('conv.example.com/v2');
    expect(list.items.map((i: Obj) => [i.apiVersion, i.spec.hostPort])).toEqual([
      ['conv.example.com/v2', 'db:5432'],
      ['conv.example.com/v2', 'cache:6379'],
      ['conv.example.com/v2', 'queue:5672'],
    ]);
    expect(reviews()).toEqual([{ to: 'conv.example.com/v2', names: ['a', 'b', 'c'] }]);
    hook.received.length = 0;
    const page = (await t.admin.get(`${V2}?limit=2`)).json<Obj>();
    expect(page.items).toHaveLength(2);
    await t.admin.get(`${V2}?limit=2&continue=${encodeURIComponent(page.metadata.continue)}`);
    expect(reviews()).toEqual([
      { to: 'conv.example.com/v2', names: ['a', 'b'] },
      { to: 'conv.example.com/v2', names: ['c'] },
    ]);
  });

  it('stores a v2 write in v1 and answers it in v2: create, update, merge patch and apply', async () => {
    // A create answers 200 (api-conventions §4.4 item 5).
    const created = await t.admin.post(V2, v2('d', 'web:80'));
    expect(created.status).toBe(200);
    expect(created.json<Obj>()).toMatchObject({ apiVersion: 'conv.example.com/v2', spec: { hostPort: 'web:80' } });
    // To the storage version, then the stored object back, as upstream answers a write.
    expect(reviews()).toEqual([
      { to: 'conv.example.com/v1', names: ['d'] },
      { to: 'conv.example.com/v2', names: ['d'] },
    ]);
    expect((await t.admin.get(`${V1}/d`)).json<Obj>().spec).toEqual({ host: 'web', port: 80 });

    const current = created.json<Obj>();
    const updated = await t.admin.put(`${V2}/d`, { ...current, spec: { hostPort: 'web:8080' } });
    expect(updated.status).toBe(200);
    expect(updated.json<Obj>().spec).toEqual({ hostPort: 'web:8080' });
    expect((await t.admin.get(`${V1}/d`)).json<Obj>().spec).toEqual({ host: 'web', port: 8080 });

    const patched = await t.admin.request('PATCH', `${V2}/d`, { body: '{"spec":{"hostPort":"web:9090"}}', raw: true, headers: { 'content-type': 'application/merge-patch+json' } });
    expect(patched.json<Obj>().spec).toEqual({ hostPort: 'web:9090' });
    expect((await t.admin.get(`${V1}/d`)).json<Obj>().spec).toEqual({ host: 'web', port: 9090 });

    const applied = await t.admin.request('PATCH', `${V2}/e?fieldManager=test`, { body: JSON.stringify(v2('e', 'api:443')), raw: true, headers: { 'content-type': 'application/apply-patch+yaml' } });
    expect(applied.status).toBe(201);
    expect(applied.json<Obj>().spec).toEqual({ hostPort: 'api:443' });
    expect((await t.admin.get(`${V1}/e`)).json<Obj>().spec).toEqual({ host: 'api', port: 443 });
    const reapplied = await t.admin.request('PATCH', `${V2}/e?fieldManager=test`, { body: JSON.stringify(v2('e', 'api:8443')), raw: true, headers: { 'content-type': 'application/apply-patch+yaml' } });
    expect(reapplied.status).toBe(200);
    expect((await t.admin.get(`${V1}/e`)).json<Obj>().spec).toEqual({ host: 'api', port: 8443 });

    // A dry run converts both ways too, as upstream's dry-run storage encodes and decodes.
    hook.received.length = 0;
    const dry = await t.admin.post(`${V2}?dryRun=All`, v2('dry', 'tmp:1'));
    expect(dry.status).toBe(200);
    expect(dry.json<Obj>().spec).toEqual({ hostPort: 'tmp:1' });
    expect(reviews()).toEqual([
      { to: 'conv.example.com/v1', names: ['dry'] },
      { to: 'conv.example.com/v2', names: ['dry'] },
    ]);
    expect((await t.admin.get(`${V1}/dry`)).status).toBe(404);
  });

  it('answers a failed conversion with upstream 500 Status', async () => {
    hook.handle((_req, res: ServerResponse) => {
      res.writeHead(500);
      res.end('broken');
    });
    const r = await t.admin.get(`${V2}/a`);
    expect(r.status).toBe(500);
    const status = r.json<Obj>();
    expect(status).toMatchObject({ kind: 'Status', status: 'Failure', code: 500 });
    expect(status.reason).toBeUndefined();
    expect(status.message).toBe(`conversion webhook for conv.example.com/v1, Kind=Backend failed: Post "${hook.url}/convert?timeout=30s" answered HTTP 500`);
    hook.handle((req) => hostPortReply(req, (objs) => objs.map((o) => ({ ...o, metadata: { ...o.metadata, name: 'renamed' } }))));
    const list = await t.admin.get(V2);
    expect(list.status).toBe(500);
    expect(list.json<Obj>().message).toBe('conversion webhook for conv.example.com/v1, Kind=Backend returned invalid converted object at index 0: must have the same name: a != renamed');
    // A write that cannot be converted is not stored.
    const write = await t.admin.post(V2, v2('never', 'x:1'));
    expect(write.status).toBe(500);
    expect((await t.admin.post(`${V2}?dryRun=All`, v2('never', 'x:1'))).status).toBe(500);
    expect((await t.admin.get(`${V1}/never`)).status).toBe(404);
  });

  it('converts watch events one by one in order, and ends the watch with an ERROR event when one fails', async () => {
    const rv = (await t.admin.get(V1)).json<Obj>().metadata.resourceVersion as string;
    const lines: string[] = [];
    const w = t.admin.watch(`${V2}?watch=1&resourceVersion=${rv}`, (l) => lines.push(l));
    await t.admin.post(V1, v1('w1', 'one', 1));
    await t.admin.post(V1, v1('w2', 'two', 2));
    await t.admin.request('PATCH', `${V1}/w1`, { body: '{"spec":{"port":11}}', raw: true, headers: { 'content-type': 'application/merge-patch+json' } });
    await waitFor(async () => lines.length >= 3);
    const events = lines.map((l) => JSON.parse(l) as Obj);
    expect(events.map((e) => [e.type, e.object.apiVersion, e.object.metadata.name, e.object.spec.hostPort])).toEqual([
      ['ADDED', 'conv.example.com/v2', 'w1', 'one:1'],
      ['ADDED', 'conv.example.com/v2', 'w2', 'two:2'],
      ['MODIFIED', 'conv.example.com/v2', 'w1', 'one:11'],
    ]);
    expect(reviews().map((r) => r.names)).toEqual([['w1'], ['w2'], ['w1']]);

    hook.handle((req) => ({ ...hostPortReply(req), response: { uid: 'wrong', result: { status: 'Success' }, convertedObjects: [] } }));
    await t.admin.post(V1, v1('w3'));
    const done = await w.done;
    const last = JSON.parse(done.lines[done.lines.length - 1]!) as Obj;
    expect(last.type).toBe('ERROR');
    expect(last.object).toMatchObject({ kind: 'Status', status: 'Failure', code: 500 });
    expect(last.object.message).toMatch(/^conversion webhook for conv\.example\.com\/v1, Kind=Backend failed: expected response\.uid="[0-9a-f-]{36}", got "wrong"$/);
    expect(done.lines).toHaveLength(4);
  });

  it('starts a watch with every current object, each converted, in the order of a list', async () => {
    for (let i = 0; i < 10; i++) await t.admin.post(V1, v1(`x${i}`, `h${i}`, 1000 + i));
    const list = (await t.admin.get(V2)).json<Obj>();
    expect(list.items.length).toBeGreaterThan(10);
    hook.received.length = 0;
    const lines: string[] = [];
    const w = t.admin.watch(`${V2}?watch=1`, (l) => lines.push(l));
    await waitFor(async () => lines.length >= list.items.length);
    w.stop();
    const events = lines.map((l) => JSON.parse(l) as Obj);
    expect(events.map((e) => [e.type, e.object.metadata.name, e.object.spec.hostPort])).toEqual(list.items.map((i: Obj) => ['ADDED', i.metadata.name, i.spec.hostPort]));
    expect(hook.received.length).toBe(list.items.length);
  });

  it('deletes a collection through v2, answering the deleted objects in v2', async () => {
    const r = await t.admin.delete(`${V2}?labelSelector=`);
    expect(r.status).toBe(200);
    const list = r.json<Obj>();
    expect(list.items.length).toBeGreaterThan(0);
    for (const item of list.items) {
      expect(item.apiVersion).toBe('conv.example.com/v2');
      expect(item.spec.hostPort).toMatch(/^[a-z0-9]+:\d+$/);
    }
    expect((await t.admin.get(V1)).json<Obj>().items).toEqual([]);
  });

  it('keeps every stored version in status.storedVersions and reads objects stored in the old storage version through the webhook', async () => {
    await t.admin.post(V1, v1('old', 'legacy', 21));
    const current = (await t.admin.get(`${CRDS}/backends.conv.example.com`)).json<Obj>();
    expect(current.status.storedVersions).toEqual(['v1']);
    const moved = crd(webhookConversion, 'v2');
    const put = await t.admin.put(`${CRDS}/backends.conv.example.com`, { ...moved, metadata: current.metadata });
    expect(put.status).toBe(200);
    await waitFor(async () => ((await t.admin.get(`${CRDS}/backends.conv.example.com`)).json<Obj>().status.storedVersions ?? []).length === 2);
    expect((await t.admin.get(`${CRDS}/backends.conv.example.com`)).json<Obj>().status.storedVersions).toEqual(['v1', 'v2']);
    // Stored as v1 before the switch: the storage version v2 is now a conversion away.
    await waitFor(async () => {
      const r = await t.admin.get(`${V2}/old`);
      return r.status === 200 && r.json<Obj>().spec?.hostPort === 'legacy:21';
    });
    hook.received.length = 0;
    const created = await t.admin.post(V2, v2('new', 'fresh:22'));
    expect(created.status).toBe(200);
    // Written in the storage version: no conversion in either direction.
    expect(hook.received).toHaveLength(0);
    expect((await t.admin.get(`${V1}/new`)).json<Obj>().spec).toEqual({ host: 'fresh', port: 22 });
  });
});
