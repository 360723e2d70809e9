// The legacy token cleaner in a real in-process server: an auto-generated, unused, unmounted
// secret-based token is marked invalid (and stops authenticating), then deleted once invalid for
// the period; mounted, recently used and unlisted tokens are left alone; nothing happens before
// tracking is older than the period. A sweep runs when the tracking record changes, so the test
// moves the record's date instead of waiting a year.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../testserver/test-server.js';
import { TRACKING_CONFIGMAP } from './legacy-token-cleaner.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- response bodies are free-form JSON
const NS = '/api/v1/namespaces/apps';
const TRACKING = `/api/v1/namespaces/kube-system/configmaps/${TRACKING_CONFIGMAP}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const today = () => new Date().toISOString().slice(0, 10);

describe('legacy-serviceaccount-token-cleaner', () => {
  let t: TestServer;
  const get = async (path: string) => (await t.admin.get(path)).json<Obj>();
  const secret = (name: string) => get(`${NS}/secrets/${name}`);
  const until = async <T>(what: string, probe: () => Promise<T | undefined>): Promise<T> => {
    for (let i = 0; i < 200; i++) {
      const v = await probe();
      if (v !== undefined) return v;
      await sleep(25);
    }
    throw new Error(`timed out waiting for ${what}`);
  };
  /** Any change of the tracking record makes the cleaner look now. */
  const sweepWithTrackingSince = async (since: string) => {
    const cm = await get(TRACKING);
    cm.data.since = since;
    cm.metadata.annotations = { ...(cm.metadata.annotations ?? {}), poke: String(Math.random()) };
    expect((await t.admin.put(TRACKING, cm)).status).toBe(200);
  };
  const whoami = async (token: string) => (await t.anonymous.post('/apis/authentication.cluster.io/v1/selfsubjectreviews', {}, { authorization: `Bearer ${token}` })).status;

  beforeAll(async () => {
    t = await startTestServer({ controllers: ['*', '-serviceaccount', '-root-ca-cert-publisher'], legacyServiceAccountTokenCleanUpPeriodMs: 1000 });
    expect((await t.admin.post('/api/v1/namespaces', { metadata: { name: 'apps' } })).status).toBeLessThan(300);
    const names = ['unused', 'mounted', 'recent', 'unlisted'];
    expect((await t.admin.post(`${NS}/serviceaccounts`, { metadata: { name: 'robot' }, secrets: names.filter((n) => n !== 'unlisted').map((name) => ({ name })) })).status).toBeLessThan(300);
    for (const name of names) {
      const labels = name === 'recent' ? { 'cluster.io/legacy-token-last-used': today() } : {};
      const body = { metadata: { name, annotations: { 'cluster.io/service-account.name': 'robot' }, labels }, type: 'cluster.io/service-account-token' };
      expect((await t.admin.post(`${NS}/secrets`, body)).status).toBeLessThan(300);
    }
    const pod = { metadata: { name: 'user' }, spec: { serviceAccountName: 'robot', containers: [{ name: 'c', image: 'x' }], volumes: [{ name: 't', secret: { secretName: 'mounted' } }] } };
    expect((await t.admin.post(`${NS}/pods`, pod)).status).toBeLessThan(300);
    await until('the token controller', async () => ((await secret('unused')).data?.token ? true : undefined));
    await until('the tracking record', async () => ((await t.admin.get(TRACKING)).status === 200 ? true : undefined));
    // Every secret is now older than the 1 s period.
    await sleep(1200);
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('records the day tracking began', async () => {
    expect((await get(TRACKING)).data).toEqual({ since: today() });
  });

  it('does nothing while tracking is younger than the period, then invalidates only the unused, unmounted, listed token', async () => {
    await sweepWithTrackingSince(today());
    await sleep(300);
    expect((await secret('unused')).metadata.labels?.['cluster.io/legacy-token-invalid-since']).toBeUndefined();
    // (Using the token now would mark it used today and keep it: upstream's rule.)
    const token = Buffer.from((await secret('unused')).data.token as string, 'base64').toString();

    await sweepWithTrackingSince('2020-01-01');
    const marked = await until('the invalid-since label', async () => (await secret('unused')).metadata.labels?.['cluster.io/legacy-token-invalid-since'] as string | undefined);
    expect(marked).toBe(today());
    expect(await whoami(token)).toBe(401);
    for (const kept of ['mounted', 'recent', 'unlisted']) expect((await secret(kept)).metadata.labels?.['cluster.io/legacy-token-invalid-since'], kept).toBeUndefined();
    // The recently used one still authenticates, and is marked used today.
    const recent = Buffer.from((await secret('recent')).data.token as string, 'base64').toString();
    expect(await whoami(recent)).toBeLessThan(300);
  });

  it('deletes a token invalid for longer than the period', async () => {
    const s = await secret('unused');
    s.metadata.labels['cluster.io/legacy-token-invalid-since'] = '2020-01-02';
    expect((await t.admin.put(`${NS}/secrets/unused`, s)).status).toBe(200);
    await sweepWithTrackingSince('2020-01-01');
    await until('the deletion', async () => ((await t.admin.get(`${NS}/secrets/unused`)).status === 404 ? true : undefined));
    for (const kept of ['mounted', 'recent', 'unlisted']) expect((await t.admin.get(`${NS}/secrets/${kept}`)).status, kept).toBe(200);
  });
});
