// internal/cluster-cli/members-client owns the operator's calls to the cluster's /cluster/v1
// API over HTTPS with a kubeconfig's credentials: the membership API (GET /cluster/v1/members,
// DELETE /cluster/v1/members/<name>) here, and the one request both it and the join-token
// client (token-client.ts) make (`clusterApiCall`). A refusal comes back as a Kubernetes
// Status; its message becomes the error's. Imports: kubeconfig (the credentials type).

import { request as httpsRequest } from 'node:https';
import type { KubeconfigCredentials } from './kubeconfig.js';

export type MemberRole = 'leader' | 'follower' | 'learner' | 'candidate';

/** One replica as the server reports it; fields beyond these are kept for `-o json`. */
export interface Member {
  name: string;
  id: number;
  role: MemberRole | string;
  peerAddress: string;
  apiAddress: string;
  term: number;
  applied: number;
  lag: number;
  configHash: string;
  /** Absent when the replica that answered cannot tell (a follower about another follower). */
  reachable?: boolean;
  [field: string]: unknown;
}

export interface MemberList {
  kind: 'MemberList';
  members: Member[];
  [field: string]: unknown;
}

export class MembersApiError extends Error {
  override name = 'MembersApiError';
  /** The HTTP status, when the server answered. */
  readonly code: number | undefined;
  constructor(message: string, code?: number) {
    super(message);
    this.code = code;
  }
}

export interface RequestTimers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export interface RequestOptions {
  /** Whole-request deadline. Default 30 s. */
  timeoutMs?: number;
  /** Where the deadline's timer is set; tests fire it instead of waiting. Default: the real ones. */
  timers?: RequestTimers;
}

const realTimers: RequestTimers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
};

const MEMBERS_PATH = '/cluster/v1/members';
const MAX_BODY_BYTES = 16 << 20;

export async function listMembers(creds: KubeconfigCredentials, options: RequestOptions = {}): Promise<MemberList> {
  const { status, body } = await clusterApiCall(creds, 'GET', MEMBERS_PATH, options);
  // The list always exists where the API is served, so a 404 means a server without it.
  if (status === 404) throw new MembersApiError(`${creds.server} has no membership API (${MEMBERS_PATH} not found): is it a clustered clusterd?`, status);
  if (status < 200 || status > 299) throw refusal(creds, status, body);
  if (!isObject(body) || !Array.isArray(body['members']) || !body['members'].every(isObject)) {
    throw new MembersApiError(`unexpected answer from ${creds.server}${MEMBERS_PATH}: not a MemberList`, status);
  }
  return body as MemberList;
}

/** Removes replica `name` from the cluster; resolves with the server's message, if any. */
export async function removeMember(creds: KubeconfigCredentials, name: string, options: RequestOptions = {}): Promise<string | undefined> {
  const { status, body } = await clusterApiCall(creds, 'DELETE', `${MEMBERS_PATH}/${encodeURIComponent(name)}`, options);
  if (status < 200 || status > 299) throw refusal(creds, status, body);
  return isObject(body) && typeof body['message'] === 'string' && body['message'] ? body['message'] : undefined;
}

export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isStatus = (v: unknown): v is Record<string, unknown> => isObject(v) && v['kind'] === 'Status';

export function refusal(creds: KubeconfigCredentials, status: number, body: unknown): MembersApiError {
  if (isStatus(body) && typeof body['message'] === 'string' && body['message']) return new MembersApiError(body['message'], status);
  const text = typeof body === 'string' ? body.trim().slice(0, 200) : JSON.stringify(body).slice(0, 200);
  return new MembersApiError(`${creds.server} answered ${status}${text ? `: ${text}` : ''}`, status);
}

const UNTRUSTED_SERVER = new Set([
  'SELF_SIGNED_CERT_IN_CHAIN', 'DEPTH_ZERO_SELF_SIGNED_CERT', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_GET_ISSUER_CERT', 'CERT_SIGNATURE_FAILURE',
]);

/** What OpenSSL's wording leaves the operator to guess, for the usual kubeconfig mistakes. */
function connectHint(e: NodeJS.ErrnoException, creds: KubeconfigCredentials, answered: boolean): string {
  if (e.code && UNTRUSTED_SERVER.has(e.code)) {
    return creds.caPem ? " (the server's certificate is not signed by the kubeconfig's certificate-authority)" : ' (the kubeconfig names no certificate-authority)';
  }
  if (e.code === 'ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED') return ' (the server requires a client certificate and the kubeconfig user has none)';
  // Under TLS 1.3 a server that refuses the client certificate does so after the client's side
  // of the handshake is done, so the refusal shows as a reset before any answer.
  if (e.code === 'ECONNRESET' && !answered && creds.certPem) return " (the server closed the connection before answering: is the client certificate from this cluster's CA?)";
  return '';
}

/** One request (with a JSON body when `json` is given); the answer is parsed JSON when it is JSON, else its text. */
export function clusterApiCall(creds: KubeconfigCredentials, method: string, path: string, options: RequestOptions, json?: unknown): Promise<{ status: number; body: unknown }> {
  const base = new URL(creds.server);
  // The server URL may carry a path prefix (a proxy in front); the API path goes below it.
  const url = new URL(base.pathname.replace(/\/+$/, '') + path, base);
  const timeoutMs = options.timeoutMs ?? 30_000;
  return new Promise((resolveCall, reject) => {
    const req = httpsRequest(
      url,
      {
        method,
        headers: {
          accept: 'application/json',
          'user-agent': 'clusterd-cli',
          ...(json !== undefined ? { 'content-type': 'application/json' } : {}),
          ...(creds.token ? { authorization: `Bearer ${creds.token}` } : {}),
        },
        ca: creds.caPem,
        cert: creds.certPem,
        key: creds.keyPem,
        servername: creds.tlsServerName,
        rejectUnauthorized: !creds.insecureSkipTlsVerify,
        // One request per command: a kept-alive socket would only hold the process open.
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_BODY_BYTES) {
            req.destroy(new Error(`answer larger than ${MAX_BODY_BYTES} bytes`));
            return;
          }
          chunks.push(chunk);
        });
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: unknown = text;
          try {
            body = JSON.parse(text);
          } catch {
            // not JSON: the text stands for itself in the error
          }
          resolveCall({ status: res.statusCode ?? 0, body });
        });
        res.on('error', (e) => reject(new MembersApiError(`${method} ${url.href}: ${e.message}`)));
      },
    );
    const timers = options.timers ?? realTimers;
    const timer = timers.setTimeout(() => req.destroy(new Error(`no answer within ${timeoutMs / 1000} s`)), timeoutMs);
    let answered = false;
    req.on('response', () => (answered = true));
    req.on('close', () => timers.clearTimeout(timer));
    req.on('error', (e: NodeJS.ErrnoException & { reason?: string }) => {
      // OpenSSL's errors carry a one-line reason beside a message with its source location.
      const what = e.code?.startsWith('ERR_SSL_') && e.reason ? e.reason : e.message.trim();
      reject(new MembersApiError(`cannot reach ${url.origin}: ${what}${connectHint(e, creds, answered)}`));
    });
    req.end(json !== undefined ? JSON.stringify(json) : undefined);
  });
}
