// internal/validation/kinds/config owns the ConfigMap and Secret rules: key syntax, no key in
// both data and binaryData, the 1 MiB total size, `immutable: true` freezing data and the flag
// itself, Secret type immutable and the keys each well-known Secret type requires. Well-known
// type names and annotations are spelled with the naming's label domain; the upstream
// `kubernetes.io/` spelling is recognised too.
// Imports: apierrors (FieldError), naming (via context), validation helpers, kinds/common.

import { fieldErrors, fieldPath, type FieldError } from '../../apierrors/field-errors.js';
import type { Naming } from '../../naming/naming.js';
import { isConfigMapKey } from '../name-rules.js';
import { jsonEqual, type JsonObject } from '../plain-json.js';
import { base64DecodedLength, isBase64 } from '../schema.js';
import { immutable, obj, str, type KindValidator } from './common.js';

/** Upstream's limit on the data of one ConfigMap or Secret. */
export const MAX_CONFIG_SIZE = 1024 * 1024;

function validateKeys(map: JsonObject | undefined, path: string): FieldError[] {
  const errs: FieldError[] = [];
  for (const key of Object.keys(map ?? {})) {
    for (const m of isConfigMapKey(key)) errs.push(fieldErrors.invalid(fieldPath.key(path, key), key, m));
  }
  return errs;
}

const base64Size = (v: unknown): number => (typeof v === 'string' && isBase64(v) ? base64DecodedLength(v) : 0);

function immutableData(obj_: JsonObject, old: JsonObject, keys: readonly string[]): FieldError[] {
  if (old.immutable !== true) return [];
  const errs: FieldError[] = [];
  for (const key of keys) {
    if (!jsonEqual(obj_[key] ?? {}, old[key] ?? {})) errs.push(fieldErrors.forbidden(key, 'field is immutable when `immutable` is set'));
  }
  if (obj_.immutable !== true) errs.push(fieldErrors.forbidden('immutable', 'field is immutable when `immutable` is set'));
  return errs;
}

export const validateConfigMap: KindValidator = (cm, old) => {
  const errs: FieldError[] = [];
  const data = obj(cm, 'data');
  const binary = obj(cm, 'binaryData');
  errs.push(...validateKeys(data, 'data'));
  errs.push(...validateKeys(binary, 'binaryData'));
  let total = 0;
  for (const v of Object.values(data ?? {})) total += typeof v === 'string' ? Buffer.byteLength(v) : 0;
  for (const [key, v] of Object.entries(binary ?? {})) {
    total += base64Size(v);
    if (data && key in data) errs.push(fieldErrors.invalid(fieldPath.key('binaryData', key), key, 'duplicate of key present in data'));
  }
  if (total > MAX_CONFIG_SIZE) errs.push(fieldErrors.tooLong('', MAX_CONFIG_SIZE));
  if (old) errs.push(...immutableData(cm, old, ['data', 'binaryData']));
  return errs;
};

/** The well-known Secret type a `type` string names in either spelling, or undefined. */
export function wellKnownSecretType(type: string, naming: Naming): string | undefined {
  for (const domain of new Set([naming.labelDomain, 'kubernetes.io'])) {
    if (type.startsWith(`${domain}/`)) return type.slice(domain.length + 1);
  }
  return undefined;
}

function validateSecretType(secret: JsonObject, naming: Naming): FieldError[] {
  const type = wellKnownSecretType(str(secret, 'type'), naming);
  const data = obj(secret, 'data') ?? {};
  const hasKey = (k: string): boolean => data[k] !== undefined && data[k] !== null;
  const req = (k: string): FieldError => fieldErrors.required(fieldPath.key('data', k), '');
  const errs: FieldError[] = [];
  switch (type) {
    case 'service-account-token': {
      const annotations = obj(obj(secret, 'metadata'), 'annotations') ?? {};
      const keys = [...new Set([`${naming.labelDomain}/service-account.name`, 'kubernetes.io/service-account.name'])];
      if (!keys.some((k) => typeof annotations[k] === 'string' && annotations[k] !== '')) {
        errs.push(fieldErrors.required(fieldPath.key('metadata.annotations', keys[0]!), ''));
      }
      break;
    }
    case 'dockercfg':
      if (!hasKey('.dockercfg')) errs.push(req('.dockercfg'));
      else if (!isJsonBase64(data['.dockercfg'])) errs.push(fieldErrors.invalid(fieldPath.key('data', '.dockercfg'), '<secret contents redacted>', 'must be valid JSON'));
      break;
    case 'dockerconfigjson':
      if (!hasKey('.dockerconfigjson')) errs.push(req('.dockerconfigjson'));
      else if (!isJsonBase64(data['.dockerconfigjson'])) {
        errs.push(fieldErrors.invalid(fieldPath.key('data', '.dockerconfigjson'), '<secret contents redacted>', 'must be valid JSON'));
      }
      break;
    case 'basic-auth':
      if (!hasKey('username') && !hasKey('password')) errs.push(req('username'), req('password'));
      break;
    case 'ssh-auth':
      if (base64Size(data['ssh-privatekey']) === 0) errs.push(req('ssh-privatekey'));
      break;
    case 'tls':
      if (!hasKey('tls.crt')) errs.push(req('tls.crt'));
      if (!hasKey('tls.key')) errs.push(req('tls.key'));
      break;
  }
  return errs;
}

function isJsonBase64(v: unknown): boolean {
  if (typeof v !== 'string' || !isBase64(v)) return true; // schema validation reports bad base64
  try {
    JSON.parse(Buffer.from(v, 'base64').toString('utf8'));
    return true;
  } catch {
    return false;
  }
}

export const validateSecret: KindValidator = (secret, old, ctx) => {
  const errs: FieldError[] = [];
  const data = obj(secret, 'data');
  errs.push(...validateKeys(data, 'data'));
  let total = 0;
  for (const v of Object.values(data ?? {})) total += base64Size(v);
  if (total > MAX_CONFIG_SIZE) errs.push(fieldErrors.tooLong('data', MAX_CONFIG_SIZE));
  errs.push(...validateSecretType(secret, ctx.naming));
  if (old) {
    errs.push(...immutable(secret.type, old.type, 'type'));
    errs.push(...immutableData(secret, old, ['data']));
  }
  return errs;
};

