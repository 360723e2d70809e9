// The Priority and DefaultTolerationSeconds plugins in a real in-process server (both namings):
// what a created pod gets, what is refused with upstream's words, that an update keeps the
// resolved priority, and that only one PriorityClass may be the global default.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNaming } from '../naming/naming.js';
import { startTestServer, type TestServer } from '../testserver/test-server.js';
import { defaultClass } from './priority.js';
import { defaultTolerationSeconds } from './default-toleration-seconds.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- response bodies are free-form JSON

describe('defaultClass', () => {
  it('is the lowest-valued global default, or none', () => {
    const c = (name: string, value: number, globalDefault: boolean) => ({ name, value, globalDefault, preemptionPolicy: undefined });
    expect(defaultClass([c('a', 5, true), c('b', 3, true), c('c', 1, false)])?.name).toBe('b');
    expect(defaultClass([c('c', 1, false)])).toBeUndefined();
  });
});

describe('defaultTolerationSeconds', () => {
  it('uses the configured seconds on creates and updates (as upstream), and leaves other resources and subresources alone', () => {
    const plugin = defaultTolerationSeconds(createNaming('kubernetes'), { notReady: 60, unreachable: 0 });
    const pods = { group: '', resource: 'pods' } as never;
    const object: Obj = { spec: {} };
    plugin.admit!({ operation: 'CREATE', resource: pods, subresource: '', namespace: 'd', name: 'p', object, oldObject: undefined, user: { name: 'u', groups: [] }, dryRun: false });
    expect(object.spec.tolerations).toEqual([
      { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 60 },
      { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 0 },
    ]);
    // An update that drops them (a manifest sent back by kubectl replace) gets them again.
    expect(plugin.handles('UPDATE')).toBe(true);
    const updated: Obj = { spec: { tolerations: [{ key: 'x', operator: 'Exists' }] } };
    plugin.admit!({ operation: 'UPDATE', resource: pods, subresource: '', namespace: 'd', name: 'p', object: updated, oldObject: object, user: { name: 'u', groups: [] }, dryRun: false });
    expect(updated.spec.tolerations).toHaveLength(3);
    const status: Obj = { spec: {} };
    plugin.admit!({ operation: 'UPDATE', resource: pods, subresource: 'status', namespace: 'd', name: 'p', object: status, oldObject: object, user: { name: 'u', groups: [] }, dryRun: false });
    expect(status).toEqual({ spec: {} });
    const configMap: Obj = { data: {} };
    plugin.admit!({ operation: 'CREATE', resource: { group: '', resource: 'configmaps' } as never, subresource: '', namespace: 'd', name: 'c', object: configMap, oldObject: undefined, user: { name: 'u', groups: [] }, dryRun: false });
    expect(configMap).toEqual({ data: {} });
  });
});

for (const mode of ['cluster', 'kubernetes'] as const) {
  describe(`pod priority and default tolerations (--naming=${mode})`, () => {
    const naming = createNaming(mode);
    let t: TestServer;
    const pcs = `/apis/${naming.group('scheduling.k8s.io')}/v1/priorityclasses`;
    const pods = '/api/v1/namespaces/default/pods';
    const pod = (name: string, spec: Obj = {}) => ({ metadata: { name }, spec: { containers: [{ name: 'c', image: 'busybox' }], ...spec } });
    const create = async (body: Obj) => {
      const r = await t.admin.post(pods, body);
      return { status: r.status, body: r.json<Obj>() };
    };
    beforeAll(async () => {
      t = await startTestServer({ naming: mode });
    });
    afterAll(async () => {
      await t?.stop();
    });

    it('gives a pod without a class priority 0, PreemptLowerPriority and the 300 s NoExecute tolerations', async () => {
      const r = await create(pod('plain'));
      expect(r.status).toBe(200);
      expect(r.body.spec.priority).toBe(0);
      expect(r.body.spec.preemptionPolicy).toBe('PreemptLowerPriority');
      expect(r.body.spec.priorityClassName).toBeUndefined();
      expect(r.body.spec.tolerations).toEqual([
        { key: `node.${naming.labelDomain}/not-ready`, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
        { key: `node.${naming.labelDomain}/unreachable`, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
      ]);
    });

    it('keeps a toleration that already covers a taint and adds only the other', async () => {
      const mine = { key: `node.${naming.labelDomain}/unreachable`, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 10 };
      const r = await create(pod('tolerant', { tolerations: [mine] }));
      expect(r.body.spec.tolerations).toEqual([mine, { key: `node.${naming.labelDomain}/not-ready`, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 }]);
      const all = await create(pod('tolerates-all', { tolerations: [{ operator: 'Exists' }] }));
      expect(all.body.spec.tolerations).toEqual([{ operator: 'Exists' }]);
    });

    it('resolves a class to its value and refuses an unknown class or a differing priority', async () => {
      const critical = await create(pod('critical', { priorityClassName: 'system-node-critical' }));
      expect(critical.status).toBe(200);
      expect(critical.body.spec.priority).toBe(2000001000);
      const unknown = await create(pod('unknown', { priorityClassName: 'nope' }));
      expect(unknown.status).toBe(403);
      expect(unknown.body.message).toBe('pods "unknown" is forbidden: no PriorityClass with name nope was found');
      const differing = await create(pod('differing', { priorityClassName: 'system-cluster-critical', priority: 7 }));
      expect(differing.status).toBe(403);
      expect(differing.body.message).toBe('pods "differing" is forbidden: the integer value of priority (7) must not be provided in pod spec; priority admission controller computed 2000000000 from the given PriorityClass name');
    });

    it('keeps the resolved priority through an update that leaves it out', async () => {
      const current = (await t.admin.get(`${pods}/critical`)).json<Obj>();
      current.metadata.labels = { touched: 'yes' };
      delete current.spec.priority;
      delete current.spec.preemptionPolicy;
      const r = await t.admin.put(`${pods}/critical`, current);
      expect(r.status, r.text()).toBe(200);
      expect(r.json<Obj>().spec.priority).toBe(2000001000);
    });

    it('applies the global default class, its preemption policy, and allows only one default', async () => {
      const low = { metadata: { name: 'low' }, value: 100, globalDefault: true, preemptionPolicy: 'Never' };
      expect((await t.admin.post(pcs, low)).status).toBe(200);
      const second = await t.admin.post(pcs, { metadata: { name: 'second' }, value: 5, globalDefault: true });
      expect(second.status).toBe(403);
      expect(second.json<Obj>().message).toContain('PriorityClass low is already marked as default. Only one default can exist');
      let r: { status: number; body: Obj } | undefined;
      // The plugin reads classes from the watch cache: the new class is there within moments.
      for (let i = 0; i < 100; i++) {
        r = await create(pod(`defaulted-${i}`));
        if (r.body.spec.priorityClassName === 'low') break;
        await new Promise((res) => setTimeout(res, 20));
      }
      expect(r!.body.spec.priorityClassName).toBe('low');
      expect(r!.body.spec.priority).toBe(100);
      expect(r!.body.spec.preemptionPolicy).toBe('Never');
      const conflicting = await create(pod('conflicting', { priorityClassName: 'low', preemptionPolicy: 'PreemptLowerPriority' }));
      expect(conflicting.status).toBe(403);
      expect(conflicting.body.message).toContain('the string value of PreemptionPolicy (PreemptLowerPriority) must not be provided in pod spec; priority admission controller computed Never');
    });
  });
}
