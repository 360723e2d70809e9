// kubectl's list and watch against a real server process: chunked lists (--chunk-size) and
// `get --watch` while another process writes.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { spawn } from 'node:child_process';
import { kubectl, kubectlAvailable } from './support/kubectl.js';
import { startServerProcess, type ServerProcess } from './support/server-process.js';

describe.skipIf(!kubectlAvailable())('kubectl list and watch', () => {
  let server: ServerProcess;
  const k = (...args: string[]) => kubectl(server.kubeconfig, args);
  beforeAll(async () => {
    server = await startServerProcess(['--naming=kubernetes']);
    for (let i = 0; i < 95; i++) {
      const res = await server.admin.post('/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${String(i).padStart(3, '0')}` } });
      expect(res.status).toBe(200);
    }
  });
  afterAll(async () => {
    await server.stop();
  });

  it('get --chunk-size=10 pages through 96 objects (95 written and the CA ConfigMap) in 10 requests and prints them all once', async () => {
    const r = await k('get', 'configmaps', '--chunk-size=10', '-o', 'name', '-v=6');
    // The namespace also holds the root CA ConfigMap the service-account controller keeps there.
    const names = r.stdout.trim().split('\n').filter((n) => n.startsWith('configmap/cm-'));
    expect(names).toHaveLength(95);
    expect(new Set(names).size).toBe(95);
    expect(names[0]).toBe('configmap/cm-000');
    expect(names[94]).toBe('configmap/cm-094');
    const requests = r.stderr.split('\n').filter((l) => /GET https:\/\/\S+\/api\/v1\/namespaces\/default\/configmaps\?\S*limit=10/.test(l));
    expect(requests).toHaveLength(10);
    expect(requests.slice(1).every((l) => l.includes('continue='))).toBe(true);
  });

  it('get --watch prints changes made by another process', async () => {
    const watcher = spawn('kubectl', [`--kubeconfig=${server.kubeconfig}`, 'get', 'configmaps', '--watch', '--output-watch-events', '-l', 'watched=yes'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    watcher.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    const waitFor = async (pred: () => boolean) => {
      const deadline = Date.now() + 15_000;
      while (!pred()) {
        if (Date.now() > deadline) throw new Error(`kubectl watch printed:\n${out}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    await new Promise((r) => setTimeout(r, 500));
    await k('create', 'configmap', 'live', '--from-literal=a=1');
    await k('label', 'configmap', 'live', 'watched=yes');
    await waitFor(() => /ADDED\s+live/.test(out));
    await k('annotate', 'configmap', 'live', 'note=hi');
    await waitFor(() => /MODIFIED\s+live/.test(out));
    await k('delete', 'configmap', 'live');
    await waitFor(() => /DELETED\s+live/.test(out));
    watcher.kill();
    expect(out).toMatch(/^EVENT\s+NAME\s+DATA\s+AGE$/m);
    expect(out.match(/live/g)).toHaveLength(3);
  });
});
