// cmd/clusterd-cluster runs a three-replica cluster on this machine in the foreground (`make
// cluster`): it makes the cluster PKI once, starts the replicas on 127.0.0.1 with their own API
// and peer ports and their data under $CLUSTER_DIR/<name>/, prints how to reach each, prefixes
// their logs with their names, and stops them all on SIGINT/SIGTERM/SIGHUP. A replica that dies is
// not restarted (the others keep running); its printed command line restarts it, and it
// rejoins with its data. Imports: pki (cluster PKI generation).

import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { generateClusterPki } from '../../internal/pki/cluster-pki.js';

const HELP = `Usage: clusterd-cluster [--replicas N]

Starts N (default 3) clusterd replicas on 127.0.0.1 in the foreground, as one cluster.

Environment:
  CLUSTER_DIR        where the PKI (<dir>/pki) and each replica's data (<dir>/<name>/) live (default ./cluster)
  CLUSTER_API_PORT   API port of the first replica; the others take the next ones (default 6443)
  CLUSTER_PEER_PORT  peer (Raft) port of the first replica; the others take the next ones (default 2380)
  CLUSTER_ARGS       extra flags for every replica (for example --naming=kubernetes)

SIGINT, SIGTERM or SIGHUP stops every replica (a second one kills them). A replica that dies is
not restarted.
`;

function main(): void {
  const args = process.argv.slice(2);
  if (args.includes('--help') || args.includes('-h')) {
    process.stdout.write(HELP);
    return;
  }
  let count = 3;
  const i = args.indexOf('--replicas');
  if (i >= 0) {
    count = Number(args[i + 1]);
    if (!Number.isInteger(count) || count < 1 || count > 9) {
      process.stderr.write('clusterd-cluster: --replicas must be 1..9\n');
      process.exit(2);
    }
  } else if (args.length > 0) {
    process.stderr.write(`clusterd-cluster: unexpected argument ${args[0]} (see --help)\n`);
    process.exit(2);
  }
  const dir = resolve(process.env.CLUSTER_DIR ?? './cluster');
  const apiBase = Number(process.env.CLUSTER_API_PORT ?? 6443);
  const peerBase = Number(process.env.CLUSTER_PEER_PORT ?? 2380);
  const extra = (process.env.CLUSTER_ARGS ?? '').split(/\s+/).filter(Boolean);
  const names = Array.from({ length: count }, (_, k) => `clusterd-${k}`);
  const pkiDir = join(dir, 'pki');
  mkdirSync(dir, { recursive: true });
  void run(dir, pkiDir, names, apiBase, peerBase, extra);
}

async function run(dir: string, pkiDir: string, names: string[], apiBase: number, peerBase: number, extra: string[]): Promise<void> {
  if (!existsSync(join(pkiDir, 'join-token'))) process.stdout.write(`making the cluster PKI in ${pkiDir}\n`);
  await generateClusterPki(
    pkiDir,
    names.map((name) => ({ name, hosts: ['127.0.0.1', 'localhost'] })),
  );
  const initial = names.map((n, k) => `${n}=127.0.0.1:${peerBase + k}`).join(',');
  const bin = resolve(dirname(fileURLToPath(import.meta.url)), '../../../bin/clusterd');
  const children = new Map<string, ChildProcess>();
  let stopping = false;
  let joinHintShown = false;
  names.forEach((name, k) => {
    const argv = [
      `--name=${name}`,
      `--data-dir=${join(dir, name)}`,
      `--pki-dir=${pkiDir}`,
      `--initial-cluster=${initial}`,
      `--bind-address=127.0.0.1`,
      `--secure-port=${apiBase + k}`,
      ...extra,
    ];
    // Each replica in a process group of its own: a terminal's Ctrl-C signals the whole
    // foreground group, and a replica that got it as well as the SIGTERM forwarded below took the
    // second signal as "exit now" and skipped its drain.
    const child = spawn(bin, argv, { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    children.set(name, child);
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const m = /^clusterd is serving at (\S+)/.exec(line);
      if (m) {
        process.stdout.write(
          `${name}: serving at ${m[1]}\n` +
            `${name}:   kubectl --kubeconfig ${join(dir, name, 'admin.kubeconfig')} get namespaces\n` +
            `${name}:   restart with: ${bin} ${argv.join(' ')}\n`,
        );
        if (!joinHintShown) {
          joinHintShown = true;
          // Joining needs a token from the running cluster (the PKI's join-token file is only
          // valid for the cluster's first 24 hours).
          // The first name after the replicas started here whose data directory does not exist:
          // one joined and removed earlier left its own, which must not be started again.
          let n = names.length;
          while (existsSync(join(dir, `clusterd-${n}`))) n++;
          process.stdout.write(
            `add a replica: TOKEN=$(${bin} token create --ttl=1h --kubeconfig ${join(dir, name, 'admin.kubeconfig')})\n` +
              `               ${bin} --name=clusterd-${n} --data-dir=${join(dir, `clusterd-${n}`)} --join=${m[1]} --token="$TOKEN" ` +
              `--peer-address=127.0.0.1:${peerBase + n} --bind-address=127.0.0.1 --secure-port=${apiBase + n}\n`,
          );
        }
      }
    });
    createInterface({ input: child.stderr! }).on('line', (line) => process.stderr.write(`[${name}] ${line}\n`));
    child.on('exit', (code, signal) => {
      children.delete(name);
      // The restart line again: the one printed at start may have scrolled away long ago.
      if (!stopping) {
        process.stdout.write(
          `${name}: exited (${signal ?? `code ${code}`}); not restarted, the others keep running\n` +
            `${name}:   restart with: ${bin} ${argv.join(' ')}\n`,
        );
      }
      if (children.size === 0) process.exit(stopping ? 0 : 1);
    });
  });
  const stop = (signal: NodeJS.Signals): void => {
    if (stopping) {
      for (const c of children.values()) c.kill('SIGKILL');
      return;
    }
    stopping = true;
    process.stdout.write(`${signal}: stopping ${children.size} replica(s)\n`);
    for (const c of children.values()) c.kill('SIGTERM');
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  // A closed terminal no longer reaches the replicas' own groups: it stops them through here.
  process.on('SIGHUP', () => stop('SIGHUP'));
  // Nor does the runner's own failure: a replica must not outlive it unnoticed.
  process.on('exit', () => {
    for (const c of children.values()) c.kill('SIGTERM');
  });
}

main();
