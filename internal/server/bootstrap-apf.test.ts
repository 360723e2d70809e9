// What a fresh server holds besides namespaces and RBAC, in a real in-process server with a
// durable store: the system PriorityClasses and upstream's default APF objects (both namings),
// and upstream's reconciliation of them at the next start: a mandatory object is put back, a
// suggested one marked autoupdate "true" is put back, one marked "false" is left as changed,
// and a deleted one comes back. Plus the pure rules behind it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createNaming } from '../naming/naming.js';
import { startTestServer, type TestServer } from '../testserver/test-server.js';
import { covers, defaultFlowSchemas, defaultPriorityLevels, keptByAdministrator, shouldAutoUpdate } from './bootstrap-apf.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- response bodies are free-form JSON

describe('APF bootstrap rules', () => {
  it('covers: wanted fields must match, extra defaulted fields do not count', () => {
    expect(covers({ a: 1, b: { c: [1, { d: 2, e: 3 }] } }, { b: { c: [1, { d: 2 }] } })).toBe(true);
    expect(covers({ a: 1 }, { a: 2 })).toBe(false);
    expect(covers({ a: [1, 2] }, { a: [1] })).toBe(false);
    expect(covers({}, { a: {} })).toBe(false);
  });
  it('auto-updates mandatory objects, "true", and unmarked never-changed objects only', () => {
    const a = 'apf.kubernetes.io/autoupdate-spec';
    expect(shouldAutoUpdate({ metadata: { annotations: { [a]: 'false' } } }, true, a)).toBe(true);
    expect(shouldAutoUpdate({ metadata: { annotations: { [a]: 'true' }, generation: 5 } }, false, a)).toBe(true);
    expect(shouldAutoUpdate({ metadata: { annotations: { [a]: 'false' }, generation: 1 } }, false, a)).toBe(false);
    expect(shouldAutoUpdate({ metadata: { generation: 1 } }, false, a)).toBe(true);
    expect(shouldAutoUpdate({ metadata: { generation: 2 } }, false, a)).toBe(false);
  });
  it("keeps the exempt level's concurrency shares and lendable percent, and nothing else of a mandatory spec", () => {
    const wanted = defaultPriorityLevels().find((l) => l.name === 'exempt')!.spec;
    expect(keptByAdministrator('PriorityLevelConfiguration', 'exempt', { type: 'Exempt', exempt: { nominalConcurrencyShares: 7, lendablePercent: 10 } }, wanted)).toEqual({ type: 'Exempt', exempt: { nominalConcurrencyShares: 7, lendablePercent: 10 } });
    expect(keptByAdministrator('PriorityLevelConfiguration', 'exempt', undefined, wanted)).toEqual(wanted);
    const catchAll = defaultPriorityLevels().find((l) => l.name === 'catch-all')!.spec;
    expect(keptByAdministrator('PriorityLevelConfiguration', 'catch-all', { type: 'Limited', limited: { nominalConcurrencyShares: 99 } }, catchAll)).toEqual(catchAll);
  });
  it('has upstream 1.32 mandatory and suggested sets, each flow schema naming a level that exists', () => {
    const levels = defaultPriorityLevels();
    const schemas = defaultFlowSchemas(createNaming('kubernetes'));
    expect(levels.filter((l) => l.mandatory).map((l) => l.name)).toEqual(['exempt', 'catch-all']);
    expect(schemas.filter((s) => s.mandatory).map((s) => s.name)).toEqual(['exempt', 'catch-all']);
    expect(schemas).toHaveLength(13);
    expect(levels).toHaveLength(8);
    for (const s of schemas) expect(levels.map((l) => l.name)).toContain((s.spec.priorityLevelConfiguration as Obj).name);
    expect(JSON.stringify(defaultFlowSchemas(createNaming('cluster')))).toContain('"coordination.cluster.io"');
  });
});

for (const mode of ['cluster', 'kubernetes'] as const) {
  describe(`a fresh server's priority classes and flow control objects (--naming=${mode})`, () => {
    const naming = createNaming(mode);
    const dataDir = mkdtempSync(join(tmpdir(), 'clusterd-apf-'));
    let t: TestServer | undefined;
    const fc = `/apis/${naming.group('flowcontrol.apiserver.k8s.io')}/v1`;
    const annotation = `apf.${naming.labelDomain}/autoupdate-spec`;
    const start = async () => (t = await startTestServer({ naming: mode, dataDir, storage: 'leveldb' }));
    const get = async (path: string) => (await t!.admin.get(path)).json<Obj>();
    const put = async (path: string, body: Obj) => {
      const r = await t!.admin.put(path, body);
      expect(r.status, r.text()).toBe(200);
    };
    afterAll(async () => {
      await t?.stop();
      rmSync(dataDir, { recursive: true, force: true });
    });

    it('holds the system priority classes and the default APF objects', async () => {
      await start();
      const pcs = await get(`/apis/${naming.group('scheduling.k8s.io')}/v1/priorityclasses`);
      const values = Object.fromEntries((pcs.items as Obj[]).map((p) => [p.metadata.name, p.value]));
      expect(values).toEqual({ 'system-node-critical': 2000001000, 'system-cluster-critical': 2000000000 });
      const schemas = (await get(`${fc}/flowschemas`)).items as Obj[];
      expect(schemas.map((s) => s.metadata.name).sort()).toEqual(defaultFlowSchemas(naming).map((s) => s.name).sort());
      for (const s of schemas) expect(s.metadata.annotations[annotation]).toBe('true');
      const levels = (await get(`${fc}/prioritylevelconfigurations`)).items as Obj[];
      expect(levels.map((s) => s.metadata.name).sort()).toEqual(defaultPriorityLevels().map((s) => s.name).sort());
      const leader = schemas.find((s) => s.metadata.name === 'system-leader-election')!;
      expect(leader.spec.rules[0].resourceRules[0].apiGroups).toEqual([naming.group('coordination.k8s.io')]);
    });

    it('puts back mandatory and autoupdate objects at the next start, and leaves "false" ones changed', async () => {
      const catchAll = await get(`${fc}/flowschemas/catch-all`);
      catchAll.spec.matchingPrecedence = 9999;
      await put(`${fc}/flowschemas/catch-all`, catchAll);
      const global = await get(`${fc}/flowschemas/global-default`);
      global.spec.matchingPrecedence = 9800;
      await put(`${fc}/flowschemas/global-default`, global);
      const sa = await get(`${fc}/flowschemas/service-accounts`);
      sa.spec.matchingPrecedence = 8000;
      sa.metadata.annotations[annotation] = 'false';
      await put(`${fc}/flowschemas/service-accounts`, sa);
      expect((await t!.admin.delete(`${fc}/prioritylevelconfigurations/workload-low`)).status).toBe(200);
      await t!.stop();
      t = undefined;
      await start();
      expect((await get(`${fc}/flowschemas/catch-all`)).spec.matchingPrecedence).toBe(10000);
      expect((await get(`${fc}/flowschemas/global-default`)).spec.matchingPrecedence).toBe(9900);
      expect((await get(`${fc}/flowschemas/service-accounts`)).spec.matchingPrecedence).toBe(8000);
      expect((await get(`${fc}/prioritylevelconfigurations/workload-low`)).spec.limited.nominalConcurrencyShares).toBe(100);
    });
  });
}
