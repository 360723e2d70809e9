// internal/codecache/hook owns the meeting point of the code-caching loader (bundle-loader, the
// built entry point) and the bundled server it runs: a process-wide symbol, so the bundle
// reaches the loader without holding a second copy of it. Imports: nothing.

/** Where the bundled code reaches the loader (cmd/clusterd tells it the data directory). */
export const BUNDLE_LOADER_HOOK = Symbol.for('clusterd.bundle-loader');

export interface BundleLoaderHook {
  /** A second place for caches, read after the bundle's own directory and written when that is read-only. */
  useDataDir(dir: string): void;
  /** The server is ready: write the caches of the files that had none (or a rejected one). */
  started(): void;
}

/** The loader running this process, or undefined when the server runs unbundled (tsc's output, tests). */
export function bundleLoaderHook(): BundleLoaderHook | undefined {
  return (globalThis as Record<symbol, BundleLoaderHook | undefined>)[BUNDLE_LOADER_HOOK];
}

export function setBundleLoaderHook(hook: BundleLoaderHook | undefined): void {
  (globalThis as Record<symbol, BundleLoaderHook | undefined>)[BUNDLE_LOADER_HOOK] = hook;
}
