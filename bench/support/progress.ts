// bench/support/progress owns the progress lines the bench prints while it runs (on stderr,
// so stdout carries only the final table): elapsed time since start and the current step.
// Imports: node only.

export interface Progress {
  /** One line: `[mm:ss] message`. */
  step(message: string): void;
}

export function createProgress(write: (line: string) => void = (l) => process.stderr.write(`${l}\n`)): Progress {
  const t0 = performance.now();
  return {
    step(message) {
      const s = Math.floor((performance.now() - t0) / 1000);
      write(`[${String(Math.floor(s / 60)).padStart(2, '0')}:${String(s % 60).padStart(2, '0')}] ${message}`);
    },
  };
}
