// internal/auth/x509-authenticator owns client-certificate authentication: a certificate
// that chains to the client CA names the user by its CN and the groups by its O entries.
// A presented certificate that does not verify is rejected (401), never ignored.
// Imports: authenticator.

import { AuthnError, type Authenticator, type AuthnRequest, type PeerCertificate } from './authenticator.js';
import type { UserInfo } from './user.js';

/**
 * The user of each peer certificate: the certificate is read once per connection, so every
 * request on a keep-alive connection gets the same user (and its authenticated form, memoised
 * on it) without building either again.
 */
const users = new WeakMap<PeerCertificate, UserInfo>();

export const x509Authenticator: Authenticator = {
  name: 'x509',
  authenticate(req: AuthnRequest): UserInfo | null {
    const cert = req.peerCertificate;
    if (!cert) return null;
    if (!cert.authorized) throw new AuthnError(`x509: certificate signed by unknown authority (${cert.authorizationError ?? 'unverified'})`);
    if (!cert.commonName) throw new AuthnError('x509: certificate has no common name');
    let user = users.get(cert);
    if (!user) users.set(cert, (user = { name: cert.commonName, groups: [...cert.organizations] }));
    return user;
  },
};
