// internal/cel/lib/format owns upstream's Kubernetes `format` library: format.named(name) (an
// optional format) and format.<name>() for each of upstream's named formats, whose
// validate(string) is optional.none() for a valid value and otherwise the list of upstream's
// validation messages. Imports: lib/common, internal/validation name rules, lib/url.

import { isDNS1035Label, isDNS1123Label, isDNS1123Subdomain, isLabelValue, isQualifiedName, maskTrailingDash } from '../../validation/name-rules.js';
import { isRFC3339 } from '../../validation/schema.js';
import { type Environment, Optional, fn } from './common.js';
import { parseURL } from './url.js';

export class CelFormat {
  constructor(
    readonly name: string,
    readonly check: (s: string) => string[],
  ) {}
}

const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

function isDate(s: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s);
  if (!m) return false;
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  return d.getUTCFullYear() === Number(m[1]) && d.getUTCMonth() === Number(m[2]) - 1 && d.getUTCDate() === Number(m[3]);
}

const prefix = (check: (s: string) => string[]) => (s: string) => check(maskTrailingDash(s));

export const NAMED_FORMATS: ReadonlyMap<string, CelFormat> = new Map(
  (
    [
      ['dns1123Label', isDNS1123Label],
      ['dns1123Subdomain', isDNS1123Subdomain],
      ['dns1035Label', isDNS1035Label],
      ['qualifiedName', isQualifiedName],
      ['dns1123LabelPrefix', prefix(isDNS1123Label)],
      ['dns1123SubdomainPrefix', prefix(isDNS1123Subdomain)],
      ['dns1035LabelPrefix', prefix(isDNS1035Label)],
      ['labelValue', isLabelValue],
      ['uri', (s: string) => {
        const u = parseURL(s);
        return typeof u === 'string' ? [`invalid URI: ${u}`] : [];
      }],
      ['uuid', (s: string) => (UUID.test(s) ? [] : ['does not match the UUID format'])],
      ['byte', (s: string) => (BASE64.test(s) ? [] : ['invalid base64'])],
      ['date', (s: string) => (isDate(s) ? [] : ['invalid date'])],
      ['datetime', (s: string) => (isRFC3339(s) ? [] : ['invalid datetime'])],
    ] as const
  ).map(([name, check]) => [name, new CelFormat(name, check)]),
);

class FormatNamespace {}

export function registerFormat(env: Environment): void {
  env.registerType('kubernetes.NamedFormat', CelFormat);
  env.registerType('kubernetes.FormatNamespace', FormatNamespace);
  env.registerConstant('format', 'kubernetes.FormatNamespace', new FormatNamespace());
  fn(env, 'kubernetes.FormatNamespace.named(string): optional<kubernetes.NamedFormat>', (_ns: unknown, name: string) => {
    const f = NAMED_FORMATS.get(name);
    return f ? Optional.of(f) : Optional.none();
  });
  for (const [name, f] of NAMED_FORMATS) fn(env, `kubernetes.FormatNamespace.${name}(): kubernetes.NamedFormat`, () => f);
  fn(env, 'kubernetes.NamedFormat.validate(string): optional<list<string>>', (f: CelFormat, s: string) => {
    const errs = f.check(s);
    return errs.length === 0 ? Optional.none() : Optional.of(errs);
  });
}
