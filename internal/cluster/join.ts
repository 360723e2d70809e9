// internal/cluster/join owns adding a replica to a running cluster, both ends of it (k3s's
// --server/--token is the model):
//   joiner: fetch the cluster CA from any member without trusting it, check it against the
//           hash pinned in the join token, then — now over verified TLS — present the token's
//           secret, its name and peer address; write the PKI files it receives and remember the
//           member addresses (for restarts, which need no further flags);
//   member: check the token against the cluster's recorded join tokens (join-tokens.ts: known,
//           secret matching, not expired), issue the joiner's serving and peer certificates,
//           add it to Raft as a learner (the leader promotes it once it has caught up), answer
//           with the shared PKI and the member addresses.
// Imports: pki (cluster layout, join token), config (splitHostPort), cluster ids, raft types, log;
// join-tokens (types).

import { readFileSync, writeFileSync, mkdirSync, existsSync, chmodSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { splitHostPort } from '../config/flags.js';
import { dirname, join, relative } from 'node:path';
import type { RaftNodeStatus } from '../../raft/node/raft-node.js';
import type { ConfState } from '../../raft/types.js';
import type { Logger } from '../log/logger.js';
import { clusterPkiPaths, issueReplicaCertificates, type ClusterPkiPaths } from '../pki/cluster-pki.js';
import { parseJoinToken, verifyCaHash, type JoinToken } from '../pki/join-token.js';
import { nodeIdOf, REPLICA_NAME } from './ids.js';
import { refusalMessage, type TokenCheck } from './join-tokens.js';
import { jsonResponse, statusResponse } from './responses.js';

export interface ClusterFiles extends ClusterPkiPaths {
  /** The shared PKI paths in the server's PkiPaths shape (for the kubeconfig and TLS). */
  pki: ClusterPkiPaths;
}

export function clusterFiles(pkiDir: string, name: string): ClusterFiles {
  const p = clusterPkiPaths(pkiDir, name);
  return { ...p, pki: p };
}

export const JOINED_FILE = 'cluster-peers.json';

/** Member addresses a joined replica learnt when it joined (the Raft snapshot has the current ones). */
export function loadJoinedPeers(dataDir: string): Map<number, string> {
  const path = join(dataDir, JOINED_FILE);
  if (!existsSync(path)) return new Map();
  return new Map(JSON.parse(readFileSync(path, 'utf8')) as Array<[number, string]>);
}

interface JoinResponse {
  files: Record<string, string>;
  peers: Array<[number, string]>;
  /** The cluster's id (cluster-id.ts); absent from members of earlier builds. */
  clusterId?: string;
}

/**
 * One HTTPS request to another replica's API. Without `tls.ca` the server is not verified: only
 * the joiner's first request (for the CA itself) does that, and its answer is checked against
 * the token's pinned hash before anything is trusted or sent.
 */
export async function replicaRequest(
  url: string,
  method: string,
  tls: { ca?: string | Buffer; cert?: string | Buffer; key?: string | Buffer },
  body?: string,
  timeoutMs = 10_000,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      url,
      {
        method,
        ...(tls.ca ? { ca: tls.ca } : { rejectUnauthorized: false }),
        ...(tls.cert && tls.key ? { cert: tls.cert, key: tls.key } : {}),
        timeout: timeoutMs,
        headers: body ? { 'content-type': 'application/json' } : {},
      },
      (res) => {
        let data = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (data += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: data }));
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer from ${url}`)));
    req.on('error', reject);
    req.end(body);
  });
}

/** Joins through `api` (any member), writes the received PKI, returns the member addresses. */
export async function joinCluster(
  o: { api: string; token: string; name: string; peerAddress: string; advertiseAddress?: string | undefined; dataDir: string; pkiDir: string },
  log: Logger,
): Promise<{ peers: Map<number, string>; clusterId: string | undefined }> {
  const token = parseJoinToken(o.token);
  const caRes = await replicaRequest(`${o.api}/cluster/v1/join/ca`, 'GET', {});
  if (caRes.status !== 200) throw new Error(`joining via ${o.api}: fetching the cluster CA answered ${caRes.status}: ${caRes.body.slice(0, 300)}`);
  const { ca } = JSON.parse(caRes.body) as { ca: string };
  if (!verifyCaHash(ca, token.caHash)) throw new Error(`joining via ${o.api}: the cluster CA does not match the join token's hash (wrong token, or not the cluster it was made for)`);
  const body = JSON.stringify({ name: o.name, peerAddress: o.peerAddress, hosts: joinHosts(o.peerAddress, o.advertiseAddress), secret: token.secret, ...(token.id ? { tokenId: token.id } : {}) });
  let res: { status: number; body: string } | undefined;
  // The member may be between leaders for a moment: retry what it says is retryable.
  for (let attempt = 0; attempt < 20; attempt++) {
    res = await replicaRequest(`${o.api}/cluster/v1/join`, 'POST', { ca }, body);
    if (res.status !== 503 && res.status !== 429) break;
    await new Promise((r) => setTimeout(r, 500));
  }
  if (!res || res.status !== 200) {
    let message = res?.body ?? '';
    try {
      message = (JSON.parse(message) as { message?: string }).message ?? message;
    } catch {
      // not a Status
    }
    throw new Error(`joining via ${o.api} was refused (${res?.status}): ${message}`);
  }
  const answer = JSON.parse(res.body) as JoinResponse;
  mkdirSync(o.pkiDir, { recursive: true, mode: 0o700 });
  for (const [rel, content] of Object.entries(answer.files)) {
    if (rel.includes('..') || rel.startsWith('/')) throw new Error(`joining: refusing file path ${rel}`);
    const path = join(o.pkiDir, rel);
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    const secret = rel.endsWith('.key') || rel === 'join-token';
    writeFileSync(path, content, { mode: secret ? 0o600 : 0o644 });
    if (secret) chmodSync(path, 0o600);
  }
  mkdirSync(o.dataDir, { recursive: true });
  writeFileSync(join(o.dataDir, JOINED_FILE), JSON.stringify(answer.peers));
  log.warn('joined cluster as a learner; catching up', { via: o.api, members: answer.peers.length });
  const clusterId = typeof answer.clusterId === 'string' && /^[0-9a-f]{16}$/.test(answer.clusterId) ? answer.clusterId : undefined;
  return { peers: new Map(answer.peers), clusterId };
}

export interface AdmitDeps {
  pkiDir: string;
  paths: ClusterPkiPaths;
  status(): RaftNodeStatus | undefined;
  addLearner(id: number, url: string): Promise<ConfState>;
  /** Whether the presented token may join now (join-tokens.ts JoinTokens.check). */
  checkToken(token: Pick<JoinToken, 'id' | 'secret'>): Promise<TokenCheck>;
  /** This member's cluster id, which the joiner adopts. */
  clusterId: string;
  log: Logger;
}

/**
 * The names a joining replica's serving certificate must carry: its peer address's host and
 * the address it advertises to clients (--advertise-address), which clients dial and verify.
 */
export function joinHosts(peerAddress: string, advertiseAddress?: string): string[] {
  return [...new Set([splitHostPort(peerAddress)[0], ...(advertiseAddress ? [advertiseAddress] : [])])];
}

/** What a serving certificate may name: an IP address or a DNS name (as --advertise-address takes). */
const CERT_HOST = /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)*$/i;
const MAX_JOIN_HOSTS = 16;

/** The member side of a join (POST /cluster/v1/join). */
export async function admitJoiner(raw: string, deps: AdmitDeps): Promise<Response> {
  const status = statusResponse;
  let req: { name?: unknown; peerAddress?: unknown; hosts?: unknown; secret?: unknown; tokenId?: unknown };
  try {
    req = JSON.parse(raw) as typeof req;
  } catch {
    return status(400, 'BadRequest', 'the join request is not JSON');
  }
  if (typeof req !== 'object' || req === null) return status(400, 'BadRequest', 'the join request must be a JSON object');
  const { name, peerAddress, secret, tokenId } = req;
  const hosts = Array.isArray(req.hosts) ? req.hosts.filter((h): h is string => typeof h === 'string') : [];
  if (typeof secret !== 'string') return status(401, 'Unauthorized', 'the join request carries no token secret');
  // The same shapes a token's text may have (join-token.ts): a file's 32 hex digits, or a
  // created token's id and 16-character secret.
  const token = typeof tokenId === 'string' && /^[a-z0-9]{6}$/.test(tokenId) && /^[a-z0-9]{16}$/.test(secret)
    ? { id: tokenId, secret }
    : tokenId === undefined && /^[0-9a-fA-F]{32}$/.test(secret)
      ? { secret: secret.toLowerCase() }
      : undefined;
  if (!token) return status(401, 'Unauthorized', 'the join request\'s token is malformed');
  let check: TokenCheck;
  try {
    check = await deps.checkToken(token);
  } catch (e) {
    return status(503, 'ServiceUnavailable', `the join token cannot be checked now: ${e instanceof Error ? e.message : String(e)}`);
  }
  if (!check.ok) {
    deps.log.warn('refused a join', { name: typeof name === 'string' ? name : undefined, token: check.id, reason: check.reason });
    return status(401, 'Unauthorized', refusalMessage(check));
  }
  if (typeof name !== 'string' || !REPLICA_NAME.test(name)) return status(400, 'BadRequest', `invalid replica name ${JSON.stringify(name)}`);
  if (typeof peerAddress !== 'string' || !/^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):\d{1,5}$/.test(peerAddress)) {
    return status(400, 'BadRequest', `invalid peer address ${JSON.stringify(peerAddress)} (want host:port)`);
  }
  // They become names in a certificate the cluster CA signs.
  const badHost = hosts.find((h) => !isIP(h) && !CERT_HOST.test(h));
  if (badHost !== undefined || hosts.length > MAX_JOIN_HOSTS) {
    return status(400, 'BadRequest', badHost !== undefined ? `invalid host ${JSON.stringify(badHost)} for the serving certificate (want an IP address or a DNS name)` : `at most ${MAX_JOIN_HOSTS} hosts for the serving certificate`);
  }
  const s = deps.status();
  if (!s || s.leader === 0) return status(503, 'ServiceUnavailable', 'the cluster has no leader; retry');
  const id = nodeIdOf(name);
  const cs = s.membership;
  const url = `https://${peerAddress}`;
  const known = [...cs.voters, ...cs.learners].includes(id);
  if (known && s.peers.get(id) !== url) {
    return status(409, 'AlreadyExists', `a member named "${name}" exists with another peer address (${s.peers.get(id) ?? 'unknown'}); remove it first`);
  }
  await issueReplicaCertificates(deps.pkiDir, name, [...new Set(hosts)]);
  if (!known) {
    try {
      await deps.addLearner(id, url);
    } catch (e) {
      return status(503, 'ServiceUnavailable', `adding the member failed: ${e instanceof Error ? e.message : String(e)}`);
    }
    deps.log.warn('admitted a joining replica as a learner', { name, id, peerAddress });
  }
  const joiner = clusterPkiPaths(deps.pkiDir, name);
  const shared = [deps.paths.caCert, deps.paths.caKey, deps.paths.adminCert, deps.paths.adminKey, deps.paths.saKey, deps.paths.saPub, deps.paths.peerCaCert, deps.paths.peerCaKey, deps.paths.joinToken];
  const own = [joiner.serverCert, joiner.serverKey, joiner.peerCert, joiner.peerKey];
  const files: Record<string, string> = {};
  for (const f of [...shared, ...own]) files[relative(deps.pkiDir, f)] = readFileSync(f, 'utf8');
  const peers = [...(deps.status()?.peers ?? s.peers)];
  if (!peers.some(([pid]) => pid === id)) peers.push([id, url]);
  return jsonResponse(200, { files, peers, clusterId: deps.clusterId } satisfies JoinResponse);
}
