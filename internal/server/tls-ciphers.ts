// internal/server/tls-ciphers owns the serving side's cipher preference. Node's default lets the
// client choose among the TLS 1.3 suites. Go clients (kubectl, client-go) list AES-128-GCM
// first, but OpenSSL-based ones (Python's kubernetes client, Node's) list TLS_AES_256_GCM_SHA384
// first, so every byte of their watch streams was encrypted with AES-256. Upstream's Go server
// chooses itself: AES-128-GCM first, then ChaCha20-Poly1305, then
// AES-256-GCM, and ChaCha20 first for a client that names it first (one without AES hardware).
// AES-128-GCM costs 10 AES rounds a block to AES-256's 14, and both ends of a watch stream pay
// them on every byte. The TLS 1.2 part keeps Node's default list, which already puts AES-128-GCM
// first. Imports: node only.

import { constants } from 'node:crypto';
import { DEFAULT_CIPHERS } from 'node:tls';

/** TLS 1.3 suites in upstream's order on hardware with AES. */
const TLS13_SUITES = ['TLS_AES_128_GCM_SHA256', 'TLS_CHACHA20_POLY1305_SHA256', 'TLS_AES_256_GCM_SHA384'];

/** Options for a serving TLS context (tls.createServer, http2.createSecureServer, https.createServer). */
export const servingCipherPreference = {
  ciphers: [...TLS13_SUITES, ...DEFAULT_CIPHERS.split(':').filter((c) => !c.startsWith('TLS_'))].join(':'),
  honorCipherOrder: true,
  // A client listing ChaCha20-Poly1305 first (no AES hardware) still gets it, as from upstream.
  secureOptions: constants.SSL_OP_PRIORITIZE_CHACHA,
} as const;
