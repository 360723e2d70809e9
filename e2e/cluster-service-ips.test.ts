// Cluster IPs and node ports are unique across replicas (registry/claims.ts), with real
// processes: many Services created concurrently through all three replicas never share a
// cluster IP or a node port, and when every replica is asked for the same IP or port at the
// same moment exactly one create succeeds — each replica's own cache cannot know of the
// others' creates in time, only the claim in the replicated write can.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClusterProcess } from './support/cluster-process.js';

interface ServiceBody {
  metadata: { name: string };
  spec: { clusterIP: string; ports: { nodePort?: number }[] };
}

describe('service addresses across three replicas', () => {
  let cluster: ClusterProcess;
  const path = '/api/v1/namespaces/default/services';
  const svc = (name: string, spec: Record<string, unknown> = {}) => ({ apiVersion: 'v1', kind: 'Service', metadata: { name }, spec: { ports: [{ port: 80 }], ...spec } });

  /**
   * POSTs as a careful client does when the leader changes under the burst (it does on this
   * loaded host): a 503 or 429 with Retry-After (never proposed) is retried; so is a 504 (may
   * have been applied), and then an AlreadyExists means the earlier attempt was.
   */
  const post = async (replica: string, body: unknown) => {
    let unknownBefore = false;
    for (let attempt = 0; ; attempt++) {
      const r = await cluster.http.request(cluster.url(replica), 'POST', path, body, 60_000);
      if (r.status === 409 && unknownBefore) return { ...r, status: 200 };
      const retry = ((r.status === 503 || r.status === 429) && r.headers['retry-after'] !== undefined) || r.status === 504;
      if (!retry || attempt >= 10) return r;
      unknownBefore ||= r.status === 504;
      await new Promise((done) => setTimeout(done, 1000));
    }
  };

  beforeAll(async () => {
    cluster = await ClusterProcess.started();
  }, 120_000);
  afterAll(async () => {
    await cluster?.destroy();
  });

  it('services created concurrently through every replica get distinct cluster IPs and node ports', async () => {
    const perReplica = 30;
    const results = await Promise.all(
      cluster.names.flatMap((replica) =>
        Array.from({ length: perReplica }, (_, i) =>
          post(replica, svc(`auto-${replica}-${i}`, i % 2 === 0 ? { type: 'NodePort' } : {})),
        ),
      ),
    );
    for (const r of results) expect([200, 201], r.body).toContain(r.status);
    for (const via of cluster.names) {
      const list = await cluster.http.json<{ items: ServiceBody[] }>(cluster.url(via), 'GET', path);
      const services = list.body.items.filter((s) => s.metadata.name.startsWith('auto-'));
      expect(services).toHaveLength(perReplica * cluster.names.length);
      const ips = services.map((s) => s.spec.clusterIP);
      expect(new Set(ips).size, `duplicate cluster IPs via ${via}`).toBe(ips.length);
      const ports = services.flatMap((s) => s.spec.ports.map((p) => p.nodePort).filter((p) => p !== undefined));
      expect(ports).toHaveLength((perReplica / 2) * cluster.names.length);
      expect(new Set(ports).size, `duplicate node ports via ${via}`).toBe(ports.length);
    }
  }, 180_000);

  it('the same requested IP or port asked of every replica at once is given exactly once', async () => {
    for (let round = 0; round < 5; round++) {
      const ip = `10.96.250.${10 + round}`;
      const port = 32700 + round;
      const asks = await Promise.all(
        cluster.names.map((replica, i) =>
          post(replica, svc(`ip-${round}-${replica}`, { clusterIP: ip })).then((r) => ({ r, i })),
        ),
      );
      const portAsks = await Promise.all(
        cluster.names.map((replica) =>
          post(replica, svc(`port-${round}-${replica}`, { type: 'NodePort', ports: [{ port: 80, nodePort: port }] })),
        ),
      );
      for (const [what, rs] of [
        [ip, asks.map((a) => a.r)],
        [String(port), portAsks],
      ] as const) {
        const ok = rs.filter((r) => r.status === 200 || r.status === 201);
        const refused = rs.filter((r) => r.status === 422);
        expect(ok.length, `${what}: ${rs.map((r) => `${r.status} ${r.body.slice(0, 200)}`).join(' | ')}`).toBe(1);
        expect(refused.length).toBe(cluster.names.length - 1);
        for (const r of refused) expect(r.body).toMatch(/already allocated/);
      }
    }
    // Every replica holds the one winner of each value.
    for (const via of cluster.names) {
      const list = await cluster.http.json<{ items: ServiceBody[] }>(cluster.url(via), 'GET', path);
      for (let round = 0; round < 5; round++) {
        expect(list.body.items.filter((s) => s.spec.clusterIP === `10.96.250.${10 + round}`)).toHaveLength(1);
        expect(list.body.items.filter((s) => s.spec.ports.some((p) => p.nodePort === 32700 + round))).toHaveLength(1);
      }
    }
  }, 180_000);
});
