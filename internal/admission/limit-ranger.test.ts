// The LimitRanger plugin: tables of pods and claims against LimitRange items (the defaults a
// container gets and the annotation saying so; upstream's refusals for min, max and ratio of
// the Container, Pod and PersistentVolumeClaim types), then a real in-process server: a
// LimitRange written through the API defaults and limits the next pod.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNaming } from '../naming/naming.js';
import { admissionOutcome } from '../testserver/admission-outcome.js';
import { startTestServer, type TestServer } from '../testserver/test-server.js';
import type { AdmissionRequest, JsonObject } from './admission.js';
import { defaultedItem, limitRanger, type LimitRangeItem } from './limit-ranger.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- objects are free-form JSON

const naming = createNaming('kubernetes');
const run = async (items: LimitRangeItem[], resource: 'pods' | 'persistentvolumeclaims', object: Obj, operation: 'CREATE' | 'UPDATE' = 'CREATE'): Promise<Obj | string> => {
  const plugin = limitRanger(naming, () => [{ metadata: { name: 'lr' }, spec: { limits: items } } as JsonObject]);
  const req: AdmissionRequest = { operation, resource: { group: '', resource } as never, subresource: '', namespace: 'ns', name: 'x', object, oldObject: operation === 'UPDATE' ? object : undefined, user: { name: 'u', groups: [] }, dryRun: false };
  return admissionOutcome(plugin, req);
};
const container = (name: string, requests?: Obj, limits?: Obj): Obj => ({ name, image: 'i', resources: { ...(requests ? { requests } : {}), ...(limits ? { limits } : {}) } });
const pod = (...containers: Obj[]): Obj => ({ metadata: { name: 'x' }, spec: { containers } });
const claim = (storage?: string): Obj => ({ metadata: { name: 'x' }, spec: { resources: storage ? { requests: { storage } } : {} } });

describe('LimitRange item defaulting', () => {
  it('defaults limits from max and requests from the default, then min', () => {
    expect(defaultedItem({ type: 'Container', max: { cpu: '2' }, min: { memory: '1Mi' } })).toEqual({ type: 'Container', max: { cpu: '2' }, min: { memory: '1Mi' }, default: { cpu: '2' }, defaultRequest: { cpu: '2', memory: '1Mi' } });
    expect(defaultedItem({ type: 'Pod', max: { cpu: '2' } })).toEqual({ type: 'Pod', max: { cpu: '2' } });
  });
});

describe('LimitRanger plugin', () => {
  it('gives containers the defaults they lack and says so in the annotation', async () => {
    const out = (await run([{ type: 'Container', default: { cpu: '500m', memory: '128Mi' }, defaultRequest: { cpu: '100m' } }], 'pods', pod(container('a'), container('b', { cpu: '200m' })))) as Obj;
    expect(out.spec.containers[0].resources).toEqual({ requests: { cpu: '100m', memory: '128Mi' }, limits: { cpu: '500m', memory: '128Mi' } });
    expect(out.spec.containers[1].resources).toEqual({ requests: { cpu: '200m', memory: '128Mi' }, limits: { cpu: '500m', memory: '128Mi' } });
    expect(out.metadata.annotations['kubernetes.io/limit-ranger']).toBe(
      'LimitRanger plugin set: cpu, memory request for container a; cpu, memory limit for container a; memory request for container b; cpu, memory limit for container b',
    );
  });

  it.each([
    ['min request', [{ type: 'Container', min: { cpu: '100m' } }], pod(container('a', { cpu: '50m' }, { cpu: '1' })), '403 pods "x" is forbidden: minimum cpu usage per Container is 100m, but request is 50m'],
    ['pod min without request', [{ type: 'Pod', min: { cpu: '100m' } }], pod(container('a')), '403 pods "x" is forbidden: minimum cpu usage per Pod is 100m.  No request is specified'],
    ['container min filled by the defaulted request', [{ type: 'Container', min: { cpu: '100m' } }], pod(container('a')), 'ok'],
    ['max limit', [{ type: 'Container', max: { memory: '1Gi' } }], pod(container('a', { memory: '1Gi' }, { memory: '2Gi' })), '403 pods "x" is forbidden: maximum memory usage per Container is 1Gi, but limit is 2Gi'],
    ['ratio', [{ type: 'Container', maxLimitRequestRatio: { cpu: '2' } }], pod(container('a', { cpu: '100m' }, { cpu: '300m' })), '403 pods "x" is forbidden: cpu max limit to request ratio per Container is 2, but provided ratio is 3.000000'],
    ['ratio without limit', [{ type: 'Container', maxLimitRequestRatio: { cpu: '2' } }], pod(container('a', { cpu: '100m' })), '403 pods "x" is forbidden: cpu max limit to request ratio per Container is 2, but no limit is specified or limit is 0'],
    [
      'pod max over the sum, and two failures at once',
      [{ type: 'Pod', max: { cpu: '1', memory: '1Gi' } }],
      pod(container('a', { cpu: '600m', memory: '1Gi' }, { cpu: '600m', memory: '1Gi' }), container('b', { cpu: '600m', memory: '1Gi' }, { cpu: '600m', memory: '1Gi' })),
      '403 pods "x" is forbidden: [maximum cpu usage per Pod is 1, but limit is 1200m, maximum memory usage per Pod is 1Gi, but limit is 2Gi]',
    ],
    ['pod within max', [{ type: 'Pod', max: { cpu: '2' } }], pod(container('a', { cpu: '1' }, { cpu: '1' })), 'ok'],
  ])('pod: %s', async (_what, items, input, expected) => {
    const out = await run(items as LimitRangeItem[], 'pods', input);
    if (expected === 'ok') expect(typeof out).toBe('object');
    else expect(out).toBe(expected);
  });

  it.each([
    ['under min', [{ type: 'PersistentVolumeClaim', min: { storage: '1Gi' } }], claim('500Mi'), '403 persistentvolumeclaims "x" is forbidden: minimum storage usage per PersistentVolumeClaim is 1Gi, but request is 500Mi'],
    ['over max', [{ type: 'PersistentVolumeClaim', max: { storage: '2Gi' } }], claim('5Gi'), '403 persistentvolumeclaims "x" is forbidden: maximum storage usage per PersistentVolumeClaim is 2Gi, but request is 5Gi'],
    ['no request', [{ type: 'PersistentVolumeClaim', max: { storage: '2Gi' } }], claim(), '403 persistentvolumeclaims "x" is forbidden: maximum storage usage per PersistentVolumeClaim is 2Gi.  No request is specified'],
    ['within', [{ type: 'PersistentVolumeClaim', min: { storage: '1Gi' }, max: { storage: '2Gi' } }], claim('2Gi'), 'ok'],
  ])('claim: %s', async (_what, items, input, expected) => {
    const out = await run(items as LimitRangeItem[], 'persistentvolumeclaims', input);
    if (expected === 'ok') expect(typeof out).toBe('object');
    else expect(out).toBe(expected);
  });

  it('checks a claim growing on update, never a pod update', async () => {
    expect(await run([{ type: 'PersistentVolumeClaim', max: { storage: '2Gi' } }], 'persistentvolumeclaims', claim('3Gi'), 'UPDATE')).toContain('but request is 3Gi');
    expect(typeof (await run([{ type: 'Container', min: { cpu: '1' } }], 'pods', pod(container('a')), 'UPDATE'))).toBe('object');
  });
});

describe.each(['kubernetes', 'cluster'] as const)('LimitRanger in a server (--naming=%s)', (mode) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ naming: mode });
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('defaults and limits pods by the namespace’s LimitRange', async () => {
    const lr = { metadata: { name: 'limits' }, spec: { limits: [{ type: 'Container', default: { cpu: '500m' }, defaultRequest: { cpu: '250m' }, max: { cpu: '1' } }] } };
    const written = await t.admin.post('/api/v1/namespaces/default/limitranges', lr);
    expect(written.status, written.text()).toBeLessThan(300);
    let created: Obj | undefined;
    // The plugin reads LimitRanges from the watch cache: the new one is there within moments.
    for (let i = 0; i < 100 && created?.spec.containers[0].resources?.limits === undefined; i++) {
      created = (await t.admin.post('/api/v1/namespaces/default/pods', { metadata: { name: `p${i}` }, spec: { automountServiceAccountToken: false, containers: [{ name: 'c', image: 'i' }] } })).json<Obj>();
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(created!.spec.containers[0].resources).toEqual({ requests: { cpu: '250m' }, limits: { cpu: '500m' } });
    expect(created!.metadata.annotations[`${mode === 'kubernetes' ? 'kubernetes.io' : 'cluster.io'}/limit-ranger`]).toBe('LimitRanger plugin set: cpu request for container c; cpu limit for container c');
    const big = await t.admin.post('/api/v1/namespaces/default/pods', { metadata: { name: 'big' }, spec: { containers: [{ name: 'c', image: 'i', resources: { limits: { cpu: '2' } } }] } });
    expect(big.status).toBe(403);
    expect(big.json<Obj>().message).toBe('pods "big" is forbidden: maximum cpu usage per Container is 1, but limit is 2');
  });
});
