// kubectl's default output comes from server-side Tables (spec §2.5); -o wide adds the
// priority-1 columns. Upstream names, as kubectl's Table request hard-codes meta.k8s.io.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { kubectl, kubectlAvailable } from './support/kubectl.js';
import { startServerProcess, type ServerProcess } from './support/server-process.js';

describe.skipIf(!kubectlAvailable())('kubectl tables (--naming=kubernetes)', () => {
  let server: ServerProcess;
  const k = (...args: string[]) => kubectl(server.kubeconfig, args);
  beforeAll(async () => {
    server = await startServerProcess(['--naming=kubernetes']);
    await k('run', 'web-pod', '--image=nginx:1.27', '--labels=app=web');
    await k('create', 'deployment', 'web', '--image=nginx:1.27', '--replicas=3');
  });
  afterAll(async () => {
    await server.stop();
  });

  it('get pods -o wide shows the pod columns', async () => {
    const r = await k('get', 'pods', '-o', 'wide');
    expect(r.stderr).toBe('');
    const [header, row] = r.stdout.trim().split('\n');
    expect(header!.split(/\s{2,}/)).toEqual(['NAME', 'READY', 'STATUS', 'RESTARTS', 'AGE', 'IP', 'NODE', 'NOMINATED NODE', 'READINESS GATES']);
    expect(row).toMatch(/^web-pod\s+0\/1\s+Pending\s+0\s+\d+s\s+<none>\s+<none>\s+<none>\s+<none>$/);
  });

  it('get deploy shows the deployment columns, -o wide the containers, images and selector', async () => {
    const r = await k('get', 'deploy');
    const [header, row] = r.stdout.trim().split('\n');
    expect(header!.split(/\s{2,}/)).toEqual(['NAME', 'READY', 'UP-TO-DATE', 'AVAILABLE', 'AGE']);
    expect(row).toMatch(/^web\s+0\/3\s+0\s+0\s+\d+s$/);
    const wide = await k('get', 'deploy', '-o', 'wide');
    expect(wide.stdout.split('\n')[0]!.split(/\s{2,}/)).toEqual(['NAME', 'READY', 'UP-TO-DATE', 'AVAILABLE', 'AGE', 'CONTAINERS', 'IMAGES', 'SELECTOR']);
    expect(wide.stdout).toMatch(/nginx\s+nginx:1\.27\s+app=web/);
  });

  it('get ns shows STATUS from the namespace table', async () => {
    const r = await k('get', 'ns', 'default');
    expect(r.stdout).toMatch(/^NAME\s+STATUS\s+AGE\ndefault\s+Active\s+\d+s\n$/);
  });
});
