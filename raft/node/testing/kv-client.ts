// raft/node/testing/kv-client.ts owns the client side of kv-replica-main's HTTP API, with the
// outcome classification a linearizability check needs: a put is `ok`, certainly `failed`
// (not applied: the server said so, or the connection was refused before the request left),
// or `unknown` (timeout, connection lost mid-request, the server cannot tell).

import * as http from 'node:http';

export type PutOutcome = { kind: 'ok'; index: number } | { kind: 'failed'; why: string } | { kind: 'unknown'; why: string };
export type GetOutcome = { kind: 'ok'; value: string | null; index: number } | { kind: 'failed'; why: string };

const agent = new http.Agent({ keepAlive: true, maxSockets: 512 });

interface RawResponse {
  status: number;
  body: string;
}

/** Rejects with an error whose `sent` property says whether the request may have reached the server. */
function request(url: string, method: string, body: string | null, timeoutMs: number): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    let sent = false;
    const req = http.request(url, { method, agent, headers: body ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } : {} });
    const timer = setTimeout(() => req.destroy(Object.assign(new Error('client timeout'), { timeout: true })), timeoutMs);
    req.on('socket', (s) => {
      // A fresh connection is "sent" once connected; a reused keep-alive socket is already connected.
      if (!s.connecting) sent = true;
      else s.once('connect', () => (sent = true));
    });
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        clearTimeout(timer);
        resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') });
      });
      res.on('error', (err) => {
        clearTimeout(timer);
        reject(Object.assign(err, { sent: true }));
      });
    });
    req.on('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      reject(Object.assign(err, { sent: sent && err.code !== 'ECONNREFUSED' }));
    });
    req.end(body ?? undefined);
  });
}

export async function kvPut(baseUrl: string, key: string, value: string, timeoutMs = 5000): Promise<PutOutcome> {
  try {
    const res = await request(`${baseUrl}/put`, 'POST', JSON.stringify({ key, value }), timeoutMs);
    if (res.status === 200) return { kind: 'ok', index: (JSON.parse(res.body) as { index: number }).index };
    // 503 and 429 (too many proposals pending): the server says it did not propose it.
    if (res.status === 503 || res.status === 429) return { kind: 'failed', why: res.body };
    return { kind: 'unknown', why: `${res.status} ${res.body}` };
  } catch (err) {
    const e = err as Error & { sent?: boolean };
    return e.sent ? { kind: 'unknown', why: e.message } : { kind: 'failed', why: e.message };
  }
}

export async function kvGet(baseUrl: string, key: string, timeoutMs = 5000): Promise<GetOutcome> {
  try {
    const res = await request(`${baseUrl}/get?key=${encodeURIComponent(key)}`, 'GET', null, timeoutMs);
    if (res.status !== 200) return { kind: 'failed', why: `${res.status} ${res.body}` };
    const parsed = JSON.parse(res.body) as { value: string | null; index: number };
    return { kind: 'ok', value: parsed.value, index: parsed.index };
  } catch (err) {
    return { kind: 'failed', why: (err as Error).message };
  }
}

export interface ReplicaStatus {
  id: number;
  role: string;
  leader: number;
  term: number;
  commit: number;
  applied: number;
}

export async function replicaStatus(baseUrl: string, timeoutMs = 1000): Promise<ReplicaStatus | null> {
  try {
    const res = await request(`${baseUrl}/status`, 'GET', null, timeoutMs);
    return res.status === 200 ? (JSON.parse(res.body) as ReplicaStatus) : null;
  } catch {
    return null;
  }
}

/** The replica's RaftNode.stats() (see raft-node.ts RaftNodeStats), or null when unreachable. */
export async function replicaStats(baseUrl: string, timeoutMs = 1000): Promise<Record<string, number> | null> {
  try {
    const res = await request(`${baseUrl}/stats`, 'GET', null, timeoutMs);
    return res.status === 200 ? (JSON.parse(res.body) as Record<string, number>) : null;
  } catch {
    return null;
  }
}

export async function setPartitioned(baseUrl: string, on: boolean): Promise<void> {
  await request(`${baseUrl}/partition?on=${on ? 1 : 0}`, 'POST', null, 2000);
}

export function closeClientConnections(): void {
  agent.destroy();
}
