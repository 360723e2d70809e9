// Three clusterd replicas as real processes, used through the real kubectl with each replica's
// own admin kubeconfig: the member list and readiness every replica reports; an object written
// through one replica read, listed and watched through the others with the same bytes (same
// resourceVersion, uid and managedFields); and writes through a follower while the leader is
// killed with SIGKILL, whose answers must be success, 503 (never proposed: the object must not
// appear) or 504 (outcome unknown), with every acknowledged write present afterwards.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClusterProcess, sleep, type MemberStatus } from './support/cluster-process.js';
import { RequestFailure } from './support/https-client.js';
import { kubectl, kubectlAvailable, kubectlOk } from './support/kubectl.js';

describe.skipIf(!kubectlAvailable())('three replicas through kubectl', () => {
  let cluster: ClusterProcess;
  const k = (replica: string, ...args: string[]) => kubectl(cluster.kubeconfig(replica), args);
  const ok = (replica: string, ...args: string[]): Promise<string> => kubectlOk(cluster.kubeconfig(replica), args, replica);

  beforeAll(async () => {
    cluster = await ClusterProcess.started();
  });
  afterAll(async () => {
    await cluster?.destroy();
  });

  it('every replica lists the three members with one leader, its API and peer addresses', async () => {
    // Each replica publishes its member record (name, API address) once a second after it
    // starts: until then the list shows its numeric id. Wait for all three records.
    await cluster.publishedMembers(cluster.names[0]!);
    const views = new Map<string, MemberStatus[]>();
    for (const name of cluster.names) {
      const list = JSON.parse(await ok(name, 'get', '--raw', '/cluster/v1/members')) as { kind: string; members: MemberStatus[] };
      expect(list.kind).toBe('MemberList');
      views.set(name, list.members);
    }
    for (const [via, members] of views) {
      expect(members.map((m) => m.name).sort(), via).toEqual(['a', 'b', 'c']);
      expect(members.filter((m) => m.role === 'leader'), via).toHaveLength(1);
      expect(members.filter((m) => m.role === 'follower'), via).toHaveLength(2);
      for (const m of members) {
        expect(m.apiAddress, via).toBe(cluster.url(m.name));
        expect(m.peerAddress, via).toBe(cluster.peerAddress(m.name));
        expect(m.id).toBeGreaterThan(0);
      }
    }
    const leaders = [...views.values()].map((ms) => ms.find((m) => m.role === 'leader')!.name);
    expect(new Set(leaders).size).toBe(1);
    expect(await cluster.leader()).toBe(leaders[0]);
  });

  it('readyz?verbose reports the raft and config-hash checks ok on every replica', async () => {
    for (const name of cluster.names) {
      const out = await ok(name, 'get', '--raw', '/readyz?verbose');
      expect(out, name).toContain('[+]raft ok');
      expect(out, name).toContain('[+]config-hash ok');
      expect(out, name).toContain('[+]poststarthook/rbac/bootstrap-roles ok');
      expect(out, name).toContain('readyz check passed');
      expect((await ok(name, 'get', '--raw', '/livez')).trim()).toBe('ok');
    }
  });

  it('every replica counts the Raft messages it sent and the socket writes that carried them', async () => {
    for (const name of cluster.names) {
      const text = await ok(name, 'get', '--raw', '/metrics');
      const value = (metric: string): number => Number(new RegExp(`^${metric} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
      const messages = value('clusterd_raft_messages_sent_total');
      const frames = value('clusterd_raft_peer_frames_sent_total');
      // Heartbeats and their answers flow from the start; a frame carries at least one message.
      expect(frames, name).toBeGreaterThan(0);
      expect(frames, name).toBeLessThanOrEqual(messages);
    }
  });

  it('every replica holds the same reconciled bootstrap RBAC policy (same objects, same versions)', async () => {
    const listed = await Promise.all(cluster.names.map((n) => ok(n, 'get', 'clusterroles,clusterrolebindings', '-l', 'cluster.io/bootstrapping=rbac-defaults', '-o', 'jsonpath={range .items[*]}{.kind}/{.metadata.name}@{.metadata.resourceVersion}{"\\n"}{end}')));
    expect(listed[0]!.split('\n').filter(Boolean).length).toBeGreaterThan(100);
    for (const l of listed) expect(l).toBe(listed[0]);
  });

  it('an object written through one replica is read and listed with the same bytes through the others', async () => {
    const leader = (await cluster.leader())!;
    const follower = cluster.names.find((n) => n !== leader)!;
    // Created through a follower (the proposal travels to the leader inside Raft)...
    await ok(follower, 'create', 'configmap', 'shared', '--from-literal=greeting=hello', '--from-literal=via=follower');
    const reads = new Map<string, string>();
    for (const name of cluster.names) reads.set(name, await ok(name, 'get', 'configmap', 'shared', '-o', 'json', '--show-managed-fields'));
    const first = JSON.parse(reads.get(follower)!) as { metadata: { uid: string; resourceVersion: string; managedFields: unknown[] }; data: Record<string, string> };
    expect(first.data).toEqual({ greeting: 'hello', via: 'follower' });
    expect(first.metadata.managedFields.length).toBeGreaterThan(0);
    for (const [name, out] of reads) expect(out, `get -o json via ${name}`).toBe(reads.get(follower));

    // ...then changed with server-side apply through the leader: every replica serves the new version.
    const manifest = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'shared', namespace: 'default' }, data: { applied: 'yes' } });
    const r = await kubectl(cluster.kubeconfig(leader), ['apply', '--server-side', '--field-manager=e2e-applier', '-f', '-'], manifest);
    expect(r.code, r.stderr).toBe(0);
    const after = new Map<string, string>();
    for (const name of cluster.names) after.set(name, await ok(name, 'get', 'configmap', 'shared', '-o', 'json', '--show-managed-fields'));
    const second = JSON.parse(after.get(leader)!) as { metadata: { uid: string; resourceVersion: string; managedFields: Array<{ manager: string }> }; data: Record<string, string> };
    expect(second.metadata.uid).toBe(first.metadata.uid);
    expect(Number(second.metadata.resourceVersion)).toBeGreaterThan(Number(first.metadata.resourceVersion));
    expect(second.metadata.managedFields.map((f) => f.manager)).toContain('e2e-applier');
    for (const [name, out] of after) expect(out, `get -o json via ${name} after apply`).toBe(after.get(leader));

    // Lists agree item for item (the list's own resourceVersion is each read's revision).
    const lists = new Map<string, string>();
    for (const name of cluster.names) {
      const list = JSON.parse(await ok(name, 'get', 'configmaps', '-o', 'json')) as { items: unknown[] };
      lists.set(name, JSON.stringify(list.items));
    }
    for (const [name, items] of lists) expect(items, `list via ${name}`).toBe(lists.get(leader));
    expect(lists.get(leader)).toContain(second.metadata.resourceVersion);
  });

  it('a service-account token minted through one replica authenticates on every other (same PKI)', async () => {
    const [minter, ...others] = cluster.names;
    await ok(minter!, 'create', 'serviceaccount', 'robot');
    const body = JSON.stringify({ apiVersion: 'authentication.cluster.io/v1', kind: 'TokenRequest', spec: {} });
    const minted = await kubectl(cluster.kubeconfig(minter!), ['create', '--raw', '/api/v1/namespaces/default/serviceaccounts/robot/token', '-f', '-'], body);
    expect(minted.code, minted.stderr).toBe(0);
    const token = (JSON.parse(minted.stdout) as { status: { token: string } }).status.token;
    for (const name of others) {
      // The admin kubeconfig's CA, no client certificate: the token is the only credential.
      const ca = Buffer.from(/certificate-authority-data: (\S+)/.exec(readFileSync(cluster.kubeconfig(name), 'utf8'))![1]!, 'base64');
      const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = httpsRequest(`${cluster.url(name)}/apis/authentication.cluster.io/v1/selfsubjectreviews`, { method: 'POST', ca, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' } }, (res) => {
          let text = '';
          res.setEncoding('utf8').on('data', (d: string) => (text += d));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
        });
        req.on('error', reject);
        req.end(JSON.stringify({ apiVersion: 'authentication.cluster.io/v1', kind: 'SelfSubjectReview' }));
      });
      expect(answer.status, `${name}: ${answer.body}`).toBe(200);
      expect((JSON.parse(answer.body) as { status: { userInfo: { username: string } } }).status.userInfo.username, name).toBe('system:serviceaccount:default:robot');
    }
  });

  it('kubectl get -w on every replica prints a change written through another', async () => {
    const watchers: Array<{ name: string; child: ChildProcess; out: () => string; err: () => string }> = [];
    try {
      for (const name of cluster.names) {
        const child = spawn(
          'kubectl',
          [`--kubeconfig=${cluster.kubeconfig(name)}`, 'get', 'configmaps', '-l', 'watched=yes', '--watch-only', '-v=6', '-o', 'jsonpath={.metadata.name}={.metadata.resourceVersion}={.data.step}{"\\n"}'],
          { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, KUBECACHEDIR: `${cluster.kubeconfig(name)}.cache` } },
        );
        let out = '';
        let err = '';
        child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
        child.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
        watchers.push({ name, child, out: () => out, err: () => err });
      }
      const waitFor = async (what: string, pred: () => boolean, ms = 30_000): Promise<void> => {
        const deadline = Date.now() + ms;
        while (!pred()) {
          if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}:\n${watchers.map((w) => `${w.name}: ${w.out()}\n${w.err().slice(-800)}`).join('\n')}`);
          await sleep(50);
        }
      };
      // kubectl -v=6 logs the watch request once the server answered it.
      await waitFor('the watches to start', () => watchers.every((w) => /watch=true\S* 200 OK/.test(w.err())));
      const rvs: string[] = [];
      for (const [step, via] of cluster.names.entries()) {
        const body =
          step === 0
            ? { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'watched', labels: { watched: 'yes' } }, data: { step: String(step) } }
            : { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'watched', labels: { watched: 'yes' }, resourceVersion: rvs[step - 1] }, data: { step: String(step) } };
        const res =
          step === 0
            ? await cluster.http.json<{ metadata: { resourceVersion: string } }>(cluster.url(via), 'POST', '/api/v1/namespaces/default/configmaps', body)
            : await cluster.http.json<{ metadata: { resourceVersion: string } }>(cluster.url(via), 'PUT', '/api/v1/namespaces/default/configmaps/watched', body);
        // clusterd answers a create 200 (its spec §4.4 item 5), an update 200.
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        rvs.push(res.body.metadata.resourceVersion);
      }
      const expected = rvs.map((rv, step) => `watched=${rv}=${step}`).join('\n') + '\n';
      await waitFor('every watch to print the three versions', () => watchers.every((w) => w.out() === expected));
      for (const w of watchers) expect(w.out(), w.name).toBe(expected);
    } finally {
      for (const w of watchers) w.child.kill();
    }
  });

  it('a follower cut off from its peers serves no stale consistent read, refuses writes, and catches up when healed', async () => {
    const leader = await cluster.waitForLeader();
    const cut = cluster.names.find((n) => n !== leader)!;
    const path = '/api/v1/namespaces/default/configmaps/partitioned';
    const created = await cluster.http.json<{ metadata: { resourceVersion: string } }>(cluster.url(leader), 'POST', '/api/v1/namespaces/default/configmaps', {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'partitioned' },
      data: { n: '0' },
    });
    expect(created.status).toBe(200);
    await cluster.waitReady(cut);
    expect((await cluster.http.json<{ data: { n: string } }>(cluster.url(cut), 'GET', path)).body.data.n).toBe('0');

    cluster.isolate(cut);
    let rv = created.body.metadata.resourceVersion;
    for (let n = 1; n <= 10; n++) {
      const r = await cluster.http.json<{ metadata: { resourceVersion: string } }>(cluster.url(leader), 'PUT', path, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'partitioned', resourceVersion: rv },
        data: { n: String(n) },
      });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      rv = r.body.metadata.resourceVersion;
    }
    // The leader sees the cut-off follower fall behind.
    const behind = (await cluster.members(leader)).find((m) => m.name === cut)!;
    expect(behind.lag, JSON.stringify(behind)).toBeGreaterThanOrEqual(10);
    // A consistent read there cannot confirm the leader's commit index: 503, never the stale "0".
    const stale = await cluster.http.request(cluster.url(cut), 'GET', path, undefined, 30_000);
    expect(stale.status, stale.body).toBe(503);
    expect(stale.headers['retry-after']).toBeDefined();
    // A read at any version (resourceVersion=0) may be served from its cache, stale.
    const any = await cluster.http.json<{ data: { n: string } }>(cluster.url(cut), 'GET', `${path}?resourceVersion=0`);
    expect(any.status).toBe(200);
    expect(any.body.data.n).toBe('0');
    // An update there is not acknowledged (503: never proposed, or 504: unknown).
    const write = await cluster.http.request(cluster.url(cut), 'PUT', path, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'partitioned', resourceVersion: rv }, data: { n: 'cut' } }, 30_000);
    expect([503, 504], write.body).toContain(write.status);
    const ready = await cluster.http.request(cluster.url(cut), 'GET', '/readyz?verbose');
    expect(ready.status).toBe(500);
    expect(ready.body).toContain('[-]raft failed');
    expect((await cluster.http.request(cluster.url(cut), 'GET', '/livez')).status).toBe(200);

    cluster.heal(cut);
    await cluster.waitReady(cut);
    const caught = await cluster.http.json<{ metadata: { resourceVersion: string }; data: { n: string } }>(cluster.url(cut), 'GET', path);
    expect(caught.status).toBe(200);
    // 503: certainly not applied; 504: it may have been, after the heal (its precondition held).
    if (write.status === 503) expect(caught.body.data.n).toBe('10');
    else expect(['10', 'cut']).toContain(caught.body.data.n);
    if (caught.body.data.n === '10') expect(caught.body.metadata.resourceVersion).toBe(rv);
  });

  it('writes through a follower while the leader is killed: success, 503 or 504, and no acknowledged write lost', async () => {
    const leader = (await cluster.waitForLeader())!;
    const follower = cluster.names.find((n) => n !== leader)!;
    const outcomes = new Map<string, number | string>();
    let stop = false;
    let seq = 0;
    const writers = Array.from({ length: 6 }, async () => {
      while (!stop) {
        const name = `during-failover-${seq++}`;
        try {
          const r = await cluster.http.request(cluster.url(follower), 'POST', '/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { n: name } }, 30_000);
          outcomes.set(name, r.status === 200 || r.status === 201 ? 'ok' : `${r.status} ${(JSON.parse(r.body) as { reason?: string }).reason ?? ''}`);
        } catch (e) {
          outcomes.set(name, e instanceof RequestFailure ? e.code : String(e));
        }
      }
    });
    await sleep(1500);
    await cluster.kill(leader);
    await sleep(2500);
    await cluster.start(leader);
    await cluster.waitAllReady();
    await sleep(500);
    stop = true;
    await Promise.all(writers);

    const counts: Record<string, number> = {};
    for (const o of outcomes.values()) counts[String(o)] = (counts[String(o)] ?? 0) + 1;
    console.log(`follower ${follower}, killed leader ${leader}: ${JSON.stringify(counts)}`);
    for (const [name, o] of outcomes) {
      expect(['ok', '503 ServiceUnavailable', '504 Timeout', '429 TooManyRequests'], `${name}: ${String(o)}`).toContain(String(o));
    }
    expect(counts.ok).toBeGreaterThan(10);
    for (const via of cluster.names) {
      const list = await cluster.http.json<{ items: Array<{ metadata: { name: string } }> }>(cluster.url(via), 'GET', '/api/v1/namespaces/default/configmaps');
      const present = new Set(list.body.items.map((i) => i.metadata.name));
      for (const [name, o] of outcomes) {
        if (o === 'ok') expect(present.has(name), `acknowledged ${name} missing on ${via}`).toBe(true);
        if (String(o).startsWith('503') || String(o).startsWith('429')) expect(present.has(name), `${name} answered ${String(o)} yet present on ${via}`).toBe(false);
      }
      if (via === leader) {
        const unknown = [...outcomes].filter(([, o]) => String(o).startsWith('504')).map(([n]) => n);
        console.log(`504 (outcome unknown): ${unknown.length}, of which applied: ${unknown.filter((n) => present.has(n)).length}`);
      }
    }
    expect(cluster.unexpectedExits).toEqual([]);
  });
});
