// The kustomize manifests of deploy/kustomize (README "On an existing cluster (kustomize)"):
// `kubectl kustomize` renders the base and each overlay, and the rendered objects agree with
// each other (replica count, member list, Service names, probes, the quorum budget); the pod's
// start script, run as the pod runs it, gives every replica flags clusterd's own parser accepts
// and the PKI layout it reads, from a Secret made by pki-secret.sh with the real `clusterd pki`,
// and starts the real clusterd (one founding replica) whose probe paths answer anonymously;
// and a real clusterd accepts every object — server dry run, then for real, read back.
// The server runs with --naming=kubernetes: manifests for a real cluster use upstream names, and
// only that naming serves the *.k8s.io groups and the meta.k8s.io Tables stock kubectl asks for.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { execFile, spawn } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { get } from 'node:https';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { loadAll } from 'js-yaml';
import { parseFlags } from '../internal/config/flags.js';
import { clusterPkiPaths } from '../internal/pki/cluster-pki.js';
import { kubectl, kubectlAvailable } from './support/kubectl.js';
import { PROJECT_ROOT, startServerProcess, type ServerProcess } from './support/server-process.js';

const run = promisify(execFile);
const KUSTOMIZE = join(PROJECT_ROOT, 'deploy', 'kustomize');
const PKI_SECRET = join(KUSTOMIZE, 'pki-secret.sh');
const CLUSTERD = join(PROJECT_ROOT, 'bin', 'clusterd');

// `any`: rendered and live Kubernetes objects, read field by field as kubectl prints them.
type Obj = Record<string, any>;

const renderings: Array<{ dir: string; replicas: number }> = [
  { dir: 'base', replicas: 3 },
  { dir: 'overlays/five-replicas', replicas: 5 },
];

async function render(dir: string): Promise<{ text: string; objects: Obj[] }> {
  const { stdout } = await run('kubectl', ['kustomize', dir], { maxBuffer: 16 << 20 });
  return { text: stdout, objects: loadAll(stdout).filter((o): o is Obj => typeof o === 'object' && o !== null) };
}

function one(objects: Obj[], kind: string, name?: string): Obj {
  const found = objects.filter((o) => o.kind === kind && (name === undefined || o.metadata.name === name));
  expect(found.map((o) => `${o.kind}/${o.metadata.name}`), `exactly one ${kind}${name ? `/${name}` : ''}`).toHaveLength(1);
  return found[0]!;
}

const selects = (selector: Record<string, string>, labels: Record<string, string>) =>
  Object.keys(selector).length > 0 && Object.entries(selector).every(([k, v]) => labels[k] === v);

/** The StatefulSet's clusterd container and the env it gives a pod with this name. */
function podEnv(sts: Obj, podName: string): { container: Obj; env: Record<string, string> } {
  const container = sts.spec.template.spec.containers.find((c: Obj) => c.name === 'clusterd');
  const env: Record<string, string> = {};
  for (const e of container.env as Obj[]) {
    if (e.valueFrom?.fieldRef?.fieldPath === 'metadata.name') env[e.name] = podName;
    else if (typeof e.value === 'string') env[e.name] = e.value;
    else throw new Error(`env ${e.name}: no value the test knows how to give`);
  }
  return { container, env };
}

/** Writes a Secret's data as the kubelet projects it: one file per key. */
function projectSecret(secret: Obj, dir: string): void {
  mkdirSync(dir, { recursive: true });
  for (const [key, value] of Object.entries(secret.data as Record<string, string>)) writeFileSync(join(dir, key), Buffer.from(value, 'base64'));
}

const skip = !kubectlAvailable() && process.env.CI !== 'true';

describe.skipIf(skip)('deploy/kustomize manifests', () => {
  let work: string;
  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), 'clusterd-kustomize-'));
  });
  afterAll(() => {
    rmSync(work, { recursive: true, force: true });
  });

  for (const { dir, replicas } of renderings) {
    describe(dir, () => {
      let objects: Obj[];
      let sts: Obj;
      beforeAll(async () => {
        ({ objects } = await render(join(KUSTOMIZE, dir)));
        sts = one(objects, 'StatefulSet', 'clusterd');
      });

      it(`renders the StatefulSet (${replicas} replicas), two Services, the budget and the ConfigMaps, all agreeing`, () => {
        expect(new Set(objects.map((o) => `${o.apiVersion} ${o.kind}`))).toEqual(
          new Set(['apps/v1 StatefulSet', 'v1 Service', 'policy/v1 PodDisruptionBudget', 'v1 ConfigMap']),
        );
        expect(sts.spec.replicas).toBe(replicas);
        // A replica is ready only once a quorum exists: OrderedReady would never start the second.
        expect(sts.spec.podManagementPolicy).toBe('Parallel');
        const labels = sts.spec.template.metadata.labels as Record<string, string>;
        expect(selects(sts.spec.selector.matchLabels, labels)).toBe(true);

        const services = objects.filter((o) => o.kind === 'Service');
        expect(services).toHaveLength(2);
        const headless = one(objects, 'Service', sts.spec.serviceName);
        expect(headless.spec.clusterIP).toBe('None');
        expect(headless.spec.publishNotReadyAddresses).toBe(true);
        expect(selects(headless.spec.selector, labels)).toBe(true);
        const client = services.find((s) => s !== headless)!;
        expect(client.spec.type ?? 'ClusterIP').toBe('ClusterIP');
        expect(client.spec.clusterIP).toBeUndefined();
        expect(selects(client.spec.selector, labels)).toBe(true);

        const { container, env } = podEnv(sts, `clusterd-0`);
        const ports = new Map((container.ports as Obj[]).map((p) => [p.name, p.containerPort]));
        expect(headless.spec.ports.map((p: Obj) => p.targetPort).sort()).toEqual(['https', 'peer']);
        expect(client.spec.ports.map((p: Obj) => p.targetPort)).toEqual(['https']);
        expect(String(ports.get('peer'))).toBe(env.CLUSTERD_PEER_PORT);
        expect(env.CLUSTERD_REPLICAS).toBe(String(replicas));
        expect(env.CLUSTERD_PEER_SERVICE).toBe(headless.metadata.name);

        // Every volume's ConfigMap is rendered; the Secret is the one pki-secret.sh makes.
        const volumes = sts.spec.template.spec.volumes as Obj[];
        for (const v of volumes.filter((v) => v.configMap)) one(objects, 'ConfigMap', v.configMap.name);
        expect(volumes.filter((v) => v.secret).map((v) => v.secret.secretName)).toEqual(['clusterd-pki']);
        expect(sts.spec.volumeClaimTemplates.map((c: Obj) => c.metadata.name)).toEqual(
          (container.volumeMounts as Obj[]).filter((m) => !volumes.some((v) => v.name === m.name)).map((m) => m.name),
        );

        const pdb = one(objects, 'PodDisruptionBudget');
        expect(selects(pdb.spec.selector.matchLabels, labels)).toBe(true);
        // minAvailable rounds up (as the disruption controller does) to exactly a quorum.
        const min = pdb.spec.minAvailable;
        const minPods = typeof min === 'string' ? Math.ceil((replicas * Number(min.replace(/%$/, ''))) / 100) : min;
        expect(minPods).toBe(Math.floor(replicas / 2) + 1);
      });

      it('probes /livez and /readyz over HTTPS, with resources and a non-root security context', () => {
        const { container } = podEnv(sts, 'clusterd-0');
        const probe = (p: Obj | undefined) => p && { path: p.httpGet?.path, scheme: p.httpGet?.scheme, port: p.httpGet?.port };
        expect(probe(container.livenessProbe)).toEqual({ path: '/livez', scheme: 'HTTPS', port: 'https' });
        expect(probe(container.startupProbe)).toEqual({ path: '/livez', scheme: 'HTTPS', port: 'https' });
        expect(probe(container.readinessProbe)).toEqual({ path: '/readyz', scheme: 'HTTPS', port: 'https' });
        expect((container.ports as Obj[]).find((p) => p.name === 'https')?.containerPort).toBe(6443);
        expect(container.args).toContain('--secure-port=6443');
        expect(Object.keys(container.resources.requests).sort()).toEqual(['cpu', 'memory']);
        expect(Object.keys(container.resources.limits).sort()).toEqual(['cpu', 'memory']);
        expect(sts.spec.template.spec.securityContext.runAsNonRoot).toBe(true);
        expect(sts.spec.template.spec.securityContext.runAsUser).toBeGreaterThan(0);
        expect(container.securityContext.allowPrivilegeEscalation).toBe(false);
      });

      it('mounts the authentication and authorization files clusterd is pointed at, in upstream formats', () => {
        const { container } = podEnv(sts, 'clusterd-0');
        const volumes = sts.spec.template.spec.volumes as Obj[];
        expect(container.args).toContain('--naming=kubernetes');
        for (const [flag, kind] of [
          ['--authentication-config', 'AuthenticationConfiguration'],
          ['--authorization-config', 'AuthorizationConfiguration'],
        ] as const) {
          const path = (container.args as string[]).find((a) => a.startsWith(`${flag}=`))?.slice(flag.length + 1);
          expect(path, flag).toBeDefined();
          const mount = (container.volumeMounts as Obj[]).find((m) => path!.startsWith(`${m.mountPath}/`));
          expect(mount, `${flag}: a mount holding ${path}`).toBeDefined();
          const configMap = one(objects, 'ConfigMap', volumes.find((v) => v.name === mount!.name)!.configMap.name);
          const file = (loadAll(configMap.data[path!.slice(mount!.mountPath.length + 1)]) as Obj[])[0]!;
          expect(file.kind).toBe(kind);
          expect(file.apiVersion).toMatch(/^apiserver\.config\.k8s\.io\/v1(beta1)?$/);
        }
      });

      it('start script: each replica gets its name, the same member list of every replica, and its own certificates', async () => {
        const pki = join(work, `pki-${replicas}`);
        const { stdout } = await run(PKI_SECRET, ['--replicas', String(replicas), '--namespace', 'ns1', pki], {
          env: { ...process.env, CLUSTERD },
        });
        const secret = (loadAll(stdout) as Obj[])[0]!;
        expect(secret.kind).toBe('Secret');
        expect(secret.metadata.name).toBe('clusterd-pki');
        const secretDir = join(work, `secret-${replicas}`);
        projectSecret(secret, secretDir);

        const script = join(work, `start-${replicas}.sh`);
        const startMap = one(objects, 'ConfigMap', (sts.spec.template.spec.volumes as Obj[]).find((v) => v.name === 'start')?.configMap.name);
        writeFileSync(script, startMap.data['start.sh']);
        const stub = join(work, 'clusterd-stub');
        writeFileSync(stub, '#!/bin/sh\nfor a in "$@"; do printf "%s\\n" "$a"; done\n');
        chmodSync(stub, 0o755);

        const { container } = podEnv(sts, 'clusterd-0');
        expect(container.command).toEqual(['/bin/sh', `${(container.volumeMounts as Obj[]).find((m) => m.name === 'start')?.mountPath}/start.sh`]);
        const lists = new Set<string>();
        for (let k = 0; k <= replicas; k++) {
          const name = `clusterd-${k}`;
          const { env } = podEnv(sts, name);
          const pkiDir = join(work, `pod-${replicas}-${k}`);
          const child = run('/bin/sh', [script, ...container.args], {
            env: { PATH: process.env.PATH, ...env, CLUSTERD_PKI_SECRET_DIR: secretDir, CLUSTERD_PKI_DIR: pkiDir, CLUSTERD_BIN: stub },
          });
          if (k === replicas) {
            // One past the founding replicas (a scaled-up StatefulSet): refused, saying why.
            await expect(child).rejects.toMatchObject({ stderr: expect.stringContaining(`${name} is not one of the ${replicas} founding replicas`) });
            continue;
          }
          const argv = (await child).stdout.split('\n').filter(Boolean);
          const config = parseFlags(argv);
          if (config === 'help') throw new Error('start script asked for --help');
          expect(config.name).toBe(name);
          expect(config.initialCluster.map((m) => m.name)).toEqual(Array.from({ length: replicas }, (_, i) => `clusterd-${i}`));
          lists.add(JSON.stringify(config.initialCluster));
          const [host, port] = config.peerAddress!.split(':');
          expect(host).toBe(`${name}.${env.CLUSTERD_PEER_SERVICE}`);
          expect(port).toBe(env.CLUSTERD_PEER_PORT);
          expect(config.peerBindAddress).toBe('0.0.0.0');
          expect(config.dataDir).toBe((container.volumeMounts as Obj[]).find((m) => m.name === 'data')?.mountPath);

          // The layout --pki-dir is read in, with this replica's certificates naming its peer
          // address (peers verify it) and the client Service.
          const paths = clusterPkiPaths(config.pkiDir!, name);
          for (const [key, file] of Object.entries(paths)) if (key !== 'dir' && key !== 'replicaDir') expect(existsSync(file), `${key}: ${file}`).toBe(true);
          expect(realpathSync(paths.serverCert)).toBe(realpathSync(join(secretDir, `replicas.${name}.apiserver.crt`)));
          const peerCert = new X509Certificate(readFileSync(paths.peerCert));
          expect(peerCert.checkHost(host!)).toBe(host);
          const servingCert = new X509Certificate(readFileSync(paths.serverCert));
          expect(servingCert.checkHost('clusterd.ns1.svc')).toBe('clusterd.ns1.svc');
          expect(servingCert.checkHost(`${name}.${env.CLUSTERD_PEER_SERVICE}.ns1.svc.cluster.local`)).toBeDefined();
          expect(peerCert.verify(new X509Certificate(readFileSync(paths.peerCaCert)).publicKey)).toBe(true);
        }
        expect(lists.size).toBe(1);
      });
    });
  }

  it('start.sh runs the real clusterd on the Secret-projected PKI and the rendered files; the probes answer anonymously', async () => {
    // One founding replica (CLUSTERD_REPLICAS=1): its peer address, clusterd-0.clusterd-peer,
    // resolves only inside a cluster, and a lone member never dials it. Everything else is the
    // base's pod: its script, its args (mount paths moved under a temporary directory, the
    // listeners moved to loopback and free ports), its ConfigMaps' files, the Secret's keys.
    const { objects } = await render(join(KUSTOMIZE, 'base'));
    const sts = one(objects, 'StatefulSet', 'clusterd');
    const { container, env } = podEnv(sts, 'clusterd-0');
    const root = join(work, 'real');
    const mounts = container.volumeMounts as Obj[];
    for (const v of sts.spec.template.spec.volumes as Obj[]) {
      if (!v.configMap) continue;
      mkdirSync(join(root, v.name), { recursive: true });
      for (const [file, text] of Object.entries(one(objects, 'ConfigMap', v.configMap.name).data as Record<string, string>)) writeFileSync(join(root, v.name, file), text);
    }
    const secret = (loadAll((await run(PKI_SECRET, ['--replicas', '1', join(root, 'pki')], { env: { ...process.env, CLUSTERD } })).stdout) as Obj[])[0]!;
    projectSecret(secret, join(root, 'secret'));
    const relocate = (arg: string) => {
      const m = mounts.find((m) => arg.includes(`=${m.mountPath}`));
      return m ? arg.replace(`=${m.mountPath}`, `=${join(root, m.name)}`) : arg;
    };
    const args = [...(container.args as string[]).map(relocate), '--bind-address=127.0.0.1', '--secure-port=0', '--peer-bind-address=127.0.0.1'];
    expect(args.filter((a) => a.includes('/etc/clusterd') || a.includes('/var/lib/clusterd'))).toEqual([]);
    const startMount = mounts.find((m) => m.name === 'start')!;
    const child = spawn('/bin/sh', [join(root, startMount.name, 'start.sh'), ...args], {
      env: {
        PATH: process.env.PATH,
        ...env,
        CLUSTERD_REPLICAS: '1',
        CLUSTERD_PEER_PORT: String(await freePort()),
        CLUSTERD_PKI_SECRET_DIR: join(root, 'secret'),
        CLUSTERD_PKI_DIR: join(root, 'pod-pki'),
        CLUSTERD_BIN: CLUSTERD,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let errText = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (errText += d));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      const url = await waitFor(() => /serving at (https:\/\/127\.0\.0\.1:\d+)/.exec(out)?.[1], () => `clusterd did not serve:\n${errText}`);
      expect(errText).toContain('"naming":"kubernetes"');
      const ca = readFileSync(join(root, 'pki', 'ca.crt'));
      // The kubelet's probes present no client certificate; the serving certificate is the
      // replica's own from the Secret (checked against the cluster CA for 127.0.0.1).
      expect(await anonymousGet(`${url}/livez`, ca)).toEqual({ status: 200, body: 'ok' });
      expect(await waitFor(async () => ((await anonymousGet(`${url}/readyz`, ca)).status === 200 ? 'ready' : undefined), () => `never ready:\n${errText}`)).toBe('ready');
      // Past the health checks an anonymous caller gets nothing (401 where the anonymous
      // conditions are applied, 403 from authorization otherwise).
      expect([401, 403]).toContain((await anonymousGet(`${url}/api/v1/namespaces`, ca)).status);
    } finally {
      child.kill('SIGTERM');
    }
    // exec: the shell became clusterd, so SIGTERM reached the server, which stops cleanly.
    expect(await exited).toBe(0);
  });

  it('an overlay sets the image and namespace with the usual kustomize fields', async () => {
    const dir = join(work, 'user-overlay');
    mkdirSync(dir);
    writeFileSync(
      join(dir, 'kustomization.yaml'),
      [
        'resources:',
        `- ${relative(dir, join(KUSTOMIZE, 'overlays', 'five-replicas'))}`,
        'namespace: clusterd-test',
        'images:',
        '- name: clusterd',
        '  newName: registry.example.com/clusterd',
        '  newTag: 1.2.3',
        '',
      ].join('\n'),
    );
    const { objects } = await render(dir);
    const sts = one(objects, 'StatefulSet', 'clusterd');
    expect(sts.spec.template.spec.containers.map((c: Obj) => c.image)).toEqual(['registry.example.com/clusterd:1.2.3']);
    expect(new Set(objects.map((o) => o.metadata.namespace))).toEqual(new Set(['clusterd-test']));
    expect(podEnv(sts, 'clusterd-0').env.CLUSTERD_REPLICAS).toBe('5');
  });

  describe('against a running clusterd (--naming=kubernetes)', () => {
    let server: ServerProcess;
    const k = (args: string[], input?: string) => kubectl(server.kubeconfig, args, input);
    let secretYaml: string;
    beforeAll(async () => {
      server = await startServerProcess(['--naming=kubernetes']);
      secretYaml = (await run(PKI_SECRET, ['--replicas', '5', join(work, 'pki-server')], { env: { ...process.env, CLUSTERD } })).stdout;
    });
    afterAll(async () => {
      await server?.stop();
    });

    it('accepts every object of each rendering and the PKI Secret (server dry run)', async () => {
      for (const { dir } of renderings) {
        const { text, objects } = await render(join(KUSTOMIZE, dir));
        const all = `${text}\n---\n${secretYaml}`;
        const result = await k(['apply', '--dry-run=server', '-f', '-'], all);
        expect(result.stderr, dir).toBe('');
        expect(result.code, dir).toBe(0);
        const expected = [...objects, (loadAll(secretYaml) as Obj[])[0]!].map((o) => `${kindWord(o)}/${o.metadata.name} created (server dry run)`);
        expect(result.stdout.trim().split('\n').sort(), dir).toEqual(expected.sort());
      }
      // Nothing was stored.
      const stored = await k(['get', 'statefulsets,services,poddisruptionbudgets,configmaps,secrets', '-o', 'name']);
      expect(stored.code).toBe(0);
      expect(stored.stdout.split('\n').filter((n) => n.includes('/clusterd'))).toEqual([]);
    });

    it('applies the base and the Secret for real, and reads each object back', async () => {
      const { text, objects } = await render(join(KUSTOMIZE, 'base'));
      const secret = (loadAll(secretYaml) as Obj[])[0]!;
      const result = await k(['apply', '-f', '-'], `${text}\n---\n${secretYaml}`);
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      const applied = [...objects, secret];
      const got = await k(['get', ...applied.map((o) => `${kindWord(o)}/${o.metadata.name}`), '-o', 'json']);
      expect(got.stderr).toBe('');
      expect(got.code).toBe(0);
      const items = (JSON.parse(got.stdout) as Obj).items as Obj[];
      expect(items.map((i) => `${i.kind}/${i.metadata.name}`)).toEqual(applied.map((o) => `${o.kind}/${o.metadata.name}`));
      for (const [n, o] of applied.entries()) {
        const live = items[n]!;
        expect(live.metadata.uid).toMatch(/^[0-9a-f-]{36}$/);
        // What was applied is what is read back (the server adds defaults, never changes a value).
        if (o.spec) expect(live.spec).toMatchObject(o.spec);
        if (o.data) expect(live.data).toEqual(o.data);
        expect(live.metadata.labels ?? {}).toEqual(o.metadata.labels ?? {});
      }
      const sts = items.find((i) => i.kind === 'StatefulSet')!;
      expect(sts.spec.replicas).toBe(3);
      expect(sts.spec.template.spec.containers[0].env.find((e: Obj) => e.name === 'CLUSTERD_REPLICAS').value).toBe('3');
      // Applying the same rendering again changes nothing for the objects without defaulted lists.
      const again = await k(['apply', '-f', '-'], text);
      expect(again.code).toBe(0);
      for (const o of objects.filter((o) => o.kind === 'ConfigMap' || o.kind === 'Service')) {
        expect(again.stdout).toContain(`${kindWord(o)}/${o.metadata.name} unchanged`);
      }
    });
  });
});

/** kubectl's resource word in "kind.group/name" output lines. */
function kindWord(o: Obj): string {
  const group = String(o.apiVersion).includes('/') ? String(o.apiVersion).split('/')[0] : '';
  return `${String(o.kind).toLowerCase()}${group ? `.${group}` : ''}`;
}

/** A free port on 127.0.0.1 below the ephemeral range, so no client socket takes it meanwhile. */
async function freePort(): Promise<number> {
  const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || 32768;
  for (let i = 0; i < 100; i++) {
    const port = 10_000 + Math.floor(Math.random() * (low - 10_000));
    const free = await new Promise<boolean>((resolve) => {
      const s = createServer();
      s.once('error', () => resolve(false));
      s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
    });
    if (free) return port;
  }
  throw new Error('no free port');
}

/** Polls `f` until it gives a value (30 s at most). */
async function waitFor<T>(f: () => T | undefined | Promise<T | undefined>, why: () => string): Promise<T> {
  for (let i = 0; i < 300; i++) {
    const v = await f();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(why());
}

function anonymousGet(url: string, ca: Buffer): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    get(url, { ca, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    }).on('error', reject);
  });
}
