// internal/codec/query-params owns how boolean query parameters read, for every endpoint
// (watch, allowWatchBookmarks, sendInitialEvents, force, orphanDependents, ...). Upstream's
// parameter codec is lenient: only "0" and "false" (any case) mean false, and any other value,
// the empty string included, means true. Clients rely on it: the Python client sends
// `allowWatchBookmarks=True` (Python's spelling), so a strict parser would refuse its watches.
// Imports: none.

/** The parameter's value as a boolean; `undefined` when it is absent. */
export function queryBool(value: string | null | undefined): boolean | undefined {
  if (value === null || value === undefined) return undefined;
  return !(value === '0' || value.toLowerCase() === 'false');
}
