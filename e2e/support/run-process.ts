// e2e/support/run-process owns running a command as a child process to its end and collecting
// what it printed: kubectl, the bench's entry points and the load tool all run this way in the
// e2e suites. Test-only.

import { spawn } from 'node:child_process';

export interface ProcessRun {
  /** The exit code; null when a signal ended the process. */
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface RunProcessOptions {
  /** Written to stdin, which is then closed (empty when not given). */
  input?: string;
  env?: NodeJS.ProcessEnv;
}

/** Runs `command` with `args`; resolves when it has exited and both streams are drained, rejects if it could not start. */
export function runProcess(command: string, args: string[], options: RunProcessOptions = {}): Promise<ProcessRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'], env: options.env ?? process.env });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(options.input ?? '');
  });
}
