// e2e/support/server-process owns running the built server (dist/, via bin/clusterd) as a
// real child process for end-to-end tests: start on a free port, wait until it serves, read
// its kubeconfig, stop it gracefully or kill -9 it. Test-only.

import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ApiClient } from '../../internal/testserver/api-client.js';

export const PROJECT_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const ENTRY = join(PROJECT_ROOT, 'dist', 'cmd', 'clusterd', 'main.js');

export interface ServerProcess {
  child: ChildProcess;
  dataDir: string;
  port: number;
  url: string;
  kubeconfig: string;
  admin: ApiClient;
  /** Everything written to stderr so far. */
  logs(): string;
  /** SIGTERM and wait for exit; resolves with the exit code. */
  stop(): Promise<number | null>;
  /** SIGKILL and wait for exit. */
  kill(): Promise<void>;
}

export async function startServerProcess(args: string[] = [], dataDir = mkdtempSync(join(tmpdir(), 'clusterd-e2e-'))): Promise<ServerProcess> {
  if (!existsSync(ENTRY)) throw new Error(`${ENTRY} is missing: run \`make build\` before the e2e tests`);
  const child = spawn(process.execPath, [ENTRY, `--data-dir=${dataDir}`, '--secure-port=0', '--bind-address=127.0.0.1', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  let stdout = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start in time:\n${stderr}`)), 30_000);
    const check = () => {
      const m = /serving at https:\/\/[^:]+:(\d+)/.exec(stdout);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    };
    child.stderr!.on('data', check);
    child.stdout!.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code} before serving:\n${stderr}`));
    });
  });
  const pki = join(dataDir, 'pki');
  const admin = new ApiClient(`https://127.0.0.1:${port}`, {
    caPem: readFileSync(join(pki, 'ca.crt'), 'utf8'),
    certPem: readFileSync(join(pki, 'admin.crt'), 'utf8'),
    keyPem: readFileSync(join(pki, 'admin.key'), 'utf8'),
  });
  return {
    child,
    dataDir,
    port,
    url: `https://127.0.0.1:${port}`,
    kubeconfig: join(dataDir, 'admin.kubeconfig'),
    admin,
    logs: () => stderr,
    async stop() {
      admin.close();
      child.kill('SIGTERM');
      return exited;
    },
    async kill() {
      admin.close();
      child.kill('SIGKILL');
      await exited;
    },
  };
}
