// internal/http/filters/after-next owns running the rest of the chain and then some bookkeeping
// whatever the outcome (a filter's `try { await next() } finally { ... }`), without an async
// function and its awaits per request. Imports: hono (types).

import type { Next } from 'hono';

/** Runs the rest of the chain; `done` runs once it settled, resolved or rejected (and rethrown). */
export function afterNext(next: Next, done: () => void): Promise<void> {
  let rest: Promise<void>;
  try {
    rest = next();
  } catch (e) {
    done();
    throw e;
  }
  return rest.then(done, (e: unknown) => {
    done();
    throw e;
  });
}
