// internal/cluster/join-tokens owns the cluster's join tokens as replicated state (kubeadm's
// bootstrap tokens are the model): one store key per token under /cluster/join-tokens/<id>
// (outside /registry/: no API serves it) holding a hash of the secret, when it was made, when it
// expires (never, for a TTL of 0) and a description. Every write goes through the store, so
// through the Raft log: every replica accepts and refuses the same tokens. It also owns
//   - the join-token file's registration: the file `clusterd pki` writes is recorded once, the
//     first time a leader (or a join presenting it) finds it unrecorded, with the default TTL
//     from then; a marker key remembers that it was, so a revoked or cleaned file token is not
//     recorded again;
//   - the cleaner (upstream's tokencleaner): the leader deletes tokens some time after expiry;
//   - the /cluster/v1/tokens endpoints (list, create, revoke).
// Authorization is not here: the endpoints sit behind the API's authorization chain like
// /cluster/v1/members (system:masters, or RBAC on the non-resource URLs).
// Imports: store types, pki/join-token, cluster/responses, log.

import type { Logger } from '../log/logger.js';
import { formatJoinToken, hashJoinSecret, joinSecretHashMatches, joinTokenId, newTokenParts, TOKEN_ID, type JoinToken } from '../pki/join-token.js';
import type { RevisionStore } from '../store/types.js';
import { jsonResponse as json, statusResponse } from './responses.js';

export const JOIN_TOKEN_PREFIX = '/cluster/join-tokens/';
/** Markers of join-token files already recorded (never deleted: see the header). */
const FILE_MARKER_PREFIX = '/cluster/join-token-files/';

/** kubeadm's default token TTL. */
export const DEFAULT_TOKEN_TTL_MS = 24 * 3600_000;
/** Descriptions are for people; a bound keeps a token record small. */
const MAX_DESCRIPTION = 1024;

export interface JoinTokenRecord {
  id: string;
  /** `sha256:<hex>` of the secret; the secret itself is never stored. */
  secretHash: string;
  /** RFC 3339. */
  created: string;
  /** RFC 3339; null: never expires. */
  expires: string | null;
  description: string;
  /** 'file' for the join-token file of the cluster PKI; absent for created tokens. */
  source?: 'file';
}

/** What the API shows of a token: never the secret or its hash. */
export interface JoinTokenView {
  id: string;
  created: string;
  expires: string | null;
  expired: boolean;
  description: string;
  source?: 'file';
}

export type TokenCheck = { ok: true; id: string } | { ok: false; id: string; reason: 'unknown' | 'expired'; expires?: string };

const rfc3339 = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** Whether `r` has expired at `now` (milliseconds since the epoch). */
export const isExpired = (r: Pick<JoinTokenRecord, 'expires'>, now: number): boolean => r.expires !== null && Date.parse(r.expires) <= now;

function parseRecord(value: Uint8Array): JoinTokenRecord | undefined {
  try {
    const r = JSON.parse(Buffer.from(value).toString('utf8')) as JoinTokenRecord;
    return typeof r.id === 'string' && typeof r.secretHash === 'string' ? r : undefined;
  } catch {
    return undefined;
  }
}

const encode = (v: unknown): Uint8Array => Buffer.from(JSON.stringify(v));

export class JoinTokens {
  constructor(
    private readonly store: RevisionStore,
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  /** Makes a token expiring `ttlMs` from now (0: never); resolves with it and its secret. */
  async create(ttlMs: number, description: string): Promise<{ record: JoinTokenRecord; secret: string }> {
    // A random id can collide with an existing one (one in 2^31): the create-if-absent
    // precondition notices, and a new id is drawn.
    for (let attempt = 0; attempt < 5; attempt++) {
      const { id, secret } = newTokenParts();
      const now = this.now();
      const record: JoinTokenRecord = { id, secretHash: hashJoinSecret(secret), created: rfc3339(now), expires: ttlMs > 0 ? rfc3339(now + ttlMs) : null, description };
      const key = JOIN_TOKEN_PREFIX + id;
      const r = await this.store.execute({ type: 'txn', compares: [{ key, modRevision: 0 }], ops: [{ type: 'put', key, value: encode(record) }] });
      if (r.succeeded) return { record, secret };
    }
    throw new Error('could not find an unused token id in 5 attempts');
  }

  /** Every recorded token, by id, as of a linearizable read. */
  async list(): Promise<JoinTokenRecord[]> {
    await this.store.consistentRevision();
    const { kvs } = await this.store.range(JOIN_TOKEN_PREFIX);
    return kvs.map((kv) => parseRecord(kv.value)).filter((r): r is JoinTokenRecord => r !== undefined);
  }

  /** Deletes token `id`; false when there is none. */
  async revoke(id: string): Promise<boolean> {
    await this.store.consistentRevision();
    for (;;) {
      const kv = await this.store.get(JOIN_TOKEN_PREFIX + id);
      if (!kv) return false;
      const r = await this.store.execute({ type: 'txn', compares: [{ key: kv.key, modRevision: kv.modRevision }], ops: [{ type: 'delete', key: kv.key }] });
      if (r.succeeded) return true;
    }
  }

  /**
   * Whether `token` (its id and secret) may join now. A wrong secret for a known id reads as an
   * unknown token: the answer must not tell a guesser which ids exist.
   */
  async check(token: Pick<JoinToken, 'id' | 'secret'>): Promise<TokenCheck> {
    const id = joinTokenId(token);
    await this.store.consistentRevision();
    const kv = await this.store.get(JOIN_TOKEN_PREFIX + id);
    const record = kv && parseRecord(kv.value);
    if (!record || !joinSecretHashMatches(record.secretHash, token.secret)) return { ok: false, id, reason: 'unknown' };
    if (isExpired(record, this.now())) return { ok: false, id, reason: 'expired', expires: record.expires! };
    return { ok: true, id };
  }

  /**
   * Records the join-token file's token with the default TTL from now, unless it was recorded
   * before (even if since revoked or cleaned). Resolves with whether this call recorded it.
   */
  async registerFileToken(token: JoinToken, ttlMs = DEFAULT_TOKEN_TTL_MS): Promise<boolean> {
    const id = joinTokenId(token);
    const marker = FILE_MARKER_PREFIX + id;
    await this.store.consistentRevision();
    if (await this.store.get(marker)) return false;
    const now = this.now();
    const record: JoinTokenRecord = {
      id,
      secretHash: hashJoinSecret(token.secret),
      created: rfc3339(now),
      expires: ttlMs > 0 ? rfc3339(now + ttlMs) : null,
      description: 'the join-token file of the cluster PKI',
      source: 'file',
    };
    const key = JOIN_TOKEN_PREFIX + id;
    const r = await this.store.execute({
      type: 'txn',
      compares: [{ key: marker, modRevision: 0 }, { key, modRevision: 0 }],
      ops: [{ type: 'put', key: marker, value: encode({ id, recorded: record.created }) }, { type: 'put', key, value: encode(record) }],
    });
    if (!r.succeeded && r.failedKey === key) {
      // A created token took the id derived from the file's secret (one in 2^24): the file's
      // token cannot be recorded, and joins must use a created token.
      this.log.error('the join-token file cannot be recorded: a created token has its id; create tokens with `clusterd token create`', { id });
    }
    if (r.succeeded) this.log.warn('recorded the join-token file as a join token', { id, expires: record.expires });
    return r.succeeded;
  }

  /** Deletes tokens expired for at least `retentionMs`; resolves with their ids. */
  async removeExpired(retentionMs: number): Promise<string[]> {
    const { kvs } = await this.store.range(JOIN_TOKEN_PREFIX);
    const now = this.now();
    const removed: string[] = [];
    for (const kv of kvs) {
      const r = parseRecord(kv.value);
      if (!r || r.expires === null || Date.parse(r.expires) + retentionMs > now) continue;
      const done = await this.store.execute({ type: 'txn', compares: [{ key: kv.key, modRevision: kv.modRevision }], ops: [{ type: 'delete', key: kv.key }] });
      if (done.succeeded) removed.push(r.id);
    }
    if (removed.length) this.log.warn('removed expired join tokens', { ids: removed });
    return removed;
  }

  view(r: JoinTokenRecord): JoinTokenView {
    return { id: r.id, created: r.created, expires: r.expires, expired: isExpired(r, this.now()), description: r.description, ...(r.source ? { source: r.source } : {}) };
  }
}

/** The 401 message of a refused join, saying why without repeating the secret. */
export function refusalMessage(c: Extract<TokenCheck, { ok: false }>): string {
  return c.reason === 'expired'
    ? `join token "${c.id}" expired at ${c.expires}: make a new one with \`clusterd token create\` on a member`
    : `join token "${c.id}" is unknown or was revoked: make a new one with \`clusterd token create\` on a member`;
}

/**
 * Serves /cluster/v1/tokens (GET list, POST create) and /cluster/v1/tokens/<id> (DELETE);
 * undefined for other paths. `caHash` goes into created tokens, for the joiner to pin.
 */
export async function handleJoinTokens(
  method: string,
  path: string,
  body: () => Promise<string>,
  deps: { tokens: JoinTokens; caHash: () => string },
): Promise<Response | undefined> {
  const { tokens } = deps;
  if (path === '/cluster/v1/tokens') {
    if (method === 'GET') return json(200, { kind: 'JoinTokenList', apiVersion: 'v1', tokens: (await tokens.list()).map((r) => tokens.view(r)) });
    if (method !== 'POST') return statusResponse(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource');
    const text = await body();
    if (text.length > 64 * 1024) return statusResponse(413, 'RequestEntityTooLarge', 'the token request is too large');
    let req: { ttlSeconds?: unknown; description?: unknown };
    try {
      req = text.trim() === '' ? {} : (JSON.parse(text) as typeof req);
    } catch {
      return statusResponse(400, 'BadRequest', 'the token request is not JSON');
    }
    if (typeof req !== 'object' || req === null || Array.isArray(req)) return statusResponse(400, 'BadRequest', 'the token request must be a JSON object');
    const ttl = req.ttlSeconds ?? DEFAULT_TOKEN_TTL_MS / 1000;
    if (typeof ttl !== 'number' || !Number.isInteger(ttl) || ttl < 0) return statusResponse(400, 'BadRequest', `ttlSeconds must be a whole number of seconds, 0 or more (0: never expires), got ${JSON.stringify(ttl)}`);
    const description = req.description ?? '';
    if (typeof description !== 'string') return statusResponse(400, 'BadRequest', 'description must be a string');
    if (description.length > MAX_DESCRIPTION) return statusResponse(400, 'BadRequest', `description must be at most ${MAX_DESCRIPTION} characters, got ${description.length}`);
    const { record, secret } = await tokens.create(ttl * 1000, description);
    return json(201, { kind: 'JoinToken', apiVersion: 'v1', token: formatJoinToken(deps.caHash(), record.id, secret), ...tokens.view(record) });
  }
  const m = /^\/cluster\/v1\/tokens\/([^/]+)$/.exec(path);
  if (!m) return undefined;
  if (method !== 'DELETE') return statusResponse(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource');
  const id = decodeURIComponent(m[1]!);
  if (!TOKEN_ID.test(id)) return statusResponse(400, 'BadRequest', `invalid token id ${JSON.stringify(id)}: 6 characters of a-z and 0-9`);
  if (!(await tokens.revoke(id))) return statusResponse(404, 'NotFound', `join token "${id}" not found`);
  return json(200, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', message: `join token "${id}" revoked`, details: { name: id, kind: 'tokens' } });
}
