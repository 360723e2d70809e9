// e2e/clients/support/python-client owns finding the suite's Python client: Debian's
// python3-kubernetes, which imports only under Debian's own interpreter (the python3 first on
// PATH may be another). Under CI=true a missing client fails the run instead of skipping the
// tests that use it. Test-only.

import { execFileSync } from 'node:child_process';

export const PYTHON = '/usr/bin/python3';

/** Whether `import kubernetes` works under Debian's interpreter; throws under CI=true when not. */
export function pythonClientAvailable(): boolean {
  try {
    execFileSync(PYTHON, ['-c', 'import kubernetes'], { stdio: 'ignore' });
    return true;
  } catch {
    if (process.env.CI === 'true') throw new Error(`python3-kubernetes is required under CI=true: \`${PYTHON} -c 'import kubernetes'\` failed (make test-deps installs it)`);
    return false;
  }
}
