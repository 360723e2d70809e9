// internal/cluster-cli/kubeconfig owns reading a kubeconfig file the way kubectl does for the
// subset the operator commands need: the context (current-context unless one is named), its
// cluster's server URL and CA (inline data wins over a file path; paths are relative to the
// kubeconfig's directory), and its user's client certificate and key or bearer token.
// Imports: nothing from the project (js-yaml for the file).

import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { load } from 'js-yaml';

export interface KubeconfigCredentials {
  /** The file read (absolute). */
  path: string;
  context: string;
  /** The cluster's server URL (https). */
  server: string;
  /** PEM CA bundle to verify the server against; undefined means the system's roots. */
  caPem: string | undefined;
  insecureSkipTlsVerify: boolean;
  /** Name to verify the server certificate for, when it differs from the URL's host. */
  tlsServerName: string | undefined;
  certPem: string | undefined;
  keyPem: string | undefined;
  token: string | undefined;
}

export class KubeconfigError extends Error {
  override name = 'KubeconfigError';
}

type Mapping = Record<string, unknown>;
const isMapping = (v: unknown): v is Mapping => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Reads `path` and resolves the named (or current) context's credentials. */
export function readKubeconfig(path: string, options: { context?: string } = {}): KubeconfigCredentials {
  const abs = resolve(path);
  let text: string;
  try {
    text = readFileSync(abs, 'utf8');
  } catch (e) {
    throw new KubeconfigError(`cannot read kubeconfig ${abs}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (e as Error).message}`);
  }
  return parseKubeconfig(text, abs, options);
}

/** Resolves credentials from kubeconfig text; `path` names it in messages and anchors relative paths. */
export function parseKubeconfig(text: string, path: string, options: { context?: string } = {}): KubeconfigCredentials {
  const fail = (message: string): never => {
    throw new KubeconfigError(`kubeconfig ${path}: ${message}`);
  };
  let doc: unknown;
  try {
    doc = load(text);
  } catch (e) {
    return fail(`not valid YAML: ${(e as Error).message.split('\n')[0]}`);
  }
  if (!isMapping(doc)) return fail('not a kubeconfig (expected a mapping with clusters, users and contexts)');

  const contextName = options.context ?? str(doc['current-context'], 'current-context', fail);
  if (!contextName) return fail(options.context === undefined ? 'no current-context is set (name a context with --context)' : 'the context name is empty');
  const context = named(doc, 'contexts', 'context', contextName, fail);
  const clusterName = str(context['cluster'], `contexts[${contextName}].context.cluster`, fail);
  const userName = str(context['user'], `contexts[${contextName}].context.user`, fail);
  if (!clusterName) return fail(`context "${contextName}" names no cluster`);
  const cluster = named(doc, 'clusters', 'cluster', clusterName, fail);
  const user = userName ? named(doc, 'users', 'user', userName, fail) : {};

  const at = (kind: string, name: string, key: string) => `${kind}[${name}].${key}`;
  const server = str(cluster['server'], at('clusters', clusterName, 'server'), fail);
  if (!server) return fail(`cluster "${clusterName}" has no server`);
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    return fail(`cluster "${clusterName}" has an invalid server URL "${server}"`);
  }
  if (url.protocol !== 'https:') return fail(`cluster "${clusterName}" server ${server} is not https (client certificates need TLS)`);

  const base = dirname(path);
  const pem = (kind: string, name: string, entry: Mapping, key: string): string | undefined => {
    const data = str(entry[`${key}-data`], at(kind, name, `${key}-data`), fail);
    if (data) {
      const decoded = /^[A-Za-z0-9+/=\s]+$/.test(data) ? Buffer.from(data, 'base64').toString('utf8') : '';
      if (!decoded.includes('-----BEGIN ')) return fail(`${at(kind, name, `${key}-data`)} is not base64-encoded PEM`);
      return decoded;
    }
    const file = str(entry[key], at(kind, name, key), fail);
    if (!file) return undefined;
    const abs = resolve(base, file);
    try {
      return readFileSync(abs, 'utf8');
    } catch (e) {
      return fail(`cannot read ${at(kind, name, key)} ${abs}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (e as Error).message}`);
    }
  };

  const insecure = cluster['insecure-skip-tls-verify'];
  if (insecure !== undefined && typeof insecure !== 'boolean') return fail(`${at('clusters', clusterName, 'insecure-skip-tls-verify')} must be true or false`);
  const certPem = userName ? pem('users', userName, user, 'client-certificate') : undefined;
  const keyPem = userName ? pem('users', userName, user, 'client-key') : undefined;
  if (Boolean(certPem) !== Boolean(keyPem)) {
    return fail(`user "${userName}" has a client ${certPem ? 'certificate without a key' : 'key without a certificate'}`);
  }
  let token = str(user['token'], at('users', userName, 'token'), fail) || undefined;
  const tokenFile = str(user['tokenFile'], at('users', userName, 'tokenFile'), fail);
  if (!token && tokenFile) {
    try {
      token = readFileSync(resolve(base, tokenFile), 'utf8').trim() || undefined;
    } catch (e) {
      return fail(`cannot read ${at('users', userName, 'tokenFile')} ${resolve(base, tokenFile)}: ${(e as Error).message}`);
    }
  }
  return {
    path,
    context: contextName,
    server,
    caPem: pem('clusters', clusterName, cluster, 'certificate-authority'),
    insecureSkipTlsVerify: insecure === true,
    tlsServerName: str(cluster['tls-server-name'], at('clusters', clusterName, 'tls-server-name'), fail) || undefined,
    certPem,
    keyPem,
    token,
  };
}

function str(v: unknown, what: string, fail: (m: string) => never): string {
  if (v === undefined || v === null) return '';
  if (typeof v !== 'string') return fail(`${what} must be a string`);
  return v;
}

/** The `inner` mapping of the first entry of list `listKey` called `name` (kubectl takes the first). */
function named(doc: Mapping, listKey: string, inner: string, name: string, fail: (m: string) => never): Mapping {
  const list = doc[listKey] ?? [];
  if (!Array.isArray(list)) return fail(`${listKey} must be a list`);
  const entry: unknown = list.find((e: unknown) => isMapping(e) && e['name'] === name);
  if (!isMapping(entry)) return fail(`${inner} "${name}" not found in ${listKey}`);
  const value = entry[inner];
  if (!isMapping(value)) return fail(`${listKey}[${name}] has no ${inner} mapping`);
  return value;
}
