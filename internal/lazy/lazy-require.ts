// internal/lazy owns loading a CommonJS package on first use instead of at import: a library
// that a server start does not use costs start-up CPU and resident memory in every process.
// The load is synchronous (validation, CEL and the OpenAPI encoder call synchronously) and goes
// through Node's require from node_modules, so the built server's bundle leaves these packages
// out (tools/bundle-server EXTERNAL_PACKAGES; e2e/server-bundle.test.ts checks they are there).
// Imports: node only.

import { createRequire } from 'node:module';

/** A getter that requires `name` the first time it is called, after the packages in `first`. */
export function lazyRequire<T>(name: string, first: readonly string[] = []): () => T {
  let loaded: T | undefined;
  return () => {
    if (loaded === undefined) {
      const require = createRequire(import.meta.url);
      for (const f of first) require(f);
      loaded = require(name) as T;
    }
    return loaded;
  };
}
