// Real-client conformance: the official Python client (Debian's python3-kubernetes, imported by
// /usr/bin/python3) against a real server process with upstream naming. The scenarios live in
// python/client_scenarios.py and print JSON describing what the client returned: chunked lists
// with limit/_continue, watch.Watch().stream, and create/patch/delete. Issue 7 §2.
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';
import { startStreaming } from './support/streaming-process.js';
import { PYTHON, pythonClientAvailable } from './support/python-client.js';

const SCRIPT = join(dirname(fileURLToPath(import.meta.url)), 'python', 'client_scenarios.py');
const NS = 'python-client';

/** Runs one scenario to completion and parses the JSON it printed last. */
function runScenario<T>(kubeconfig: string, args: string[]): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = spawn(PYTHON, [SCRIPT, '--kubeconfig', kubeconfig, '--namespace', NS, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`client_scenarios.py ${args[0]} exited ${code}:\n${err}\n${out}`));
      resolve(JSON.parse(out.trim().split('\n').at(-1)!) as T);
    });
  });
}

describe.skipIf(!pythonClientAvailable())('python3-kubernetes', () => {
  let server: ServerProcess;
  const configMap = (name: string, labels: Record<string, string>, data: Record<string, string> = {}) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels }, data });

  beforeAll(async () => {
    server = await startServerProcess(['--naming=kubernetes']);
    const ns = await server.admin.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    expect(ns.status).toBeLessThan(300);
  });
  afterAll(async () => {
    expect(await server.stop()).toBe(0);
  });

  it('lists page by page with limit and _continue, every page at the first page’s version', async () => {
    for (let i = 0; i < 11; i++) expect((await server.admin.post(`/api/v1/namespaces/${NS}/configmaps`, configMap(`page-${String(i).padStart(2, '0')}`, { paged: 'yes' }))).status).toBeLessThan(300);
    await server.admin.post(`/api/v1/namespaces/${NS}/configmaps`, configMap('not-paged', {}));
    const { pages } = await runScenario<{ pages: { names: string[]; resourceVersion: string; remainingItemCount: number | null; hasContinue: boolean }[] }>(server.kubeconfig, ['list-chunked', '--selector', 'paged=yes', '--limit', '4']);
    expect(pages.map((p) => p.names)).toEqual([
      ['page-00', 'page-01', 'page-02', 'page-03'],
      ['page-04', 'page-05', 'page-06', 'page-07'],
      ['page-08', 'page-09', 'page-10'],
    ]);
    expect(pages.map((p) => p.hasContinue)).toEqual([true, true, false]);
    expect(new Set(pages.map((p) => p.resourceVersion)).size).toBe(1);
    // remainingItemCount is omitted with a label selector (spec §2.4).
    expect(pages.map((p) => p.remainingItemCount)).toEqual([null, null, null]);
  });

  it('watch.Watch().stream with bookmarks allowed delivers ADDED, MODIFIED and DELETED after the listed version', async () => {
    const script = startStreaming(PYTHON, [SCRIPT, '--kubeconfig', server.kubeconfig, '--namespace', NS, 'watch', '--selector', 'streamed=yes', '--events', '3']);
    try {
      const ready = await script.waitForOutput(/^\{"ready": "(\d+)"\}$/m);
      const base = `/api/v1/namespaces/${NS}/configmaps`;
      expect((await server.admin.post(base, configMap('streamed', { streamed: 'yes' }, { v: '1' }))).status).toBeLessThan(300);
      expect((await server.admin.post(base, configMap('ignored', {}, { v: '1' }))).status).toBeLessThan(300);
      expect((await server.admin.request('PATCH', `${base}/streamed`, { body: { data: { v: '2' } }, headers: { 'content-type': 'application/merge-patch+json' } })).status).toBe(200);
      expect((await server.admin.delete(`${base}/streamed`)).status).toBe(200);
      expect(await script.exited()).toBe(0);
      const { events } = JSON.parse(script.stdout().trim().split('\n').at(-1)!) as { events: { type: string; name: string; data: Record<string, string>; resourceVersion: string }[] };
      expect(events.map((e) => `${e.type} ${e.name} ${e.data.v}`)).toEqual(['ADDED streamed 1', 'MODIFIED streamed 2', 'DELETED streamed 2']);
      const versions = events.map((e) => Number(e.resourceVersion));
      expect(versions[0]).toBeGreaterThan(Number(ready[1]));
      expect([...versions].sort((a, b) => a - b)).toEqual(versions);
    } finally {
      await script.stop();
    }
  });

  it('creates, reads, patches (strategic and JSON) and deletes ConfigMaps and Deployments', async () => {
    const r = await runScenario<Record<string, unknown>>(server.kubeconfig, ['crud']);
    expect(r.created).toMatchObject({ name: 'py-cm', data: { a: '1' } });
    expect((r.created as { uid: string }).uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(r.read).toEqual({ a: '1' });
    expect(r.strategic).toEqual({ a: '1', b: '2' });
    expect(r.jsonPatch).toEqual({ a: 'changed' });
    expect(r.duplicate).toEqual({ status: 409, reason: 'AlreadyExists' });
    expect(r.afterDelete).toEqual({ status: 404, reason: 'NotFound' });
    expect(r.bare).toEqual({ apiVersion: 'v1', kind: 'ConfigMap', data: { k: 'v' } });
    expect(r.deployment).toEqual({ replicas: 1, strategy: 'RollingUpdate', revisionHistoryLimit: 10 });
    expect(r.deploymentPatched).toEqual({ replicas: 3, images: ['registry.example/py:2'] });
    expect(r.deploymentAfterDelete).toEqual({ status: 404, reason: 'NotFound' });
  });
});
