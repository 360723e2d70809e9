// internal/server/start-garbage owns one full garbage collection when a single server has
// loaded its stored objects. The start's reads (the key index scan, the watch cache's priming)
// hand every stored value over as a Buffer of its own; those that lived through a scavenge
// while their page was being loaded died in the old generation, where nothing collects them
// until the heap grows again, and their memory (outside the heap: each Buffer's own
// allocation) stayed resident. With 50,000 pods stored that was 0 to 30 MiB of RSS after
// ready, depending on when the last major collection ran. Imports: nothing from the project.

import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** A full collection now (V8's gc() extension, exposed to a fresh context for this call only). */
export function collectStartGarbage(): void {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as (() => void) | undefined;
  setFlagsFromString('--no-expose-gc');
  gc?.();
}
