// e2e/clients/support/wait-for owns polling with a deadline, the suite's only way to wait for
// something another process does (never a fixed sleep). Test-only.

/**
 * Calls `check` every `intervalMs` until it returns something other than undefined/false,
 * and resolves with that; rejects naming `what` (and the last value seen) after `timeoutMs`.
 */
export async function waitFor<T>(what: string, check: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs = 20_000, intervalMs = 25): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
