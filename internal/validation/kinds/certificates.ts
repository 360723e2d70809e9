// internal/validation/kinds/certificates owns the CertificateSigningRequest rules of upstream
// 1.32: spec.request a valid, self-signed PEM request; usages given, known and without
// duplicates; a fully qualified signerName (`domain/path`) and not the legacy-unknown signer
// through v1; expirationSeconds of at least 600; status conditions typed, Approved and Denied
// only "True" and never both, no type twice, and an update removing no Approved, Denied or
// Failed condition; status.certificate only CERTIFICATE PEM blocks, set once. An update whose
// old object already broke a spec rule is not refused for it again, as upstream relaxes its
// options from the old object. Signer-specific usage rules belong to the signers.
// Imports: apierrors (FieldError), pki/csr-signing, name-rules, kinds/common.

import { X509Certificate } from 'node:crypto';
import { fieldErrors, fieldPath, type FieldError } from '../../apierrors/field-errors.js';
import { KNOWN_USAGES, parseCertificateRequest } from '../../pki/csr-signing.js';
import { DNS1123_LABEL_MAX, DNS1123_SUBDOMAIN_MAX, isDNS1123Label } from '../name-rules.js';
import { isObject, jsonEqual, type JsonObject } from '../plain-json.js';
import type { KindValidator } from './common.js';

const SORTED_USAGES = [...KNOWN_USAGES].sort();

export function validateSignerName(path: string, signerName: string): FieldError[] {
  if (!signerName) return [fieldErrors.required(path, '')];
  const segments = signerName.split('/');
  if (segments.length !== 2) return [fieldErrors.invalid(path, signerName, "must be a fully qualified domain and path of the form 'example.com/signer-name'")];
  const [domain, rest] = segments as [string, string];
  const errs: FieldError[] = [];
  if (domain.length > DNS1123_SUBDOMAIN_MAX) errs.push(fieldErrors.tooLong(path, DNS1123_SUBDOMAIN_MAX));
  const domainLabels = domain.split('.');
  for (const label of domainLabels) {
    const problems = isDNS1123Label(label);
    if (problems.length) {
      for (const p of problems) errs.push(fieldErrors.invalid(path, domain, `validating label "${label}": ${p}`));
      break;
    }
  }
  if (domainLabels.length < 2) errs.push(fieldErrors.invalid(path, domain, 'should be a domain with at least two segments separated by dots'));
  for (const label of rest.split('.')) {
    const problems = isDNS1123Label(label);
    if (problems.length) {
      for (const p of problems) errs.push(fieldErrors.invalid(path, rest, `validating label "${label}": ${p}`));
      break;
    }
  }
  if (rest.length > DNS1123_SUBDOMAIN_MAX - DNS1123_LABEL_MAX) errs.push(fieldErrors.tooLong(path, DNS1123_SUBDOMAIN_MAX - DNS1123_LABEL_MAX));
  return errs;
}

/** Upstream's validateCertificate: '' on success, else the reason. */
export function certificateProblem(pem: string): string {
  if (!pem) return '';
  const blocks = [...pem.matchAll(/-----BEGIN ([A-Z0-9 ]+)-----\r?\n([\s\S]*?)-----END \1-----/g)];
  if (blocks.length === 0) return 'must contain at least one CERTIFICATE PEM block';
  for (const b of blocks) {
    if (b[1] !== 'CERTIFICATE') return `only CERTIFICATE PEM blocks are allowed, found "${b[1]}"`;
    if (/^[A-Za-z-]+:/m.test(b[2]!)) return 'no PEM block headers are permitted';
    try {
      new X509Certificate(Buffer.from(b[2]!.replace(/\s+/g, ''), 'base64'));
    } catch (e) {
      return `x509: malformed certificate: ${e instanceof Error ? e.message : String(e)}`;
    }
  }
  return '';
}

const b64 = (v: unknown): string => (typeof v === 'string' ? Buffer.from(v, 'base64').toString('utf8') : '');
const conditionsOf = (o: JsonObject | undefined): JsonObject[] => {
  const cs = isObject(o?.status) ? (o!.status as JsonObject).conditions : undefined;
  return Array.isArray(cs) ? (cs.filter(isObject) as JsonObject[]) : [];
};

function specErrors(csr: JsonObject, legacySigner: string, create: boolean): FieldError[] {
  const spec = isObject(csr.spec) ? (csr.spec as JsonObject) : {};
  const errs: FieldError[] = [];
  try {
    parseCertificateRequest(b64(spec.request));
  } catch (e) {
    errs.push(fieldErrors.invalid('spec.request', spec.request ?? '', e instanceof Error ? e.message : String(e)));
  }
  const usages = Array.isArray(spec.usages) ? (spec.usages as unknown[]) : [];
  if (usages.length === 0) errs.push(fieldErrors.required('spec.usages', ''));
  usages.forEach((u, i) => {
    if (typeof u !== 'string' || !KNOWN_USAGES.includes(u)) errs.push(fieldErrors.notSupported(fieldPath.index('spec.usages', i), u, SORTED_USAGES));
  });
  const seen = new Set<unknown>();
  usages.forEach((u, i) => {
    if (seen.has(u)) errs.push(fieldErrors.duplicate(fieldPath.index('spec.usages', i), u));
    seen.add(u);
  });
  const signer = typeof spec.signerName === 'string' ? spec.signerName : '';
  if (create && signer === legacySigner) errs.push(fieldErrors.invalid('spec.signerName', signer, 'the legacy signerName is not allowed via this API version'));
  else errs.push(...validateSignerName('spec.signerName', signer));
  if (typeof spec.expirationSeconds === 'number' && spec.expirationSeconds < 600) {
    errs.push(fieldErrors.invalid('spec.expirationSeconds', spec.expirationSeconds, 'may not specify a duration less than 600 seconds (10 minutes)'));
  }
  return errs;
}

function conditionErrors(csr: JsonObject): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  let approved = false;
  let denied = false;
  conditionsOf(csr).forEach((c, i) => {
    const path = fieldPath.index('status.conditions', i);
    const type = typeof c.type === 'string' ? c.type : '';
    if (!type) errs.push(fieldErrors.required(`${path}.type`, ''));
    const allowed = type === 'Approved' || type === 'Denied' ? ['True'] : ['False', 'True', 'Unknown'];
    if (!c.status) errs.push(fieldErrors.required(`${path}.status`, ''));
    else if (!allowed.includes(String(c.status))) errs.push(fieldErrors.notSupported(`${path}.status`, c.status, allowed));
    if (type === 'Approved') {
      approved = true;
      if (denied) errs.push(fieldErrors.invalid(`${path}.type`, type, 'Approved and Denied conditions are mutually exclusive'));
    } else if (type === 'Denied') {
      denied = true;
      if (approved) errs.push(fieldErrors.invalid(`${path}.type`, type, 'Approved and Denied conditions are mutually exclusive'));
    }
    if (seen.has(type)) errs.push(fieldErrors.duplicate(`${path}.type`, type));
    seen.add(type);
  });
  return errs;
}

export const validateCertificateSigningRequest: KindValidator = (csr, old, ctx) => {
  const legacySigner = `${ctx.naming.labelDomain}/legacy-unknown`;
  const errs: FieldError[] = [];
  const spec = specErrors(csr, legacySigner, old === undefined);
  // Upstream relaxes each rule the stored object already broke; here: all spec rules at once.
  if (old === undefined || specErrors(old, legacySigner, false).length === 0) errs.push(...spec);
  errs.push(...conditionErrors(csr));
  const cert = b64(isObject(csr.status) ? (csr.status as JsonObject).certificate : undefined);
  const problem = certificateProblem(cert);
  if (problem) errs.push(fieldErrors.invalid('status.certificate', '<certificate data>', problem));
  if (old) {
    for (const t of ['Approved', 'Denied', 'Failed']) {
      if (conditionsOf(csr).filter((c) => c.type === t).length < conditionsOf(old).filter((c) => c.type === t).length) {
        errs.push(fieldErrors.forbidden('status.conditions', `updates may not remove a condition of type "${t}"`));
      }
    }
    const oldCert = isObject(old.status) ? (old.status as JsonObject).certificate : undefined;
    const newCert = isObject(csr.status) ? (csr.status as JsonObject).certificate : undefined;
    if (oldCert && !jsonEqual(oldCert, newCert)) errs.push(fieldErrors.invalid('status.certificate', '<certificate data>', 'updates may not modify existing certificate content'));
  }
  return errs;
};
