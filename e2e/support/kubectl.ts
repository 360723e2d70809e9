// e2e/support/kubectl owns running the kubectl installed on the machine against a server
// process, capturing what it prints. Test-only.

import { execFileSync } from 'node:child_process';
import { runProcess, type ProcessRun } from './run-process.js';

export type KubectlResult = ProcessRun;

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
  return runProcess('kubectl', [`--kubeconfig=${kubeconfig}`, ...args], { input, env: { ...process.env, KUBECACHEDIR: `${kubeconfig}.cache` } });
}

/** kubectl's stdout; a non-zero exit throws with `label` (such as the replica it went through) and stderr. */
export async function kubectlOk(kubeconfig: string, args: string[], label = ''): Promise<string> {
  const r = await kubectl(kubeconfig, args);
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')}${label ? ` via ${label}` : ''} exited ${String(r.code)}: ${r.stderr}`);
  return r.stdout;
}
