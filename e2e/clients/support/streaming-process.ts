// e2e/clients/support/streaming-process owns a client process that keeps running and printing
// (kubectl get --watch, a Python watch script): its output so far, waiting until the output
// shows something, and stopping it. Test-only.

import { spawn, type ChildProcess } from 'node:child_process';
import { waitFor } from './wait-for.js';

export interface StreamingProcess {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves once stdout matches `pattern`; rejects with the output after `timeoutMs`. */
  waitForOutput(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  /** Resolves with the exit code once the process has exited by itself. */
  exited(timeoutMs?: number): Promise<number | null>;
  /** SIGTERM (if still running) and wait for the exit. */
  stop(): Promise<void>;
}

export function startStreaming(command: string, args: string[], env: NodeJS.ProcessEnv = process.env): StreamingProcess {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], env });
  let out = '';
  let err = '';
  let code: number | null | undefined;
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
  const exit = new Promise<number | null>((resolve) => child.once('exit', (c) => resolve((code = c))));
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    async waitForOutput(pattern, timeoutMs = 20_000) {
      try {
        return await waitFor(`${command} to print ${pattern}`, () => out.match(pattern) ?? (code !== undefined ? Promise.reject(new Error(`${command} exited (${code})`)) : undefined), timeoutMs);
      } catch (e) {
        throw new Error(`${(e as Error).message}\nstdout:\n${out}\nstderr:\n${err}`);
      }
    },
    async exited(timeoutMs = 30_000) {
      await waitFor(`${command} to exit`, () => code !== undefined, timeoutMs).catch((e: Error) => {
        throw new Error(`${e.message}\nstdout:\n${out}\nstderr:\n${err}`);
      });
      return exit;
    },
    async stop() {
      if (code === undefined) child.kill('SIGTERM');
      await exit;
    },
  };
}
