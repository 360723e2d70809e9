// internal/admission/certificates owns upstream's three CertificateSigningRequest admission
// plugins (validating):
//   - CertificateApproval: an update of the `approval` sub-resource needs `approve` on the
//     request's signer (certificates.<group domain>, resource signers, named by the signerName
//     or by `<domain>/*`);
//   - CertificateSigning: an update of the `status` sub-resource that changes the issued
//     certificate needs `sign` on the signer, the same way;
//   - CertificateSubjectRestriction: a request for the `<label domain>/kube-apiserver-client`
//     signer may not name the system:masters group (an organization of its subject).
// Decisions come from the server's authorizer chain. Upstream's messages, as a 403 on the request.
// Imports: admission, apierrors, authz (types), naming, pki/csr-signing.

import { errors } from '../apierrors/status.js';
import type { Attributes, Decision } from '../authz/authorizer.js';
import type { Naming } from '../naming/naming.js';
import { parseCertificateRequest } from '../pki/csr-signing.js';
import type { AdmissionPlugin, AdmissionRequest, JsonObject } from './admission.js';
import { jsonEqual } from './node-restriction.js';

export type Authorize = (a: Attributes) => Promise<Decision> | Decision;

const isCsr = (req: AdmissionRequest, subresource: string) =>
  req.resource.upstreamGroup === 'certificates.k8s.io' && req.resource.resource === 'certificatesigningrequests' && req.subresource === subresource;
const signerOf = (o: JsonObject | undefined): string => {
  const s = (o?.spec as JsonObject | undefined)?.signerName;
  return typeof s === 'string' ? s : '';
};
const forbid = (req: AdmissionRequest, message: string) => errors.forbidden({ group: req.resource.group, name: req.resource.resource }, req.name || undefined, message);

/** Upstream's IsAuthorizedForSignerName: the exact signer, else every signer of its domain. */
export async function authorizedForSigner(naming: Naming, authorize: Authorize, req: AdmissionRequest, verb: 'approve' | 'sign', signerName: string): Promise<boolean> {
  const attrs = (name: string): Attributes => ({
    user: req.user,
    verb,
    isResourceRequest: true,
    path: '',
    namespace: '',
    apiGroup: naming.group('certificates.k8s.io'),
    apiVersion: '*',
    resource: 'signers',
    subresource: '',
    name,
  });
  if ((await authorize(attrs(signerName))).decision === 'allow') return true;
  const slash = signerName.indexOf('/');
  if (slash < 0) return false;
  return (await authorize(attrs(`${signerName.slice(0, slash)}/*`))).decision === 'allow';
}

/** A plugin that asks `verb` on the signer for writes of the CSR's `subresource` that `applies` to. */
function signerPermission(name: string, subresource: string, verb: 'approve' | 'sign', naming: Naming, authorize: Authorize, applies: (req: AdmissionRequest) => boolean = () => true): AdmissionPlugin {
  return {
    name,
    handles: (op) => op === 'UPDATE',
    async validate(req) {
      if (!isCsr(req, subresource) || !req.object || !applies(req)) return;
      const signer = signerOf(req.object);
      if (!(await authorizedForSigner(naming, authorize, req, verb, signer))) throw forbid(req, `user not permitted to ${verb} requests with signerName ${JSON.stringify(signer)}`);
    },
  };
}

export const certificateApproval = (naming: Naming, authorize: Authorize): AdmissionPlugin => signerPermission('CertificateApproval', 'approval', 'approve', naming, authorize);

/** Only a status write that changes the issued certificate signs. */
export const certificateSigning = (naming: Naming, authorize: Authorize): AdmissionPlugin =>
  signerPermission('CertificateSigning', 'status', 'sign', naming, authorize, (req) => {
    const cert = (o: JsonObject | undefined) => (o?.status as JsonObject | undefined)?.certificate;
    return !jsonEqual(cert(req.object), cert(req.oldObject));
  });

export function certificateSubjectRestriction(naming: Naming): AdmissionPlugin {
  const restricted = `${naming.labelDomain}/kube-apiserver-client`;
  return {
    name: 'CertificateSubjectRestriction',
    handles: (op) => op === 'CREATE',
    validate(req) {
      if (!isCsr(req, '') || !req.object || signerOf(req.object) !== restricted) return;
      let organizations: string[];
      try {
        const request = (req.object.spec as JsonObject).request;
        organizations = parseCertificateRequest(Buffer.from(typeof request === 'string' ? request : '', 'base64').toString('utf8')).organizations;
      } catch (e) {
        throw forbid(req, `failed to parse CSR: ${e instanceof Error ? e.message : String(e)}`);
      }
      if (organizations.includes('system:masters')) throw forbid(req, `use of ${restricted} signer with system:masters group is not allowed`);
    },
  };
}
