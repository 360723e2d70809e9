// internal/loadtest/targets owns what the load tool knows of each target: its server URL and
// the TLS material and headers to reach it, read from a kubeconfig (cluster-cli/kubeconfig, as
// `clusterd members` reads it), and the control calls the coordinator makes before and after
// the load (reachability, the namespace, clean-up) — never load itself, which the worker
// processes send. Imports: cluster-cli/kubeconfig, bench/load (TLS material, the agent).

import { rootCertificates } from 'node:tls';
import type { Agent } from 'node:https';
import { tlsAgent } from '../../bench/load/http-load.js';
import type { TlsMaterial } from '../../bench/load/protocol.js';
import { httpsCall, type CallResult } from '../../bench/support/https-call.js';
import { readKubeconfig } from '../cluster-cli/kubeconfig.js';

export interface Target {
  /** The kubeconfig it came from, as given on the command line. */
  kubeconfig: string;
  /** The server URL without a trailing slash. */
  server: string;
  tls: TlsMaterial;
  /** Headers every request carries (the bearer token, when the kubeconfig has one). */
  headers: Record<string, string>;
}

/** Reads each kubeconfig; throws KubeconfigError with the file and the problem. */
export function targetsFrom(kubeconfigs: readonly string[], context: string | undefined): Target[] {
  return kubeconfigs.map((path): Target => {
    const c = readKubeconfig(path, context === undefined ? {} : { context });
    return {
      kubeconfig: path,
      server: c.server.replace(/\/+$/, ''),
      tls: {
        // No CA in the kubeconfig: the public roots, as kubectl would use the system's.
        ca: c.caPem ?? rootCertificates.join('\n'),
        ...(c.certPem ? { cert: c.certPem, key: c.keyPem } : {}),
        ...(c.tlsServerName ? { servername: c.tlsServerName } : {}),
        ...(c.insecureSkipTlsVerify ? { rejectUnauthorized: false } : {}),
      },
      headers: c.token ? { authorization: `Bearer ${c.token}` } : ({} as Record<string, string>),
    };
  });
}

export class TargetError extends Error {
  override name = 'TargetError';
}

/** Control calls to one target from the coordinator process. */
export class TargetClient {
  private readonly agent: Agent;
  constructor(readonly target: Target) {
    this.agent = tlsAgent(target.tls, 4);
  }

  call(method: string, path: string, body?: unknown, timeoutMs = 10_000): Promise<CallResult> {
    return httpsCall(this.agent, `${this.target.server}${path}`, {
      method,
      headers: { ...this.target.headers, accept: 'application/json' },
      timeoutMs,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  }

  /** Checks the target answers and accepts the credentials; throws TargetError saying why not. */
  async check(): Promise<void> {
    const where = `${this.target.server} (kubeconfig ${this.target.kubeconfig})`;
    let r: CallResult;
    try {
      r = await this.call('GET', '/api/v1/namespaces?limit=1', undefined, 5000);
    } catch (e) {
      const err = e as NodeJS.ErrnoException;
      throw new TargetError(`cannot reach ${where}: ${err.code && !err.message.includes(err.code) ? `${err.code} ` : ''}${err.message}`);
    }
    if (r.status === 401) throw new TargetError(`${where} refused the kubeconfig's credentials (401 Unauthorized)`);
    if (r.status === 403) throw new TargetError(`${where} does not allow these credentials to list namespaces (403 Forbidden): ${statusMessage(r)}`);
    if (r.status !== 200) throw new TargetError(`${where} answered ${r.status}: ${statusMessage(r)}`);
  }

  close(): void {
    this.agent.destroy();
  }
}

/** The message of a Status answer, else the start of the body. */
export function statusMessage(r: CallResult): string {
  const text = r.body.toString('utf8');
  try {
    const s = JSON.parse(text) as { message?: unknown };
    if (typeof s.message === 'string' && s.message) return s.message;
  } catch {
    // not JSON: the text itself says more than nothing
  }
  return text.slice(0, 300) || '(empty answer)';
}
