// PodDisruptionBudget status and eviction in a real in-process server (both namings): the
// disruption controller's status over ready pods, evictions refused with upstream's 429 and
// DisruptionBudget cause while the budget allows none, one eviction using up the budget and
// recording the pod, pods that are not running evicted without a budget, a v1beta1 Eviction,
// a dry run; plus the pure status computation (integers, percentages, disrupted pods).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNaming } from '../naming/naming.js';
import { startTestServer, type TestServer } from '../testserver/test-server.js';
import { computeStatus, DISRUPTED_POD_TIMEOUT_MS, scaled } from './disruption-controller.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- response bodies are free-form JSON
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const readyPod = (name: string, labels: Record<string, string>, isReady = true): Obj => ({
  metadata: { name, labels },
  status: { phase: 'Running', conditions: [{ type: 'Ready', status: isReady ? 'True' : 'False' }] },
});

describe('computeStatus', () => {
  const now = new Date('2026-01-01T00:00:00Z');
  const pods = [readyPod('a', { app: 'x' }), readyPod('b', { app: 'x' }), readyPod('c', { app: 'x' }, false), readyPod('d', { app: 'y' })];
  const pdb = (spec: Obj, status: Obj = {}): Obj => ({ metadata: { name: 'p', generation: 3 }, spec: { selector: { matchLabels: { app: 'x' } }, ...spec }, status });
  it('counts ready matching pods against minAvailable and maxUnavailable, integers and percentages rounded up', () => {
    expect(computeStatus(pdb({ minAvailable: 1 }), pods, now).status).toMatchObject({ observedGeneration: 3, expectedPods: 3, currentHealthy: 2, desiredHealthy: 1, disruptionsAllowed: 1 });
    expect(computeStatus(pdb({ minAvailable: '50%' }), pods, now).status).toMatchObject({ desiredHealthy: 2, disruptionsAllowed: 0 });
    expect(computeStatus(pdb({ maxUnavailable: 1 }), pods, now).status).toMatchObject({ desiredHealthy: 2, disruptionsAllowed: 0 });
    expect(computeStatus(pdb({ maxUnavailable: '10%' }), pods, now).status).toMatchObject({ desiredHealthy: 2 });
    const c = computeStatus(pdb({ minAvailable: 0 }), pods, now).status.conditions[0];
    expect(c).toMatchObject({ type: 'DisruptionAllowed', status: 'True', reason: 'SufficientPods' });
    expect(scaled('34%', 3)).toBe(2);
  });
  it('matches nothing with an empty selector', () => {
    expect(computeStatus({ metadata: {}, spec: { selector: {}, minAvailable: 0 } }, pods, now).status).toMatchObject({ expectedPods: 0, disruptionsAllowed: 0 });
  });
  it('keeps a recently disrupted pod out of the healthy count until it is gone or times out', () => {
    const recent = new Date(now.getTime() - 1000).toISOString();
    const old = new Date(now.getTime() - DISRUPTED_POD_TIMEOUT_MS - 1).toISOString();
    const out = computeStatus(pdb({ minAvailable: 0 }, { disruptedPods: { a: recent, b: old, gone: recent } }), pods, now);
    expect(out.status.disruptedPods).toEqual({ a: recent });
    expect(out.status.currentHealthy).toBe(1);
    expect(out.recheckMs).toBe(DISRUPTED_POD_TIMEOUT_MS - 1000);
  });
});

for (const mode of ['cluster', 'kubernetes'] as const) {
  describe(`eviction and disruption budgets (--naming=${mode})`, () => {
    createNaming(mode);
    let t: TestServer;
    const NS = '/api/v1/namespaces/default';
    const PDBS = '/apis/policy/v1/namespaces/default/poddisruptionbudgets';
    const evict = async (pod: string, body: Obj = {}, query = '') => {
      const r = await t.admin.post(`${NS}/pods/${pod}/eviction${query}`, { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: pod }, ...body });
      return { status: r.status, body: r.json<Obj>() };
    };
    const pdbStatus = async () => ((await t.admin.get(`${PDBS}/web`)).json<Obj>().status ?? {}) as Obj;
    const until = async (what: string, probe: () => Promise<boolean>) => {
      for (let i = 0; i < 300; i++) {
        if (await probe()) return;
        await sleep(20);
      }
      throw new Error(`timed out waiting for ${what}`);
    };
    const makePod = async (name: string, running: boolean) => {
      const created = await t.admin.post(`${NS}/pods`, { metadata: { name, labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'busybox' }] } });
      expect(created.status, created.text()).toBe(200);
      if (!running) return;
      const pod = created.json<Obj>();
      pod.status = { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] };
      const r = await t.admin.put(`${NS}/pods/${name}/status`, pod);
      expect(r.status, r.text()).toBe(200);
    };

    beforeAll(async () => {
      t = await startTestServer({ naming: mode });
      await makePod('web-0', true);
      await makePod('web-1', true);
      const r = await t.admin.post(PDBS, { metadata: { name: 'web' }, spec: { minAvailable: 2, selector: { matchLabels: { app: 'web' } } } });
      expect(r.status, r.text()).toBe(200);
      await until('the budget status', async () => {
        const s = await pdbStatus();
        return s.observedGeneration === 1 && s.currentHealthy === 2;
      });
    });
    afterAll(async () => {
      await t?.stop();
    });

    it('refuses with 429 and a DisruptionBudget cause while the budget allows no disruption (dry run too)', async () => {
      expect(await pdbStatus()).toMatchObject({ currentHealthy: 2, desiredHealthy: 2, expectedPods: 2, disruptionsAllowed: 0 });
      for (const query of ['', '?dryRun=All']) {
        const r = await evict('web-0', {}, query);
        expect(r.status).toBe(429);
        expect(r.body).toMatchObject({
          kind: 'Status',
          status: 'Failure',
          reason: 'TooManyRequests',
          code: 429,
          message: "Cannot evict pod as it would violate the pod's disruption budget.",
          details: { causes: [{ reason: 'DisruptionBudget', message: 'The disruption budget web needs 2 healthy pods and has 2 currently' }] },
        });
        expect(r.body.details.retryAfterSeconds).toBeUndefined();
      }
      expect((await t.admin.get(`${NS}/pods/web-0`)).status).toBe(200);
    });

    it('evicts one pod once the budget allows it, using the disruption up and recording the pod', async () => {
      const pdb = (await t.admin.get(`${PDBS}/web`)).json<Obj>();
      pdb.spec.minAvailable = 1;
      expect((await t.admin.put(`${PDBS}/web`, pdb)).status).toBe(200);
      await until('one disruption allowed', async () => (await pdbStatus()).disruptionsAllowed === 1);
      // A dry run writes nothing.
      expect((await evict('web-0', {}, '?dryRun=All')).status).toBe(201);
      expect((await pdbStatus()).disruptionsAllowed).toBe(1);
      const r = await evict('web-0', { deleteOptions: { gracePeriodSeconds: 0 } });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
      expect(r.body).toMatchObject({ kind: 'Status', status: 'Success' });
      await until('the pod to go', async () => (await t.admin.get(`${NS}/pods/web-0`)).status === 404);
      const blocked = await evict('web-1');
      expect(blocked.status).toBe(429);
      await until('the controller to count one healthy pod', async () => {
        const s = await pdbStatus();
        return s.currentHealthy === 1 && s.disruptionsAllowed === 0 && s.expectedPods === 1;
      });
      expect((await pdbStatus()).conditions).toEqual([expect.objectContaining({ type: 'DisruptionAllowed', status: 'False', reason: 'InsufficientPods' })]);
    });

    it('evicts a pod that is not running without the budget, and takes a v1beta1 Eviction', async () => {
      await makePod('web-pending', false);
      const r = await t.admin.post(`${NS}/pods/web-pending/eviction`, { apiVersion: 'policy/v1beta1', kind: 'Eviction', metadata: { name: 'web-pending' } });
      expect(r.status, r.text()).toBe(201);
      await until('the pending pod to go', async () => (await t.admin.get(`${NS}/pods/web-pending`)).status === 404);
    });

    it('refuses an Eviction naming another pod, and answers 404 for a missing pod', async () => {
      const other = await t.admin.post(`${NS}/pods/web-1/eviction`, { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'web-0' } });
      expect(other.status).toBe(400);
      expect(other.json<Obj>().message).toBe('name in URL does not match name in Eviction object');
      expect((await evict('nope')).status).toBe(404);
    });
  });
}
