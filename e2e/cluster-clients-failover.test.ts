// Real clients on a follower of a three-replica cluster while the leader is killed with SIGKILL
// (issue 13 §2, §3): @kubernetes/client-node's informer and python3-kubernetes' watch.Watch keep
// their one watch through the failover — no relist, no error — and end with exactly the state a
// consistent list shows; a namespace deleted right after the failover is finalized by the new
// leader's controllers; a continue token and an exact list taken on one replica are answered
// the same by every replica, the killed leader included once it is back.
import * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClusterProcess } from './support/cluster-process.js';
import { startStreaming, type StreamingProcess } from './clients/support/streaming-process.js';
import { waitFor } from './clients/support/wait-for.js';
import { PYTHON, pythonClientAvailable } from './clients/support/python-client.js';

const NS = 'clients-failover';

// Lists once, then follows watch.Watch().stream from that version, printing one JSON line per
// list or watch request it makes and per event (the stream re-requests by itself when a
// stream ends, from the last version it saw; a relist would be a second "list" line).
const PYTHON_WATCH = `
import json, sys
from kubernetes import client, config, watch
config.load_kube_config(sys.argv[1])
v1 = client.CoreV1Api()
ns = sys.argv[2]
def out(**kw): print(json.dumps(kw), flush=True)
def counted(*a, **kw):
    out(call="watch" if kw.get("watch") else "list")
    return v1.list_namespaced_config_map(*a, **kw)
out(call="list")
rv = v1.list_namespaced_config_map(ns).metadata.resource_version
out(ready=rv)
for ev in watch.Watch().stream(counted, ns, resource_version=rv):
    o = ev["raw_object"]
    out(type=ev["type"], name=o["metadata"].get("name"), rv=o["metadata"]["resourceVersion"])
`;

interface PyLine {
  call?: string;
  ready?: string;
  type?: string;
  name?: string;
  rv?: string;
}

const configMap = (name: string, data: Record<string, string>) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data });

describe('real clients on a follower through a leader kill -9', () => {
  let cluster: ClusterProcess;
  beforeAll(async () => {
    cluster = await ClusterProcess.started();
  }, 120_000);
  afterAll(async () => {
    await cluster?.destroy();
  });

  /**
   * A write that must land: retried while the answer says it was not made (503/429); a 504
   * (may have been made) is retried too, where a create then hears 409 if the first one landed.
   */
  const write = async (via: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: string }> => {
    let last = { status: 0, body: '' };
    for (let attempt = 0; attempt < 50; attempt++) {
      last = await cluster.http.request(cluster.url(via), method, path, body, 30_000);
      if (![429, 503, 504].includes(last.status)) return last;
      await new Promise((r) => setTimeout(r, 200));
    }
    return last;
  };

  it('client-node informer and python watch.Watch keep one watch each: no relist, no error, the store state at the end', async () => {
    const leader = await cluster.waitForLeader();
    const [follower, other] = cluster.names.filter((n) => n !== leader) as [string, string];
    expect((await write(follower, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } })).status).toBe(200);

    const kc = new k8s.KubeConfig();
    kc.loadFromFile(cluster.kubeconfig(follower));
    const core = kc.makeApiClient(k8s.CoreV1Api);
    let lists = 0;
    const errors: unknown[] = [];
    const informer = k8s.makeInformer(kc, `/api/v1/namespaces/${NS}/configmaps`, () => {
      lists++;
      return core.listNamespacedConfigMap({ namespace: NS });
    });
    informer.on('error', (e) => errors.push(e));
    await informer.start();

    let python: StreamingProcess | undefined;
    const pyLines = (): PyLine[] =>
      (python?.stdout() ?? '')
        .split('\n')
        .filter((l) => l.trim())
        .map((l) => JSON.parse(l) as PyLine);
    if (pythonClientAvailable()) {
      python = startStreaming(PYTHON, ['-c', PYTHON_WATCH, cluster.kubeconfig(follower), NS]);
      await python.waitForOutput(/"ready"/);
    }

    try {
      for (let i = 0; i < 5; i++) expect((await write(follower, 'POST', `/api/v1/namespaces/${NS}/configmaps`, configMap(`before-${i}`, { i: String(i) }))).status).toBe(200);
      await waitFor('the informer to see the writes before the kill', () => informer.list(NS).length >= 6);

      await cluster.kill(leader);
      await cluster.waitForLeader(30_000, leader);

      // After the failover, through both survivors: creates, an update with a resourceVersion
      // precondition, a delete.
      for (let i = 0; i < 6; i++) {
        const r = await write(i % 2 ? other : follower, 'POST', `/api/v1/namespaces/${NS}/configmaps`, configMap(`after-${i}`, { i: String(i) }));
        expect([200, 409], r.body).toContain(r.status);
      }
      const got = await cluster.http.json<{ metadata: { resourceVersion: string } }>(cluster.url(other), 'GET', `/api/v1/namespaces/${NS}/configmaps/before-0`);
      const put = await write(other, 'PUT', `/api/v1/namespaces/${NS}/configmaps/before-0`, { ...configMap('before-0', { i: 'updated' }), metadata: { name: 'before-0', resourceVersion: got.body.metadata.resourceVersion } });
      expect([200, 409], put.body).toContain(put.status);
      expect([200, 404]).toContain((await write(follower, 'DELETE', `/api/v1/namespaces/${NS}/configmaps/before-1`)).status);

      const final = await cluster.http.json<{ metadata: { resourceVersion: string }; items: Array<{ metadata: { name: string; resourceVersion: string } }> }>(cluster.url(follower), 'GET', `/api/v1/namespaces/${NS}/configmaps`);
      const expected = final.body.items.map((o) => `${o.metadata.name}@${o.metadata.resourceVersion}`).sort();
      expect(expected.some((e) => e.startsWith('before-0@'))).toBe(true);
      expect(expected.some((e) => e.startsWith('before-1@'))).toBe(false);

      const informed = (): string[] => informer.list(NS).map((o) => `${o.metadata?.name}@${o.metadata?.resourceVersion}`).sort();
      await waitFor(`the informer to reach ${JSON.stringify(expected)}`, () => JSON.stringify(informed()) === JSON.stringify(expected));
      expect(lists, 'LIST calls of the informer').toBe(1);
      expect(errors).toEqual([]);

      if (python) {
        const pyState = (): string[] => {
          const state = new Map<string, string>();
          for (const l of pyLines()) {
            if (l.type === 'ADDED' || l.type === 'MODIFIED') state.set(l.name!, l.rv!);
            else if (l.type === 'DELETED') state.delete(l.name!);
          }
          return [...state].map(([n, rv]) => `${n}@${rv}`).sort();
        };
        // Python follows changes after its list, which may already hold the namespace's root CA
        // ConfigMap: that one is left out of the comparison.
        const changed = (xs: string[]): string[] => xs.filter((e) => !e.startsWith('cluster-root-ca.crt@'));
        await waitFor(`python's watch to reach ${JSON.stringify(changed(expected))}`, () => JSON.stringify(changed(pyState())) === JSON.stringify(changed(expected)));
        const lines = pyLines();
        console.log(`python on ${follower} (leader ${leader} killed): ${lines.filter((l) => l.type).length} events, requests ${lines.filter((l) => l.call).map((l) => l.call).join(',')}`);
        expect(lines.filter((l) => l.call === 'list'), 'python LIST calls').toHaveLength(1);
        expect(lines.filter((l) => l.type === 'ERROR'), python.stderr()).toEqual([]);
        // In order, each version once.
        const rvs = lines.filter((l) => l.rv !== undefined && l.type !== 'BOOKMARK').map((l) => Number(l.rv));
        expect(rvs).toEqual([...new Set(rvs)].sort((a, b) => a - b));
      }
    } finally {
      await informer.stop();
      await python?.stop();
    }

    // Leader-only work moved with leadership: the new leader's namespace controller empties
    // and removes a namespace deleted now, and every survivor agrees.
    expect((await write(other, 'DELETE', `/api/v1/namespaces/${NS}`)).status).toBe(200);
    for (const via of [follower, other]) {
      await waitFor(`namespace ${NS} to be gone on ${via}`, async () => (await cluster.http.request(cluster.url(via), 'GET', `/api/v1/namespaces/${NS}`)).status === 404, 60_000, 200);
    }
    await cluster.start(leader);
    await cluster.waitReady(leader);
    expect(cluster.unexpectedExits).toEqual([]);
  }, 180_000);

  it('a continue token and an exact list taken on one replica are answered the same by every replica', async () => {
    const ns = 'clients-pages';
    const via = cluster.names[0]!;
    expect((await write(via, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } })).status).toBe(200);
    for (let i = 0; i < 7; i++) expect((await write(cluster.names[i % 3]!, 'POST', `/api/v1/namespaces/${ns}/configmaps`, configMap(`p-${i}`, {}))).status).toBe(200);
    type List = { metadata: { resourceVersion: string; continue?: string }; items: Array<{ metadata: { name: string; resourceVersion: string } }> };
    const first = await cluster.http.json<List>(cluster.url(via), 'GET', `/api/v1/namespaces/${ns}/configmaps?limit=3`);
    const token = first.body.metadata.continue!;
    expect(token).toBeTruthy();
    const at = first.body.metadata.resourceVersion;
    // Changes after the first page: a continued list must not see them.
    expect((await write(via, 'POST', `/api/v1/namespaces/${ns}/configmaps`, configMap('p-late', {}))).status).toBe(200);
    expect((await write(via, 'DELETE', `/api/v1/namespaces/${ns}/configmaps/p-6`)).status).toBe(200);
    const answers = new Map<string, string>();
    for (const name of cluster.names) {
      const next = await cluster.http.json<List>(cluster.url(name), 'GET', `/api/v1/namespaces/${ns}/configmaps?limit=100&continue=${encodeURIComponent(token)}`);
      expect(next.status, `${name}: ${JSON.stringify(next.body)}`).toBe(200);
      expect(next.body.metadata.resourceVersion, name).toBe(at);
      const exact = await cluster.http.json<List>(cluster.url(name), 'GET', `/api/v1/namespaces/${ns}/configmaps?resourceVersion=${at}&resourceVersionMatch=Exact`);
      expect(exact.status, name).toBe(200);
      answers.set(name, JSON.stringify({ next: next.body.items.map((o) => `${o.metadata.name}@${o.metadata.resourceVersion}`), exact: exact.body.items.map((o) => `${o.metadata.name}@${o.metadata.resourceVersion}`) }));
    }
    const [one, ...rest] = [...answers.values()];
    expect(one).toContain('p-6@');
    expect(one).not.toContain('p-late');
    for (const a of rest) expect(a).toBe(one);
  }, 60_000);
});
