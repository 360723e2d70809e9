// internal/cluster-cli/token-client owns the operator's calls to the cluster's join-token API
// (GET and POST /cluster/v1/tokens, DELETE /cluster/v1/tokens/<id>) with a kubeconfig's
// credentials, through the request members-client makes. Imports: kubeconfig (the credentials
// type), members-client (the request, refusals).

import type { KubeconfigCredentials } from './kubeconfig.js';
import { clusterApiCall, isObject, MembersApiError, refusal, type RequestOptions } from './members-client.js';

/** A token as the server lists it (never its secret); fields beyond these are kept for `-o json`. */
export interface TokenView {
  id: string;
  created: string;
  /** RFC 3339, or null: never expires. */
  expires: string | null;
  expired: boolean;
  description: string;
  [field: string]: unknown;
}

const TOKENS_PATH = '/cluster/v1/tokens';

/** The collection exists wherever a clustered replica serves, so a 404 on it means a server without it. */
function failure(creds: KubeconfigCredentials, status: number, body: unknown): MembersApiError | undefined {
  if (status === 404) return new MembersApiError(`${creds.server} has no join-token API (${TOKENS_PATH} not found): is it a clustered clusterd?`, status);
  return status < 200 || status > 299 ? refusal(creds, status, body) : undefined;
}

const isView = (v: unknown): v is TokenView => isObject(v) && typeof v['id'] === 'string';

export async function listTokens(creds: KubeconfigCredentials, options: RequestOptions = {}): Promise<TokenView[]> {
  const { status, body } = await clusterApiCall(creds, 'GET', TOKENS_PATH, options);
  const failed = failure(creds, status, body);
  if (failed) throw failed;
  if (!isObject(body) || !Array.isArray(body['tokens']) || !body['tokens'].every(isView)) {
    throw new MembersApiError(`unexpected answer from ${creds.server}${TOKENS_PATH}: not a JoinTokenList`, status);
  }
  return body['tokens'];
}

/** Creates a token; resolves with its full text (the only time the secret is shown) and its view. */
export async function createToken(
  creds: KubeconfigCredentials,
  request: { ttlSeconds: number; description: string },
  options: RequestOptions = {},
): Promise<TokenView & { token: string }> {
  const { status, body } = await clusterApiCall(creds, 'POST', TOKENS_PATH, options, request);
  const failed = failure(creds, status, body);
  if (failed) throw failed;
  if (!isView(body) || typeof body['token'] !== 'string') throw new MembersApiError(`unexpected answer from ${creds.server}${TOKENS_PATH}: not a JoinToken`, status);
  return body as TokenView & { token: string };
}

/** Revokes token `id`; resolves with the server's message, if any. */
export async function revokeToken(creds: KubeconfigCredentials, id: string, options: RequestOptions = {}): Promise<string | undefined> {
  const { status, body } = await clusterApiCall(creds, 'DELETE', `${TOKENS_PATH}/${encodeURIComponent(id)}`, options);
  // A 404 here is the server's "not found" Status for the id.
  if (status < 200 || status > 299) throw refusal(creds, status, body);
  return isObject(body) && typeof body['message'] === 'string' && body['message'] ? body['message'] : undefined;
}
