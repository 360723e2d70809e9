// internal/selectors/label-syntax owns the syntax rules of label keys and label values (qualified
// names with an optional DNS-subdomain prefix, values of at most 63 characters of a small
// alphabet) and the exact message texts upstream prints when one is broken, because clients and
// people compare them. Each check returns a list of messages, empty when the input is valid.
// Imports: nothing from the project.

const LABEL_KEY_NAME_MAX = 63;
const LABEL_VALUE_MAX = 63;
const DNS1123_SUBDOMAIN_MAX = 253;

const LABEL_KEY_NAME_FMT = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const LABEL_KEY_NAME_RE = new RegExp(`^${LABEL_KEY_NAME_FMT}$`);
const LABEL_KEY_ERR = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";

const LABEL_VALUE_FMT = `(${LABEL_KEY_NAME_FMT})?`;
const LABEL_VALUE_RE = new RegExp(`^${LABEL_VALUE_FMT}$`);
const LABEL_VALUE_ERR =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";

const DNS1123_LABEL_FMT = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const DNS1123_SUBDOMAIN_FMT = `${DNS1123_LABEL_FMT}(\\.${DNS1123_LABEL_FMT})*`;
const DNS1123_SUBDOMAIN_RE = new RegExp(`^${DNS1123_SUBDOMAIN_FMT}$`);
const DNS1123_SUBDOMAIN_ERR =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";

/** `must be no more than N characters`, upstream's length message. */
export const maxLenError = (n: number): string => `must be no more than ${n} characters`;
export const emptyError = (): string => 'must be non-empty';

/**
 * Upstream's regex message: the rule, then examples and the pattern, e.g.
 * `... (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '...')`.
 * The doubled space after each example's comma is upstream's and clients' tests quote it.
 */
export function regexError(msg: string, fmt: string, ...examples: string[]): string {
  if (examples.length === 0) return `${msg} (regex used for validation is '${fmt}')`;
  let out = `${msg} (e.g. `;
  examples.forEach((ex, i) => {
    if (i > 0) out += ' or ';
    out += `'${ex}', `;
  });
  return `${out}regex used for validation is '${fmt}')`;
}

/** RFC 1123 subdomain (the optional prefix of a label key, and many object names). */
export function dns1123SubdomainErrors(value: string): string[] {
  const errs: string[] = [];
  if (value.length > DNS1123_SUBDOMAIN_MAX) errs.push(maxLenError(DNS1123_SUBDOMAIN_MAX));
  if (!DNS1123_SUBDOMAIN_RE.test(value)) errs.push(regexError(DNS1123_SUBDOMAIN_ERR, DNS1123_SUBDOMAIN_FMT, 'example.com'));
  return errs;
}

/** A label key (also called a qualified name): `[prefix/]name`. */
export function labelKeyErrors(value: string): string[] {
  const errs: string[] = [];
  const slash = value.indexOf('/');
  let name = value;
  if (slash >= 0) {
    const prefix = value.slice(0, slash);
    name = value.slice(slash + 1);
    if (name.includes('/')) {
      return [
        `a valid label key ${regexError(LABEL_KEY_ERR, LABEL_KEY_NAME_FMT, 'MyName', 'my.name', '123-abc')}` +
          " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
      ];
    }
    if (prefix.length === 0) errs.push(`prefix part ${emptyError()}`);
    else for (const m of dns1123SubdomainErrors(prefix)) errs.push(`prefix part ${m}`);
  }
  if (name.length === 0) errs.push(`name part ${emptyError()}`);
  else if (name.length > LABEL_KEY_NAME_MAX) errs.push(`name part ${maxLenError(LABEL_KEY_NAME_MAX)}`);
  if (!LABEL_KEY_NAME_RE.test(name)) {
    errs.push(`name part ${regexError(LABEL_KEY_ERR, LABEL_KEY_NAME_FMT, 'MyName', 'my.name', '123-abc')}`);
  }
  return errs;
}

/** A label value: empty, or up to 63 characters that start and end alphanumeric. */
export function labelValueErrors(value: string): string[] {
  const errs: string[] = [];
  if (value.length > LABEL_VALUE_MAX) errs.push(maxLenError(LABEL_VALUE_MAX));
  if (!LABEL_VALUE_RE.test(value)) errs.push(regexError(LABEL_VALUE_ERR, LABEL_VALUE_FMT, 'MyValue', 'my_value', '12345'));
  return errs;
}

export const isLabelKey = (value: string): boolean => labelKeyErrors(value).length === 0;
export const isLabelValue = (value: string): boolean => labelValueErrors(value).length === 0;
