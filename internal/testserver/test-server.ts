// internal/testserver/test-server owns starting a real server in-process for integration
// tests: a temporary data directory, a free port, real TLS, and clients for the admin, for
// anonymous callers and for any user the CA issues a certificate to. Test-only.
// Imports: config, server, pki, log, api-client.

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultConfig, type ServerConfig } from '../config/flags.js';
import { silentLogger } from '../log/logger.js';
import { issueCertificate, loadCertificateAuthority } from '../pki/certificates.js';
import { pkiPaths } from '../pki/pki.js';
import { startServer, type RunningServer, type StartOptions } from '../server/server.js';
import { ApiClient } from './api-client.js';

export interface TestServer {
  server: RunningServer;
  dataDir: string;
  /** system:masters client. */
  admin: ApiClient;
  /** No client certificate. */
  anonymous: ApiClient;
  /** A client with a certificate for `user` in `groups`, signed by the server's CA. */
  clientFor(user: string, groups?: string[]): Promise<ApiClient>;
  stop(): Promise<void>;
}

export async function startTestServer(overrides: Partial<ServerConfig> = {}, options: StartOptions = {}): Promise<TestServer> {
  const dataDir = overrides.dataDir ?? mkdtempSync(join(tmpdir(), 'clusterd-test-'));
  // As upstream's integration-test API server, which runs without the controller manager: the
  // CA-publishing and token controllers stay off unless a test asks for them, so a test sees
  // only the objects it writes (a CA ConfigMap in every namespace would be in every list). The
  // `default` ServiceAccount every namespace gets stays on: pods run as it (the ServiceAccount
  // admission plugin refuses a pod whose account does not exist), as in any real cluster. The
  // namespace controller, which deletion tests rely on, stays on.
  const controllers = ['*', '-root-ca-cert-publisher', '-serviceaccount-token'];
  const config: ServerConfig = { ...defaultConfig(), securePort: 0, bindAddress: '127.0.0.1', storage: 'memory', controllers, ...overrides, dataDir };
  const server = await startServer(config, { log: silentLogger, ...options });
  const p = pkiPaths(dataDir);
  const caPem = readFileSync(p.caCert, 'utf8');
  const admin = new ApiClient(server.url, { caPem, certPem: readFileSync(p.adminCert, 'utf8'), keyPem: readFileSync(p.adminKey, 'utf8') });
  const anonymous = new ApiClient(server.url, { caPem });
  const clients: ApiClient[] = [admin, anonymous];
  return {
    server,
    dataDir,
    admin,
    anonymous,
    async clientFor(user, groups = []) {
      const ca = await loadCertificateAuthority(caPem, readFileSync(p.caKey, 'utf8'));
      const { certPem, keyPem } = await issueCertificate(ca, { commonName: user, organizations: groups, usage: 'client' });
      const c = new ApiClient(server.url, { caPem, certPem, keyPem });
      clients.push(c);
      return c;
    },
    async stop() {
      for (const c of clients) c.close();
      await server.shutdown();
      if (!overrides.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
