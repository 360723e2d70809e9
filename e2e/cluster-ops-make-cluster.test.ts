// `make cluster` as an operator meets it (issue 13 §6), through the program the target runs
// (dist/cmd/clusterd-cluster): it prints each replica's name, address and kubeconfig; each
// replica's data directory is $CLUSTER_DIR/<name>/ with its admin.kubeconfig; a replica killed
// with SIGKILL is not restarted and the other two keep serving; the printed command line
// restarts it and it rejoins with its data; a kubectl watch through a survivor lives through
// the kill; Ctrl-C in the terminal (SIGINT to the whole foreground process group) stops every
// replica through one orderly shutdown each, and the program.
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import * as net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from './support/server-process.js';
import { sleep } from './support/cluster-process.js';
import { kubectl, kubectlAvailable } from './support/kubectl.js';

const RUNNER = join(PROJECT_ROOT, 'dist', 'cmd', 'clusterd-cluster', 'main.js');
const CLUSTERD = join(PROJECT_ROOT, 'bin', 'clusterd');
const NAMES = ['clusterd-0', 'clusterd-1', 'clusterd-2'];

interface Member {
  name: string;
  role: string;
  peerAddress: string;
  apiAddress: string;
  term: number;
  applied: number;
  lag: number;
}

const portFree = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const s = net.createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });

/** The first of three consecutive free ports on 127.0.0.1, away from `avoid`. */
async function threeFreePorts(avoid: number[] = []): Promise<number> {
  for (let i = 0; i < 200; i++) {
    const base = 20_000 + Math.floor(Math.random() * 8_000);
    if (avoid.some((a) => Math.abs(a - base) < 3)) continue;
    if ((await portFree(base)) && (await portFree(base + 1)) && (await portFree(base + 2))) return base;
  }
  throw new Error('no three consecutive free ports');
}

async function until<T>(what: string, f: () => Promise<T | undefined> | T | undefined, ms = 60_000): Promise<T> {
  const deadline = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const v = await f();
      if (v !== undefined) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await sleep(200);
  }
}

/** `clusterd members -o json` through one replica's kubeconfig. */
function members(kubeconfig: string): Member[] {
  const out = execFileSync(CLUSTERD, ['members', '--kubeconfig', kubeconfig, '-o', 'json'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  return (JSON.parse(out) as { members: Member[] }).members;
}

/** The replica processes the runner started, by name (bin/clusterd execs node: the child is the server). */
function replicaPids(runner: number): Map<string, number> {
  const out = new Map<string, number>();
  let children: string[] = [];
  try {
    children = execFileSync('pgrep', ['-P', String(runner)], { encoding: 'utf8' }).split('\n').filter(Boolean);
  } catch {
    // none left
  }
  for (const pid of children) {
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    const name = cmdline.find((a) => a.startsWith('--name='))?.slice('--name='.length);
    if (name) out.set(name, Number(pid));
  }
  return out;
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe.skipIf(!kubectlAvailable())('make cluster (clusterd-cluster) as an operator uses it', () => {
  let dir: string;
  let runner: ChildProcess;
  let out = '';
  let err = '';
  let restarted: ChildProcess | undefined;
  let exited: Promise<number | null>;
  const kubeconfig = (name: string) => join(dir, name, 'admin.kubeconfig');

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'clusterd-make-cluster-'));
    // What a replica joined and removed in an earlier run left: the hint must not name it.
    mkdirSync(join(dir, 'clusterd-3'));
    const api = await threeFreePorts();
    const peer = await threeFreePorts([api]);
    runner = spawn(process.execPath, [RUNNER], {
      env: { ...process.env, CLUSTER_DIR: dir, CLUSTER_API_PORT: String(api), CLUSTER_PEER_PORT: String(peer) },
      stdio: ['ignore', 'pipe', 'pipe'],
      // A process group of its own, as a shell gives a foreground job: the last test signals it.
      detached: true,
    });
    runner.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
    runner.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
    exited = new Promise((resolve) => runner.on('exit', (code) => resolve(code)));
    await until('three replicas serving', () => (NAMES.every((n) => out.includes(`${n}: serving at https://127.0.0.1:`)) ? true : undefined));
  });

  afterAll(async () => {
    restarted?.kill('SIGKILL');
    if (runner && runner.exitCode === null && runner.signalCode === null) {
      for (const pid of replicaPids(runner.pid!).values()) process.kill(pid, 'SIGKILL');
      runner.kill('SIGKILL');
    }
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('prints each replica\'s name, address and kubeconfig, and keeps its data and admin.kubeconfig in $CLUSTER_DIR/<name>/', () => {
    for (const name of NAMES) {
      expect(out).toMatch(new RegExp(`${name}: serving at https://127\\.0\\.0\\.1:\\d+\\n`));
      expect(out).toContain(`${name}:   kubectl --kubeconfig ${kubeconfig(name)} get namespaces\n`);
      expect(existsSync(kubeconfig(name)), kubeconfig(name)).toBe(true);
      expect(existsSync(join(dir, name, 'store')), `${name}/store`).toBe(true);
    }
    // How to add a replica: a name whose data directory is not there yet.
    expect(out).toContain(`--name=clusterd-4 --data-dir=${join(dir, 'clusterd-4')} --join=https://127.0.0.1:`);
  });

  it('a replica killed with SIGKILL is not restarted, the others keep serving (a kubectl watch through one lives on), and its printed command line rejoins it', async () => {
    const ready = await until('one leader and every member caught up', () => {
      const list = members(kubeconfig('clusterd-0'));
      return list.length === 3 && list.filter((m) => m.role === 'leader').length === 1 && list.every((m) => m.lag === 0) ? list : undefined;
    });
    const victim = ready.find((m) => m.role === 'leader')!.name;
    const others = NAMES.filter((n) => n !== victim);
    const pids = replicaPids(runner.pid!);
    expect([...pids.keys()].sort()).toEqual(NAMES);
    // kubectl 1.32 watching through a survivor, as a user runs it, from before the kill.
    const watch = spawn('kubectl', [`--kubeconfig=${kubeconfig(others[1]!)}`, 'get', 'configmaps', '-w', '-o', 'name', '-v=6'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let watched = '';
    let watchLog = '';
    watch.stdout!.setEncoding('utf8').on('data', (d: string) => (watched += d));
    watch.stderr!.setEncoding('utf8').on('data', (d: string) => (watchLog += d));
    let restart: RegExpExecArray | null;
    try {
      await until('the watch to start', () => (/watch=true\S* 200 OK/.test(watchLog) ? true : undefined));
      process.kill(pids.get(victim)!, 'SIGKILL');
      await until(`${victim}'s exit to be reported`, () => (out.includes(`${victim}: exited (SIGKILL); not restarted`) ? true : undefined));
      restart = new RegExp(`${victim}:   restart with: (.+)\\n`).exec(out.slice(out.indexOf(`${victim}: exited`)));
      expect(restart, 'the exit report repeats the restart command line').not.toBeNull();

      // The other two elect a leader and serve writes and reads; the runner restarts nothing.
      const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'while-down', namespace: 'default' }, data: { k: 'v' } };
      await until('a write through a survivor', async () => {
        const r = await kubectl(kubeconfig(others[0]!), ['create', '-f', '-'], JSON.stringify(cm));
        return r.code === 0 || /AlreadyExists/.test(r.stderr) ? true : undefined;
      });
      const got = await kubectl(kubeconfig(others[1]!), ['get', 'configmap', 'while-down', '-o', 'jsonpath={.data.k}']);
      expect(got.stdout).toBe('v');
      await until('the watch to print the write made after the kill', () => (watched.includes('configmap/while-down\n') ? true : undefined));
      await sleep(2_000);
      expect(watch.exitCode, watchLog.slice(-2000)).toBeNull();
      expect(replicaPids(runner.pid!).has(victim), 'not restarted').toBe(false);
      expect(runner.exitCode).toBeNull();
    } finally {
      watch.kill('SIGKILL');
    }

    // The printed command line, run as it is, rejoins it with its data.
    const argv = restart![1]!.split(' ');
    restarted = spawn(argv[0]!, argv.slice(1), { stdio: 'ignore' });
    const rejoined = await until(`${victim} to rejoin and catch up`, () => {
      const list = members(kubeconfig(others[0]!));
      const m = list.find((x) => x.name === victim);
      return list.some((x) => x.role === 'leader') && m && m.role !== 'learner' && m.lag === 0 ? list : undefined;
    });
    expect(rejoined.map((m) => m.name)).toEqual(NAMES);
    const seen = await until(`the write made while ${victim} was down, read through it`, async () => {
      const r = await kubectl(kubeconfig(victim), ['get', 'configmap', 'while-down', '-o', 'jsonpath={.data.k}']);
      return r.code === 0 ? r.stdout : undefined;
    });
    expect(seen).toBe('v');
  });

  it('Ctrl-C (SIGINT to its process group) stops every replica it runs with one orderly shutdown each, and exits 0', async () => {
    const pids = [...replicaPids(runner.pid!).values()];
    expect(pids.length).toBe(2); // the third is the restarted one, the test's own child
    const errBefore = err.length;
    process.kill(-runner.pid!, 'SIGINT');
    expect(await exited).toBe(0);
    await until('its replicas to exit', () => (pids.every((p) => !alive(p)) ? true : undefined));
    expect(out).toContain('SIGINT: stopping 2 replica(s)');
    // A replica reached by the terminal's signal too took the forwarded one as a second signal
    // and exited without draining.
    expect(err.slice(errBefore)).not.toMatch(/second SIG/);
  });
});
