// The deploy artefacts, started for real: the image from deploy/Dockerfile (built on a local
// base image, since no registry is reachable for images), the three-replica cluster of
// deploy/docker-compose.yml (on the host network, loopback addresses: compose/host-network.yml)
// driven by testcontainers, kubectl against every replica, and the leader's container killed
// under a write load: no acknowledged write may be lost, and the restarted container rejoins
// and serves every object. Under CI=true a machine without Docker fails the run.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { load } from 'js-yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DockerComposeEnvironment, Wait, type StartedDockerComposeEnvironment } from 'testcontainers';
import { HttpsClient, RequestFailure, type Credentials } from './support/https-client.js';
import { kubectl } from './support/kubectl.js';
import { sleep } from './support/cluster-process.js';
import { buildImage, containerHealth, DEPLOY_DIR, dockerAnswers, hostNetworkReplicas, run, serviceContainer, type ReplicaAddress } from './support/docker-deploy.js';

// testcontainers' reaper is an image from a registry; the tests clean up themselves.
process.env.TESTCONTAINERS_RYUK_DISABLED = 'true';

const IMAGE = 'clusterd:e2e';
const haveDocker = dockerAnswers();
if (!haveDocker && process.env.CI === 'true') throw new Error('Docker (a daemon and docker-compose) is required under CI=true: run tools/ensure-test-deps.sh as root');

interface Member {
  name: string;
  role: string;
}

function kubeconfigCredentials(path: string): Credentials {
  const doc = load(readFileSync(path, 'utf8')) as {
    clusters: { cluster: { 'certificate-authority-data': string } }[];
    users: { user: { 'client-certificate-data': string; 'client-key-data': string } }[];
  };
  const b64 = (s: string) => Buffer.from(s, 'base64').toString('utf8');
  return {
    ca: b64(doc.clusters[0].cluster['certificate-authority-data']),
    cert: b64(doc.users[0].user['client-certificate-data']),
    key: b64(doc.users[0].user['client-key-data']),
  };
}

describe.skipIf(!haveDocker)('deploy: the image and the docker-compose cluster', () => {
  const project = `clusterd-e2e-${process.pid}`;
  let kubeconfigDir: string;
  let replicas: ReplicaAddress[];
  let env: StartedDockerComposeEnvironment | undefined;
  let client: HttpsClient;
  const kubeconfig = (i: number) => join(kubeconfigDir, `clusterd-${i}.kubeconfig`);

  beforeAll(async () => {
    const t0 = Date.now();
    const built = await buildImage(IMAGE);
    console.log(`deploy-compose: image ${IMAGE} built on ${built.base} with ${built.builder} in ${((Date.now() - t0) / 1000).toFixed(1)} s`);

    kubeconfigDir = mkdtempSync(join(tmpdir(), 'clusterd-compose-'));
    const addresses = await hostNetworkReplicas();
    replicas = addresses.replicas;
    const t1 = Date.now();
    env = await new DockerComposeEnvironment(DEPLOY_DIR, ['docker-compose.yml', 'compose/host-network.yml'])
      .withProjectName(project)
      // docker-compose 1.29 is the standalone (v1) binary, not the `docker compose` plugin.
      .withClientOptions({ executable: { standalone: true, executablePath: 'docker-compose' } })
      .withEnvironment({ ...addresses.env, CLUSTERD_IMAGE: IMAGE, CLUSTERD_KUBECONFIG_DIR: kubeconfigDir })
      .withDefaultWaitStrategy(Wait.forHealthCheck())
      .withStartupTimeout(180_000)
      .up();
    console.log(`deploy-compose: cluster healthy (every replica's /readyz) ${((Date.now() - t1) / 1000).toFixed(1)} s after up`);
    client = new HttpsClient(kubeconfigCredentials(kubeconfig(0)));
  }, 1_200_000);

  afterAll(async () => {
    client?.close();
    // down -v: containers, the network and the volumes (PKI and data) go; the image stays cached.
    await env?.down({ removeVolumes: true, timeout: 10_000 });
    if (kubeconfigDir) rmSync(kubeconfigDir, { recursive: true, force: true });
  }, 120_000);

  async function members(via: ReplicaAddress): Promise<Member[]> {
    const r = await client.json<{ members: Member[] }>(via.url, 'GET', '/cluster/v1/members', undefined, 5000);
    if (r.status !== 200) throw new Error(`members via ${via.name}: ${r.status}`);
    return r.body.members;
  }

  it('kubectl reaches every replica with the kubeconfig the init service wrote; a write through one is read through another', async () => {
    for (let i = 0; i < 3; i++) {
      const r = await kubectl(kubeconfig(i), ['get', 'namespaces', '-o', 'name']);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(r.stdout.split('\n')).toEqual(expect.arrayContaining(['namespace/default', 'namespace/kube-system']));
    }
    const created = await kubectl(kubeconfig(0), ['create', 'configmap', 'compose-probe', '--from-literal=written-through=clusterd-0']);
    expect(created.stderr).toBe('');
    expect(created.code).toBe(0);
    const read = await kubectl(kubeconfig(2), ['get', 'configmap', 'compose-probe', '-o', 'jsonpath={.data.written-through}']);
    expect(read).toMatchObject({ code: 0, stdout: 'clusterd-0' });
    const list = await members(replicas[1]);
    expect(list.map((m) => m.name).sort()).toEqual(['clusterd-0', 'clusterd-1', 'clusterd-2']);
    expect(list.filter((m) => m.role === 'leader')).toHaveLength(1);
  });

  it("keeps every acknowledged write when the leader's container is killed under load, and the restarted container rejoins", async () => {
    const ns = 'compose-load';
    const made = await kubectl(kubeconfig(1), ['create', 'namespace', ns]);
    expect(made).toMatchObject({ code: 0, stderr: '' });

    const leaderName = (await members(replicas[0])).find((m) => m.role === 'leader')!.name;
    const leader = replicas.find((r) => r.name === leaderName)!;
    const leaderContainer = await serviceContainer(project, leaderName);

    // Write load: workers create ConfigMaps with unique names through every replica in turn.
    // A name is acknowledged only by a 200; anything else (refused, reset, 503, 504) is not
    // acknowledged and the worker moves on to a new name, so lost = acknowledged but absent.
    const acked: { name: string; sent: number; at: number }[] = [];
    const failures = new Map<string, number>();
    let stop = false;
    let seq = 0;
    const worker = async (w: number) => {
      let turn = w;
      while (!stop) {
        const target = replicas[turn++ % replicas.length];
        const name = `w${w}-${seq++}`;
        const sent = Date.now();
        try {
          const r = await client.request(target.url, 'POST', `/api/v1/namespaces/${ns}/configmaps`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { v: name } }, 10_000);
          if (r.status === 200) acked.push({ name, sent, at: Date.now() }); // a create answers 200 (spec §4.4)
          else failures.set(`${r.status}@${target.name}`, (failures.get(`${r.status}@${target.name}`) ?? 0) + 1);
        } catch (e) {
          const code = `${e instanceof RequestFailure ? e.code : 'ERROR'}@${target.name}`;
          failures.set(code, (failures.get(code) ?? 0) + 1);
          if (e instanceof RequestFailure) client.reset(target.url);
          await sleep(50);
        }
      }
    };
    const workers = Array.from({ length: 4 }, (_, w) => worker(w));
    // Waits for the load to get somewhere; a stalled cluster fails with what the writers saw.
    const until = async (what: string, done: () => boolean, ms: number): Promise<void> => {
      const deadline = Date.now() + ms;
      while (!done()) {
        if (Date.now() > deadline) {
          stop = true;
          await Promise.all(workers);
          throw new Error(`${what} within ${ms} ms: ${acked.length} acknowledged, failures ${JSON.stringify(Object.fromEntries(failures))}`);
        }
        await sleep(50);
      }
    };
    await until('100 writes acknowledged before the kill', () => acked.length >= 100, 60_000);

    const killedAt = Date.now();
    const ackedBeforeKill = acked.length;
    await run('docker', ['kill', leaderContainer]);
    const killReturned = Date.now();
    const survivors = replicas.filter((r) => r !== leader);
    // The writers may each be waiting on a request that was in flight at the kill; a probe
    // sends a create every 100 ms to the survivors in turn, so the first one acknowledged tells
    // how long writes were unavailable. Its creates are checked like the writers'.
    let firstProbeAck: number | undefined;
    const probes: Promise<void>[] = [];
    for (let k = 0; firstProbeAck === undefined; k++) {
      expect(Date.now() - killedAt, 'no write acknowledged after the kill').toBeLessThan(90_000);
      const target = survivors[k % survivors.length];
      const name = `probe-${k}`;
      const sent = Date.now();
      probes.push(
        client.request(target.url, 'POST', `/api/v1/namespaces/${ns}/configmaps`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name } }, 30_000).then(
          (r) => {
            if (r.status !== 200) return;
            acked.push({ name, sent, at: Date.now() });
            firstProbeAck ??= Date.now();
          },
          () => undefined,
        ),
      );
      await sleep(100);
    }
    await Promise.all(probes);
    // Go on until the survivors have acknowledged a good number of writes after the kill.
    await until('100 writes acknowledged after the kill', () => acked.filter((a) => a.at > killedAt).length >= 100, 90_000);
    stop = true;
    await Promise.all(workers);
    const firstAfterKill = acked.find((a) => a.at > killedAt)!;
    // A write sent once the container was dead needed the new leader to commit it.
    const firstSentAfterKill = acked.find((a) => a.sent > killReturned)!;

    const listNames = async (via: ReplicaAddress): Promise<Set<string>> => {
      const r = await client.json<{ items: { metadata: { name: string } }[] }>(via.url, 'GET', `/api/v1/namespaces/${ns}/configmaps`, undefined, 15_000);
      expect(r.status).toBe(200);
      return new Set(r.body.items.map((i) => i.metadata.name));
    };
    for (const via of survivors) {
      const present = await listNames(via);
      const lost = acked.filter((a) => !present.has(a.name)).map((a) => a.name);
      expect(lost, `acknowledged but absent on ${via.name}`).toEqual([]);
    }
    const newLeader = (await members(survivors[0])).find((m) => m.role === 'leader')?.name;
    expect(survivors.map((s) => s.name)).toContain(newLeader);

    // Restart the killed container: it rejoins with its data, becomes ready and serves everything.
    const restartAt = Date.now();
    await run('docker', ['start', leaderContainer]);
    let health = '';
    while (health !== 'running/healthy') {
      expect(Date.now() - restartAt, `restarted ${leaderName} is ${health}`).toBeLessThan(180_000);
      await sleep(1000);
      health = await containerHealth(leaderContainer);
    }
    const rejoinedMs = Date.now() - restartAt;
    client.reset(leader.url);
    const present = await listNames(leader);
    expect(acked.filter((a) => !present.has(a.name)).map((a) => a.name), `acknowledged but absent on the restarted ${leaderName}`).toEqual([]);
    const after = await members(leader);
    expect(after.map((m) => m.name).sort()).toEqual(['clusterd-0', 'clusterd-1', 'clusterd-2']);
    expect(after.filter((m) => m.role === 'leader')).toHaveLength(1);

    console.log(
      `deploy-compose failover: killed leader ${leaderName} (docker kill) under 4 writers through every replica; ` +
        `writes acknowledged ${acked.length} (${ackedBeforeKill} before the kill), lost 0, ` +
        `first acknowledged write ${firstAfterKill.at - killedAt} ms after the kill (any), first acknowledged probe ${firstProbeAck! - killedAt} ms after the kill, ` +
        `first acknowledged writer create sent after the kill ${firstSentAfterKill.at - killedAt} ms after it (docker kill took ${killReturned - killedAt} ms), new leader ${newLeader}; ` +
        `unacknowledged attempts ${JSON.stringify(Object.fromEntries(failures))}; ` +
        `restarted container ready and serving every object ${(rejoinedMs / 1000).toFixed(1)} s after docker start`,
    );
  }, 600_000);
});
