// e2e/support/docker-deploy owns what the deploy e2e tests need from Docker: whether a daemon
// answers, building the image from deploy/Dockerfile on a locally made base image
// (tools/docker-base-image.sh: no registry is reachable for images), and the environment that
// puts the compose cluster of deploy/docker-compose.yml on the host network at loopback
// addresses and free ports. Test-only.

import { execFile, execFileSync } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { PROJECT_ROOT } from './server-process.js';

export const DEPLOY_DIR = join(PROJECT_ROOT, 'deploy');

export function dockerAnswers(): boolean {
  try {
    execFileSync('docker', ['info'], { stdio: 'ignore', timeout: 20_000 });
    execFileSync('docker-compose', ['version'], { stdio: 'ignore', timeout: 20_000 });
    return true;
  } catch {
    return false;
  }
}

export function run(cmd: string, args: string[], opts: { env?: NodeJS.ProcessEnv; cwd?: string; timeoutMs?: number } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      cmd,
      args,
      { env: opts.env ?? process.env, cwd: opts.cwd ?? PROJECT_ROOT, timeout: opts.timeoutMs ?? 120_000, maxBuffer: 64 << 20 },
      (err, stdout, stderr) => {
        if (err) reject(new Error(`${cmd} ${args.join(' ')}: ${err.message}\n${stderr.slice(-4000)}`));
        else resolve(stdout);
      },
    );
  });
}

/**
 * A docker client and environment that build with BuildKit, which caches by content (the
 * legacy builder copies the whole root for every cached step on the vfs storage driver, minutes
 * per build). Docker 23+ builds with the buildx plugin; Debian's 20.10 client has BuildKit
 * built in behind DOCKER_BUILDKIT=1. A newer client without buildx gets the legacy builder.
 */
function buildkitClient(): { cmd: string; env: NodeJS.ProcessEnv } {
  for (const cmd of ['docker', '/usr/bin/docker']) {
    try {
      execFileSync(cmd, ['buildx', 'version'], { stdio: 'ignore' });
      return { cmd, env: process.env };
    } catch {
      // no buildx plugin for this client
    }
    try {
      const version = execFileSync(cmd, ['version', '--format', '{{.Client.Version}}'], { encoding: 'utf8' }).trim();
      if (Number(version.split('.')[0]) < 23) return { cmd, env: { ...process.env, DOCKER_BUILDKIT: '1' } };
    } catch {
      // not installed
    }
  }
  return { cmd: 'docker', env: { ...process.env, DOCKER_BUILDKIT: '0' } };
}

/** Builds deploy/Dockerfile as `tag` on the local base image; returns the base image's tag. */
export async function buildImage(tag: string): Promise<{ base: string; builder: string }> {
  const base = (await run(join(PROJECT_ROOT, 'tools', 'docker-base-image.sh'), [], { timeoutMs: 300_000 })).trim();
  const client = buildkitClient();
  await run(client.cmd, ['build', '--network', 'host', '--build-arg', `BASE=${base}`, '-f', 'deploy/Dockerfile', '-t', tag, '.'], {
    env: client.env,
    timeoutMs: 900_000,
  });
  return { base, builder: `${client.cmd}${client.env.DOCKER_BUILDKIT ? ` DOCKER_BUILDKIT=${client.env.DOCKER_BUILDKIT}` : ' (buildx)'}` };
}

/** A port nobody listens on at `host` right now. */
export function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, host, () => {
      const addr = s.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      s.close(() => resolve(port));
    });
  });
}

export interface ReplicaAddress {
  name: string;
  host: string;
  apiPort: number;
  peerPort: number;
  url: string;
}

/**
 * Three replicas on loopback addresses of their own (127.<a>.<b>.1-3, random so that runs on a
 * shared machine do not meet) and free ports, and the CLUSTERD_* variables that give them to
 * the compose file.
 */
export async function hostNetworkReplicas(): Promise<{ replicas: ReplicaAddress[]; env: Record<string, string> }> {
  const a = 100 + Math.floor(Math.random() * 100);
  const b = 1 + Math.floor(Math.random() * 250);
  const replicas: ReplicaAddress[] = [];
  const env: Record<string, string> = {};
  for (let i = 0; i < 3; i++) {
    const host = `127.${a}.${b}.${i + 1}`;
    const apiPort = await freePort(host);
    const peerPort = await freePort(host);
    replicas.push({ name: `clusterd-${i}`, host, apiPort, peerPort, url: `https://${host}:${apiPort}` });
    env[`CLUSTERD_${i}_HOST`] = host;
    env[`CLUSTERD_${i}_BIND`] = host;
    env[`CLUSTERD_${i}_ADVERTISE`] = host;
    env[`CLUSTERD_${i}_PORT`] = String(apiPort);
    env[`CLUSTERD_${i}_PEER`] = `${host}:${peerPort}`;
  }
  return { replicas, env };
}

/** The id of the running (or stopped) container of a compose service. */
export async function serviceContainer(project: string, service: string): Promise<string> {
  const out = await run('docker', [
    'ps',
    '-aq',
    '--filter',
    `label=com.docker.compose.project=${project}`,
    '--filter',
    `label=com.docker.compose.service=${service}`,
  ]);
  const ids = out.split('\n').filter(Boolean);
  if (ids.length !== 1) throw new Error(`expected one container for ${project}/${service}, found ${ids.length}`);
  return ids[0];
}

export async function containerHealth(id: string): Promise<string> {
  return (await run('docker', ['inspect', '-f', '{{.State.Status}}/{{if .State.Health}}{{.State.Health.Status}}{{end}}', id])).trim();
}
