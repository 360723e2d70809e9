// Integration: what a Node keeps of the status it is written with — the node agent registers
// its node with a status (kept on create, as upstream), and `status.declaredFeatures` only
// while the NodeDeclaredFeatures gate is on (or when the stored node already has it).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FeatureGates } from '../config/feature-gates.js';
import { startTestServer, type TestServer } from '../testserver/test-server.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- test bodies are free-form JSON

const node = (name: string, status: Obj): Obj => ({ apiVersion: 'v1', kind: 'Node', metadata: { name }, status });
const STATUS = { capacity: { cpu: '2', pods: '110' }, declaredFeatures: ['InPlacePodVerticalScaling'] };

describe.each([
  ['off', false],
  ['on', true],
])('NodeDeclaredFeatures %s', (_label, gate) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ featureGates: FeatureGates.parse(`NodeDeclaredFeatures=${gate}`) });
  });
  afterAll(() => t.stop());

  it('a create keeps the status, and declaredFeatures only with the gate on', async () => {
    const res = await t.admin.post('/api/v1/nodes', node('n1', STATUS));
    expect(res.status).toBe(200);
    const stored = (await t.admin.get('/api/v1/nodes/n1')).json<Obj>();
    expect(stored.status.capacity).toEqual({ cpu: '2', pods: '110' });
    expect(stored.status.declaredFeatures).toEqual(gate ? ['InPlacePodVerticalScaling'] : undefined);
  });

  it('a status write drops declaredFeatures with the gate off unless the node already has them', async () => {
    const current = (await t.admin.get('/api/v1/nodes/n1')).json<Obj>();
    const res = await t.admin.put('/api/v1/nodes/n1/status', { ...current, status: { ...current.status, declaredFeatures: ['A', 'B'] } });
    expect(res.status).toBe(200);
    expect(res.json<Obj>().status.declaredFeatures).toEqual(gate ? ['A', 'B'] : undefined);
    expect(res.json<Obj>().status.capacity).toEqual({ cpu: '2', pods: '110' });
  });
});

describe('a gate turned off again', () => {
  it('keeps declaredFeatures a node already has', async () => {
    const on = await startTestServer({ storage: 'leveldb', featureGates: FeatureGates.parse('NodeDeclaredFeatures=true') });
    const dataDir = on.dataDir;
    expect((await on.admin.post('/api/v1/nodes', node('n2', STATUS))).status).toBe(200);
    await on.server.shutdown();
    const off = await startTestServer({ storage: 'leveldb', dataDir, featureGates: FeatureGates.parse('NodeDeclaredFeatures=false') });
    try {
      const current = (await off.admin.get('/api/v1/nodes/n2')).json<Obj>();
      expect(current.status.declaredFeatures).toEqual(['InPlacePodVerticalScaling']);
      const res = await off.admin.put('/api/v1/nodes/n2/status', { ...current, status: { ...current.status, declaredFeatures: ['C'] } });
      expect(res.json<Obj>().status.declaredFeatures).toEqual(['C']);
    } finally {
      await off.stop();
    }
  });
});
