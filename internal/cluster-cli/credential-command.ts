// internal/cluster-cli/credential-command owns `clusterd credential`, a client credential
// (exec) plugin for kubectl: it reads the ExecCredential request kubectl passes in
// KUBERNETES_EXEC_INFO (CLUSTER_EXEC_INFO under the cluster naming), obtains an OIDC ID token,
// and prints an ExecCredential of the same apiVersion with the token and its expiry, so the
// client caches it until then. The token comes from a file (--token-file) or from a
// refresh-token grant at the identity provider's token endpoint (found by discovery). Options
// may also come from the cluster's exec extension (provideClusterInfo: spec.cluster.config).
// Without a refresh token it asks for one on standard input, only when the request says
// standard input is interactive.
// Imports: args, auth/jwt/issuer-keys (the HTTPS JSON fetch).

import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fetchJson } from '../auth/jwt/issuer-keys.js';
import { flag, parseArgs, UsageError, type CommandIo } from './args.js';

const HELP = `Usage: clusterd credential [flags]

A client credential plugin: kubectl runs it (a user entry with exec) and it prints an
ExecCredential holding an OIDC ID token and its expirationTimestamp.

Flags:
  --token-file=path          Print the ID token in this file.
  --issuer-url=https-url     Identity provider: refresh the ID token at its token endpoint.
  --client-id=id             OAuth client ID for the refresh grant.
  --client-secret=secret     OAuth client secret, if the provider wants one.
  --refresh-token-file=path  File with the refresh token (asked on stdin when absent and interactive).
  --ca-file=path             CA bundle (PEM) of the provider's certificate (default: host roots).

With provideClusterInfo: true, the cluster entry's extension client.authentication.k8s.io/exec
(client.authentication.cluster.io/exec) may carry issuer-url, client-id and ca-data (base64 PEM)
instead of flags.
`;

const VERSIONS = ['v1', 'v1beta1'];

interface ExecInfo {
  apiVersion: string;
  interactive: boolean;
  clusterConfig: Record<string, unknown>;
}

function readExecInfo(env: NodeJS.ProcessEnv): ExecInfo {
  const raw = env['CLUSTER_EXEC_INFO'] ?? env['KUBERNETES_EXEC_INFO'];
  if (!raw) throw new UsageError('no ExecCredential request in KUBERNETES_EXEC_INFO or CLUSTER_EXEC_INFO: this command is run by kubectl (a user entry with exec), see --help');
  let doc: { apiVersion?: unknown; kind?: unknown; spec?: { interactive?: unknown; cluster?: { config?: unknown } } };
  try {
    doc = JSON.parse(raw) as typeof doc;
  } catch {
    throw new UsageError('the ExecCredential request is not JSON');
  }
  const apiVersion = String(doc.apiVersion);
  const m = /^client\.authentication\.(k8s|cluster)\.io\/(.+)$/.exec(apiVersion);
  if (doc.kind !== 'ExecCredential' || !m || !VERSIONS.includes(m[2]!)) {
    throw new UsageError(`unsupported ExecCredential request ${apiVersion} ${String(doc.kind)} (want client.authentication.k8s.io or .cluster.io, v1 or v1beta1)`);
  }
  const config = doc.spec?.cluster?.config;
  return { apiVersion, interactive: doc.spec?.interactive === true, clusterConfig: config && typeof config === 'object' ? (config as Record<string, unknown>) : {} };
}

/** Seconds since the epoch in the token's exp claim, when it is a JWT. */
function expiryOf(token: string): number | undefined {
  const part = token.split('.')[1];
  if (!part) return undefined;
  try {
    const exp = (JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as { exp?: unknown }).exp;
    return typeof exp === 'number' ? exp : undefined;
  } catch {
    return undefined;
  }
}

async function promptLine(io: CommandIo, question: string): Promise<string> {
  io.err(question);
  const rl = createInterface({ input: process.stdin, terminal: false });
  try {
    for await (const line of rl) return line.trim();
  } finally {
    rl.close();
  }
  return '';
}

export async function runCredentialCommand(argv: readonly string[], io: CommandIo): Promise<number> {
  const args = parseArgs(argv, { 'token-file': {}, 'issuer-url': {}, 'client-id': {}, 'client-secret': {}, 'refresh-token-file': {}, 'ca-file': {} }, 'clusterd credential');
  if (args.help) {
    io.out(HELP);
    return 0;
  }
  if (args.positionals.length) throw new UsageError(`unexpected argument "${args.positionals[0]}" (see clusterd credential --help)`);
  const info = readExecInfo(io.env);
  const fromCluster = (k: string): string | undefined => (typeof info.clusterConfig[k] === 'string' ? (info.clusterConfig[k] as string) : undefined);

  let token: string;
  const tokenFile = flag(args, 'token-file');
  if (tokenFile) {
    token = readFileSync(tokenFile, 'utf8').trim();
    if (!token) throw new Error(`${tokenFile} is empty`);
  } else {
    const issuer = flag(args, 'issuer-url') ?? fromCluster('issuer-url');
    const clientId = flag(args, 'client-id') ?? fromCluster('client-id');
    if (!issuer || !clientId) throw new UsageError('name the token: --token-file, or --issuer-url and --client-id (flags or the cluster\'s exec extension)');
    const caFile = flag(args, 'ca-file');
    const caData = fromCluster('ca-data');
    const ca = caFile ? readFileSync(caFile, 'utf8') : caData ? Buffer.from(caData, 'base64').toString('utf8') : undefined;
    const refreshFile = flag(args, 'refresh-token-file');
    let refreshToken = refreshFile ? readFileSync(refreshFile, 'utf8').trim() : '';
    if (!refreshToken) {
      if (!info.interactive) throw new Error('no refresh token and standard input is not interactive (interactiveMode Never, or no terminal): give --refresh-token-file');
      refreshToken = await promptLine(io, `Refresh token for ${issuer}: `);
      if (!refreshToken) throw new Error('no refresh token given');
    }
    const discovery = (await fetchJson(`${issuer.replace(/\/$/, '')}/.well-known/openid-configuration`, ca)) as { token_endpoint?: unknown };
    if (typeof discovery.token_endpoint !== 'string') throw new Error(`${issuer}: the discovery document names no token_endpoint`);
    const form = new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken, client_id: clientId });
    const secret = flag(args, 'client-secret');
    if (secret) form.set('client_secret', secret);
    const answer = (await fetchJson(discovery.token_endpoint, ca, { method: 'POST', body: form.toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } })) as { id_token?: unknown };
    if (typeof answer.id_token !== 'string') throw new Error(`${issuer}: the token endpoint answered without an id_token`);
    token = answer.id_token;
  }
  const exp = expiryOf(token);
  const status: Record<string, unknown> = { token };
  if (exp !== undefined) status['expirationTimestamp'] = new Date(exp * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
  io.out(JSON.stringify({ apiVersion: info.apiVersion, kind: 'ExecCredential', status }) + '\n');
  return 0;
}
