// e2e/support/kubectl owns running the kubectl installed on the machine against a server
// process, capturing what it prints. Test-only.

import { spawn, execFileSync } from 'node:child_process';

export interface KubectlResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Whether kubectl runs here. Under CI=true a missing kubectl is an error, not a skip: the suites
 * that ask must fail rather than pass having run nothing.
 */
export function kubectlAvailable(): boolean {
  try {
    execFileSync('kubectl', ['version', '--client'], { stdio: 'ignore' });
    return true;
  } catch (e) {
    if (process.env.CI === 'true') throw new Error(`kubectl is required under CI=true and does not run: ${(e as Error).message}`);
    return false;
  }
}

export function kubectl(kubeconfig: string, args: string[], input?: string): Promise<KubectlResult> {
  return new Promise((resolve, reject) => {
    const child = spawn('kubectl', [`--kubeconfig=${kubeconfig}`, ...args], { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, KUBECACHEDIR: `${kubeconfig}.cache` } });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input ?? '');
  });
}

/** kubectl's stdout; a non-zero exit throws with `label` (such as the replica it went through) and stderr. */
export async function kubectlOk(kubeconfig: string, args: string[], label = ''): Promise<string> {
  const r = await kubectl(kubeconfig, args);
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')}${label ? ` via ${label}` : ''} exited ${String(r.code)}: ${r.stderr}`);
  return r.stdout;
}
