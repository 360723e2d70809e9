import { describe, it, expect } from 'vitest';
import { authenticate, type AuthnRequest, type PeerCertificate } from './authenticator.js';
import { x509Authenticator } from './x509-authenticator.js';

const req = (peerCertificate?: PeerCertificate): AuthnRequest => ({ header: () => undefined, peerCertificate });

describe('authentication', () => {
  it.each([
    ['verified certificate', req({ authorized: true, commonName: 'alice', organizations: ['dev', 'ops'] }), { user: { name: 'alice', groups: ['dev', 'ops', 'system:authenticated'] } }],
    ['no certificate, anonymous on', req(), { user: { name: 'system:anonymous', groups: ['system:unauthenticated'] } }],
    ['untrusted certificate', req({ authorized: false, commonName: 'mallory', organizations: ['system:masters'], authorizationError: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' }), { error: expect.stringContaining('unknown authority') }],
  ])('%s', async (_name, request, expected) => {
    expect(await authenticate([x509Authenticator], request, { anonymous: true })).toMatchObject(expected);
  });

  it('answers 401 without credentials when anonymous access is off', async () => {
    expect(await authenticate([x509Authenticator], req(), { anonymous: false })).toEqual({ error: 'no credentials' });
  });
});
