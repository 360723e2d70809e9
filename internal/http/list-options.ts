// internal/http/list-options owns the query parameters of get, list and watch and their
// resourceVersion semantics (spec §4.5): which read mode each combination means, which are
// invalid (400), and the opaque continue token (it carries the list's revision and the last
// key). Imports: apierrors, codec/query-params, watchcache/storage (types).

import { errors } from '../apierrors/status.js';
import { queryBool } from '../codec/query-params.js';
import type { ReadMode } from '../watchcache/storage.js';

export interface ContinueToken {
  revision: number;
  /** Key after the resource prefix of the last item returned. */
  afterKey: string;
}

const TOKEN_VERSION = 'meta/v1';

export function encodeContinue(t: ContinueToken): string {
  return Buffer.from(JSON.stringify({ v: TOKEN_VERSION, rv: t.revision, start: t.afterKey }), 'utf8').toString('base64url');
}

/**
 * Decodes a continue token; a malformed one is a 400 whose message has upstream's form
 * ("invalid continue token: continue key is not valid...", from etcd3's GetList and
 * storage.DecodeContinue).
 */
export function decodeContinue(token: string): ContinueToken {
  const invalid = (detail: string) => errors.badRequest(`invalid continue token: continue key is not valid${detail}`);
  if (!/^[A-Za-z0-9_-]*$/.test(token)) throw invalid(': illegal base64 data');
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch {
    throw invalid(': not a JSON object');
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw invalid(': not a JSON object');
  const p = parsed as { v?: unknown; rv?: unknown; start?: unknown };
  if (p.v !== TOKEN_VERSION) throw invalid(`: server does not recognize this encoded version ${typeof p.v === 'string' ? p.v : ''}`);
  if (typeof p.rv !== 'number' || !Number.isSafeInteger(p.rv) || (p.rv < 1 && p.rv !== -1)) {
    throw invalid(`: incorrect encoded start resourceVersion (version ${TOKEN_VERSION})`);
  }
  if (typeof p.start !== 'string' || p.start === '') throw invalid(`: encoded start key empty (version ${TOKEN_VERSION})`);
  if (p.start.includes('\u0000') || p.start.split('/').includes('..')) throw invalid(`: ${p.start}`);
  return { revision: p.rv, afterKey: p.start };
}

/** Parses a resourceVersion parameter: undefined (unset), 0, or a positive revision. */
export function parseResourceVersion(raw: string | null, param = 'resourceVersion'): number | undefined {
  if (raw === null || raw === '') return undefined;
  // Worded as upstream's etcd3 store words it (strconv.ParseUint under the versioner). Versions
  // past 2^53 cannot be represented here and are refused as out of range too.
  const syntax = /^\d+$/.test(raw);
  if (!syntax || !Number.isSafeInteger(Number(raw))) {
    const why = syntax ? 'value out of range' : 'invalid syntax';
    throw errors.badRequest(`invalid resource version: ${param}: Invalid value: ${JSON.stringify(raw)}: strconv.ParseUint: parsing ${JSON.stringify(raw)}: ${why}`);
  }
  return Number(raw);
}

/** get (§4.5): unset = most recent, 0 = any, n = not older than n. */
export function getReadMode(query: URLSearchParams): ReadMode {
  const rv = parseResourceVersion(query.get('resourceVersion'));
  if (rv === undefined) return { kind: 'consistent' };
  if (rv === 0) return { kind: 'any' };
  return { kind: 'notOlderThan', revision: rv };
}

export interface ListParams {
  mode: ReadMode;
  limit: number;
  continueFrom: ContinueToken | undefined;
}

function parseLimit(raw: string | null): number {
  if (raw === null) return 0;
  // Upstream converts a present limit with strconv.ParseInt: a sign is allowed, an empty value is not.
  if (!/^[+-]?\d+$/.test(raw)) throw errors.badRequest(`invalid limit "${raw}": must be an integer`);
  // Upstream parses limit as an int64 and refuses what does not fit.
  const big = BigInt(raw);
  if (big > 0x7fffffffffffffffn || big < -0x8000000000000000n) throw errors.badRequest(`invalid limit "${raw}": out of the 64-bit integer range`);
  const n = Number(raw);
  // A negative or zero limit means no limit, as upstream treats it.
  return n > 0 ? n : 0;
}

/** list (§4.5 table): the read mode, or a 400 for the invalid cells. */
export function listParams(query: URLSearchParams): ListParams {
  const rvRaw = query.get('resourceVersion');
  const rv = parseResourceVersion(rvRaw);
  const match = query.get('resourceVersionMatch') ?? '';
  const limit = parseLimit(query.get('limit'));
  const token = query.get('continue') ?? '';
  if (match !== '' && match !== 'Exact' && match !== 'NotOlderThan') {
    throw errors.badRequest(`resourceVersionMatch: Unsupported value: "${match}": supported values: "Exact", "NotOlderThan", ""`);
  }
  if (match !== '' && rv === undefined) {
    throw errors.badRequest(`resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided`);
  }
  // Present at all (even false) on a list: upstream's ValidateListOptions forbids it.
  if (query.has('sendInitialEvents')) throw errors.badRequest('sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list');
  if (token) {
    if (match !== '') throw errors.badRequest('resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when continue is provided');
    if (rv !== undefined && rv !== 0) {
      throw errors.badRequest('specifying resource version is not allowed when using continue');
    }
    // `continue` with resourceVersion=0 is invalid but, as upstream does, read as continue.
    return { mode: { kind: 'consistent' }, limit, continueFrom: decodeContinue(token) };
  }
  if (match === 'Exact') {
    if (rv === 0) throw errors.badRequest('resourceVersionMatch: Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"');
    return { mode: { kind: 'exact', revision: rv! }, limit, continueFrom: undefined };
  }
  if (match === 'NotOlderThan') {
    return { mode: rv === 0 ? { kind: 'any' } : { kind: 'notOlderThan', revision: rv! }, limit, continueFrom: undefined };
  }
  if (rv === undefined) return { mode: { kind: 'consistent' }, limit, continueFrom: undefined };
  if (rv === 0) return { mode: { kind: 'any' }, limit, continueFrom: undefined };
  // A non-zero version with a limit is an exact read (the chunks must be one snapshot).
  return { mode: limit > 0 ? { kind: 'exact', revision: rv } : { kind: 'notOlderThan', revision: rv }, limit, continueFrom: undefined };
}

export interface WatchParams {
  /** 0 = synthetic ADDED events for the current state first. */
  fromRevision: number;
  /** Unset resourceVersion: the initial state must be consistent. */
  consistent: boolean;
  allowBookmarks: boolean;
  sendInitialEvents: boolean;
  timeoutSeconds: number | undefined;
  /** With sendInitialEvents and a version: the initial state must be at least this new. */
  notOlderThan?: number;
}

function parseBool(query: URLSearchParams, name: string): boolean {
  return queryBool(query.get(name)) ?? false;
}

/** watch (§4.5, §2.6): start point, bookmarks, initial events (which need NotOlderThan). */
export function watchParams(query: URLSearchParams): WatchParams {
  const rv = parseResourceVersion(query.get('resourceVersion'));
  const match = query.get('resourceVersionMatch') ?? '';
  const allowBookmarks = parseBool(query, 'allowWatchBookmarks');
  const sendInitialEventsSet = query.has('sendInitialEvents');
  const sendInitialEvents = parseBool(query, 'sendInitialEvents');
  let timeoutSeconds: number | undefined;
  const t = query.get('timeoutSeconds');
  if (t !== null && t !== '') {
    if (!/^[-+]?\d+$/.test(t)) throw errors.badRequest(`invalid timeoutSeconds "${t}": must be an integer`);
    const big = BigInt(t);
    if (big > 0x7fffffffffffffffn || big < -0x8000000000000000n) throw errors.badRequest(`invalid timeoutSeconds "${t}": out of the 64-bit integer range`);
    // 0 is the same as unset, as upstream treats it: the server chooses (some clients send 0 for
    // "no timeout"). A negative timeout ends the stream at once, as upstream's timer does.
    timeoutSeconds = big === 0n ? undefined : big < 0n ? 0 : Number(t);
  }
  if (sendInitialEventsSet) {
    if (match !== 'NotOlderThan') {
      throw errors.badRequest('resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan');
    }
    // Without allowWatchBookmarks the initial events come without the closing bookmark (spec
    // §4.3; upstream's validation does not require bookmarks either).
  } else if (match !== '') {
    throw errors.badRequest('resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided');
  }
  if (sendInitialEvents) {
    // Initial state at (at least) the given version, then changes.
    return { fromRevision: 0, consistent: rv === undefined, allowBookmarks, sendInitialEvents, timeoutSeconds, ...(rv ? { notOlderThan: rv } : {}) };
  }
  if (sendInitialEventsSet) {
    // sendInitialEvents=false: only changes after the version; unset starts at the most recent
    // version and 0 at any (the cache's), both without initial events, as upstream's cacher.
    return { fromRevision: rv || -1, consistent: rv === undefined, allowBookmarks, sendInitialEvents, timeoutSeconds };
  }
  return { fromRevision: rv ?? 0, consistent: rv === undefined, allowBookmarks, sendInitialEvents, timeoutSeconds };
}
