// internal/cel/cost-model owns the cost units CEL work is measured in, shared by the static
// estimator (cost.ts) and the runtime meter (meter.ts): upstream's limits and, per function, the
// cost of one call from the sizes of its receiver and arguments (a string's length in characters,
// a list's or map's number of entries, 1 for anything else). Upstream's model in outline: a call
// costs 1, string traversals 0.1 per character, regular expressions 0.25 per character of input
// times the pattern's length, list functions 1 per element. Imports: nothing from the project.

/** Upstream's PerCallLimit: one evaluation of one expression. */
export const PER_CALL_LIMIT = 1_000_000;
/** Upstream's RuntimeCELCostBudget: every rule evaluated for one custom-resource request. */
export const RUNTIME_CEL_COST_BUDGET = 100_000_000;
/** Upstream's StaticEstimatedCostLimit: the estimated cost of one CRD rule. */
export const STATIC_ESTIMATED_COST_LIMIT = 10_000_000;
/** Upstream's StaticEstimatedCRDCostLimit: all rules of a CRD version, times how often each can run. */
export const STATIC_ESTIMATED_CRD_COST_LIMIT = 100_000_000;
/** Upstream's largest request body: bounds lists, maps and strings whose schema sets no maximum. */
export const MAX_REQUEST_SIZE_BYTES = 3 * 1024 * 1024;

export const STRING_TRAVERSAL_FACTOR = 0.1;
export const REGEX_FACTOR = 0.25;

export type CallCost = (sizes: readonly number[]) => number;

const traversal = (n: number): number => Math.ceil(n * STRING_TRAVERSAL_FACTOR);
const sizeOf = (sizes: readonly number[], i: number): number => sizes[i] ?? 1;

/** name → cost of one call beyond the base cost 1 every call has. Unknown names cost 1. */
const CALL_COSTS = new Map<string, CallCost>();

export function declareCallCost(name: string, cost: CallCost): void {
  CALL_COSTS.set(name, cost);
}

export function callCost(name: string, sizes: readonly number[]): number {
  const f = CALL_COSTS.get(name);
  return 1 + (f ? Math.max(0, f(sizes)) : 0);
}

// The standard library's string functions that walk their receiver (and argument).
for (const name of ['contains', 'startsWith', 'endsWith', 'lowerAscii', 'upperAscii', 'trim', 'indexOf', 'lastIndexOf', 'substring', 'charAt', 'replace', 'split', 'join', 'quote', 'format', 'string', 'bytes']) {
  declareCallCost(name, (s) => traversal(sizeOf(s, 0) + (s.length > 1 ? sizeOf(s, 1) : 0)));
}
// Regular expressions: input length times pattern length.
for (const name of ['matches', 'find', 'findAll']) {
  declareCallCost(name, (s) => Math.ceil(REGEX_FACTOR * sizeOf(s, 0) * sizeOf(s, 1)));
}
// The lists library: one unit per element (sorting checks and sums walk the list).
for (const name of ['isSorted', 'sum', 'min', 'max']) declareCallCost(name, (s) => sizeOf(s, 0));
// sets.* compare every element of one list with the other.
for (const name of ['sets.contains', 'sets.equivalent', 'sets.intersects']) declareCallCost(name, (s) => sizeOf(s, 0) * sizeOf(s, 1));
// Parsing a URL, an IP, a CIDR, a quantity or a formatted value walks the string.
for (const name of ['url', 'isURL', 'ip', 'isIP', 'ip.isCanonical', 'cidr', 'isCIDR', 'quantity', 'isQuantity', 'validate', 'getQuery', 'getEscapedPath']) {
  declareCallCost(name, (s) => traversal(sizeOf(s, name === 'validate' ? 1 : 0)));
}
