// internal/controllers/csr-signer owns upstream's `csrsigning` controller for the one signer
// this server has a use for (leader-only): an approved, not denied or failed
// CertificateSigningRequest of the `<label domain>/kube-apiserver-client` signer gets a client
// certificate from the cluster CA in status.certificate, valid for its expirationSeconds (at
// most --cluster-signing-duration's upstream default of one year). Requests whose usages that
// signer does not allow get upstream's Failed condition (SignerValidationFailure) instead, and
// so does a request that cannot be read. Requests for other signers are left to their signers.
// Imports: controllers (objects, reconciler), pki.

import type { CertificateAuthority } from '../pki/certificates.js';
import { parseCertificateRequest, signCertificateRequest } from '../pki/csr-signing.js';
import { Reconciler } from './reconciler.js';
import { metaOf, Objects, type Obj, type ResourceRef } from './objects.js';
import type { ControllerEnv } from './serviceaccount-controllers.js';

const CSRS: ResourceRef = ['certificates.k8s.io', 'v1', 'certificatesigningrequests'];
/** Upstream's --cluster-signing-duration default. */
export const MAX_SIGNING_DURATION_MS = 365 * 24 * 3600 * 1000;

export const apiServerClientSigner = (env: Pick<ControllerEnv, 'naming'>): string => `${env.naming.labelDomain}/kube-apiserver-client`;

/** Upstream's rule for kube-apiserver-client usages: '' when allowed, else why not. */
export function apiServerClientUsageProblem(usages: readonly string[]): string {
  let clientAuth = false;
  for (const u of usages) {
    if (u === 'client auth') clientAuth = true;
    else if (u !== 'digital signature' && u !== 'key encipherment') return `invalid usage for client certificate: ${u}`;
  }
  return clientAuth ? '' : 'missing required usage for client certificate: client auth';
}

const rfc3339 = (d: Date) => d.toISOString().replace(/\.\d{3}Z$/, 'Z');

export function csrSigner(env: ControllerEnv, ca: () => Promise<CertificateAuthority>, now: () => Date = () => new Date()): Reconciler {
  const objects = new Objects(env, 'certificate-controller', 'system:serviceaccount:kube-system:certificate-controller');
  const signer = apiServerClientSigner(env);
  let loaded: Promise<CertificateAuthority> | undefined;
  return new Reconciler(
    {
      name: 'csrsigning',
      sources: [{ prefix: objects.prefix(CSRS), keys: (t, e) => (t === 'DELETED' ? [] : [e.name]) }],
      async reconcile(name) {
        const csr = objects.get(CSRS, '', name);
        if (!csr || metaOf(csr).deletionTimestamp) return;
        const spec = (csr.spec ?? {}) as { signerName?: string; usages?: string[]; request?: string; expirationSeconds?: number };
        const status = (csr.status ?? {}) as { certificate?: string; conditions?: Obj[] };
        if (spec.signerName !== signer || status.certificate) return;
        const has = (type: string) => (status.conditions ?? []).some((c) => c.type === type && c.status === 'True');
        if (!has('Approved') || has('Denied') || has('Failed')) return;
        const fail = async (message: string) => {
          const t = rfc3339(now());
          const condition = { type: 'Failed', status: 'True', reason: 'SignerValidationFailure', message, lastUpdateTime: t, lastTransitionTime: t };
          env.log.info('certificate signing request failed', { name, reason: message });
          await objects.update(CSRS, '', { ...csr, status: { ...status, conditions: [...(status.conditions ?? []), condition] } }, 'status');
        };
        const problem = apiServerClientUsageProblem(spec.usages ?? []);
        if (problem) return fail(problem);
        let request;
        try {
          request = parseCertificateRequest(Buffer.from(spec.request ?? '', 'base64').toString('utf8'));
        } catch (e) {
          return fail(`unable to parse csr "${name}": ${e instanceof Error ? e.message : String(e)}`);
        }
        const duration = Math.min(MAX_SIGNING_DURATION_MS, typeof spec.expirationSeconds === 'number' ? spec.expirationSeconds * 1000 : MAX_SIGNING_DURATION_MS);
        loaded ??= ca();
        const pem = await signCertificateRequest(await loaded, request, spec.usages ?? [], duration, now());
        await objects.update(CSRS, '', { ...csr, status: { ...status, certificate: Buffer.from(pem, 'utf8').toString('base64') } }, 'status');
        env.log.info('signed certificate signing request', { name, commonName: request.commonName });
      },
    },
    env.cache,
    env.log,
  );
}
