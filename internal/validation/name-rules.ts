// internal/validation/name-rules owns the string formats the API checks everywhere: DNS-1123
// labels and subdomains, DNS-1035 labels, path-segment names, qualified names (label keys),
// label values, port names, config keys, environment variable names, IP addresses and CIDRs.
// Each check returns the list of human messages upstream clients are used to seeing (empty when
// the value is fine), so callers wrap them into FieldErrors at their own path.
// Imports: nothing from the project.

export const DNS1123_LABEL_MAX = 63;
export const DNS1123_SUBDOMAIN_MAX = 253;
export const DNS1035_LABEL_MAX = 63;
export const LABEL_VALUE_MAX = 63;
export const QUALIFIED_NAME_MAX = 63;

const DNS1123_LABEL_FMT = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const DNS1123_SUBDOMAIN_FMT = `${DNS1123_LABEL_FMT}(\\.${DNS1123_LABEL_FMT})*`;
const DNS1035_LABEL_FMT = '[a-z]([-a-z0-9]*[a-z0-9])?';
const QUALIFIED_NAME_FMT = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const LABEL_VALUE_FMT = `(${QUALIFIED_NAME_FMT})?`;
const CONFIG_KEY_FMT = '[-._a-zA-Z0-9]+';
const PERCENT_FMT = '[0-9]+%';

const dns1123LabelRe = new RegExp(`^${DNS1123_LABEL_FMT}$`);
const dns1123SubdomainRe = new RegExp(`^${DNS1123_SUBDOMAIN_FMT}$`);
const dns1035LabelRe = new RegExp(`^${DNS1035_LABEL_FMT}$`);
const qualifiedNameRe = new RegExp(`^${QUALIFIED_NAME_FMT}$`);
const labelValueRe = new RegExp(`^${LABEL_VALUE_FMT}$`);
const configKeyRe = new RegExp(`^${CONFIG_KEY_FMT}$`);
const percentRe = new RegExp(`^${PERCENT_FMT}$`);

/** `must be no more than N characters`, upstream's wording. */
export const maxLenMessage = (n: number): string => `must be no more than ${n} characters`;

/** Upstream's regex explanation: the rule, examples, and the regex itself. */
export function regexMessage(msg: string, fmt: string, ...examples: string[]): string {
  if (examples.length === 0) return `${msg} (regex used for validation is '${fmt}')`;
  return `${msg} (e.g. ${examples.map((e) => `'${e}'`).join(' or ')}, regex used for validation is '${fmt}')`;
}

export const inclusiveRangeMessage = (lo: number, hi: number): string => `must be between ${lo} and ${hi}, inclusive`;

// JS string length counts UTF-16 units; upstream counts bytes. The formats below only accept
// ASCII, so the two agree whenever the value is otherwise valid.
const byteLength = (s: string): number => Buffer.byteLength(s, 'utf8');

export function isDNS1123Label(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > DNS1123_LABEL_MAX) errs.push(maxLenMessage(DNS1123_LABEL_MAX));
  if (!dns1123LabelRe.test(value)) {
    if (dns1123SubdomainRe.test(value)) errs.push('must not contain dots');
    else
      errs.push(
        regexMessage(
          "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character",
          DNS1123_LABEL_FMT,
          'my-name',
          '123-abc',
        ),
      );
  }
  return errs;
}

export function isDNS1123Subdomain(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > DNS1123_SUBDOMAIN_MAX) errs.push(maxLenMessage(DNS1123_SUBDOMAIN_MAX));
  if (!dns1123SubdomainRe.test(value)) {
    errs.push(
      regexMessage(
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
        DNS1123_SUBDOMAIN_FMT,
        'example.com',
      ),
    );
  }
  return errs;
}

export function isDNS1035Label(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > DNS1035_LABEL_MAX) errs.push(maxLenMessage(DNS1035_LABEL_MAX));
  if (!dns1035LabelRe.test(value)) {
    errs.push(
      regexMessage(
        "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character",
        DNS1035_LABEL_FMT,
        'my-name',
        'abc-123',
      ),
    );
  }
  return errs;
}

/** Names that end up as one URL path segment: anything but `.`, `..`, `/` and `%`. */
export function isPathSegmentName(value: string): string[] {
  if (value === '.' || value === '..') return [`may not be '${value}'`];
  return isPathSegmentPrefix(value);
}

export function isPathSegmentPrefix(value: string): string[] {
  const errs: string[] = [];
  if (value.includes('/')) errs.push("may not contain '/'");
  if (value.includes('%')) errs.push("may not contain '%'");
  return errs;
}

const QUALIFIED_NAME_RULE =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";

// Label and annotation keys and finalizer names repeat on every write of an object: remember
// the ones that passed (only those: a failure builds fresh messages). Bounded: cleared when full.
const QUALIFIED_LIMIT = 4096;
const qualified = new Set<string>();

/** A label key / qualified name: optional DNS-subdomain prefix and `/`, then a ≤63-character name. */
export function isQualifiedName(value: string): string[] {
  if (qualified.has(value)) return [];
  const errs = qualifiedNameErrors(value);
  if (errs.length === 0) {
    if (qualified.size >= QUALIFIED_LIMIT) qualified.clear();
    qualified.add(value);
  }
  return errs;
}

function qualifiedNameErrors(value: string): string[] {
  const errs: string[] = [];
  const parts = value.split('/');
  let name: string;
  if (parts.length === 1) {
    name = parts[0]!;
  } else if (parts.length === 2) {
    const prefix = parts[0]!;
    name = parts[1]!;
    if (prefix.length === 0) errs.push('prefix part must be non-empty');
    else for (const m of isDNS1123Subdomain(prefix)) errs.push(`prefix part ${m}`);
  } else {
    return [
      `a valid label key ${regexMessage(QUALIFIED_NAME_RULE, QUALIFIED_NAME_FMT, 'MyName', 'my.name', '123-abc')}` +
        " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
    ];
  }
  if (name.length === 0) errs.push('name part must be non-empty');
  else if (byteLength(name) > QUALIFIED_NAME_MAX) errs.push(`name part ${maxLenMessage(QUALIFIED_NAME_MAX)}`);
  if (!qualifiedNameRe.test(name)) {
    errs.push(`name part ${regexMessage(QUALIFIED_NAME_RULE, QUALIFIED_NAME_FMT, 'MyName', 'my.name', '123-abc')}`);
  }
  return errs;
}

export function isLabelValue(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > LABEL_VALUE_MAX) errs.push(maxLenMessage(LABEL_VALUE_MAX));
  if (!labelValueRe.test(value)) {
    errs.push(
      regexMessage(
        "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
        LABEL_VALUE_FMT,
        'MyValue',
        'my_value',
        '12345',
      ),
    );
  }
  return errs;
}

/** ConfigMap and Secret keys. */
export function isConfigMapKey(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > DNS1123_SUBDOMAIN_MAX) errs.push(maxLenMessage(DNS1123_SUBDOMAIN_MAX));
  if (!configKeyRe.test(value)) {
    errs.push(
      regexMessage("a valid config key must consist of alphanumeric characters, '-', '_' or '.'", CONFIG_KEY_FMT, 'key.name', 'KEY_NAME', 'key-name'),
    );
  }
  errs.push(...chdirPrefixMessages(value));
  return errs;
}

function chdirPrefixMessages(value: string): string[] {
  if (value === '.') return ["must not be '.'"];
  if (value === '..') return ["must not be '..'"];
  if (value.startsWith('..')) return ["must not start with '..'"];
  return [];
}

/** IANA service names used as port names: ≤15 chars of [-a-z0-9], at least one letter, no `--`. */
export function isValidPortName(port: string): string[] {
  const errs: string[] = [];
  if (port.length > 15) errs.push(maxLenMessage(15));
  if (!/^[-a-z0-9]+$/.test(port)) errs.push('must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)');
  if (!/[a-z]/.test(port)) errs.push('must contain at least one letter (a-z)');
  if (port.includes('--')) errs.push('must not contain consecutive hyphens');
  if (port.length > 0 && (port.startsWith('-') || port.endsWith('-'))) errs.push('must not begin or end with a hyphen');
  return errs;
}

export function isValidPortNum(port: number): string[] {
  return Number.isInteger(port) && port >= 1 && port <= 65535 ? [] : [inclusiveRangeMessage(1, 65535)];
}

export function isInRange(value: number, lo: number, hi: number): string[] {
  return value >= lo && value <= hi ? [] : [inclusiveRangeMessage(lo, hi)];
}

export function isValidPercent(value: string): string[] {
  return percentRe.test(value)
    ? []
    : [regexMessage("a valid percent string must be a numeric string followed by an ending '%'", PERCENT_FMT, '1%', '93%')];
}

/**
 * Environment variable names. Upstream relaxed the rule (RelaxedEnvironmentVariableValidation, on
 * by default since 1.32): any printable ASCII except '='.
 */
export function isEnvVarName(value: string): string[] {
  const errs: string[] = [];
  if (value.length === 0) errs.push('environment variable name must be non-empty');
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c < 0x20 || c > 0x7e || c === 0x3d) {
      errs.push("a valid environment variable name must consist only of printable ASCII characters other than '='");
      break;
    }
  }
  return errs;
}

const IPV4_RE = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

/** Canonical-ish IPv4 (no leading zeros, as upstream requires since 1.30) or IPv6. */
export function ipFamilyOf(value: string): 'IPv4' | 'IPv6' | undefined {
  if (IPV4_RE.test(value)) return 'IPv4';
  if (isIPv6(value)) return 'IPv6';
  return undefined;
}

function isIPv6(value: string): boolean {
  if (!value.includes(':') || value.includes('%')) return false;
  let text = value;
  // An embedded IPv4 tail (`::ffff:1.2.3.4`) stands for two groups.
  const lastColon = text.lastIndexOf(':');
  const tail = text.slice(lastColon + 1);
  if (tail.includes('.')) {
    if (!IPV4_RE.test(tail)) return false;
    text = `${text.slice(0, lastColon + 1)}0:0`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return false;
  const groupsOf = (s: string): string[] | undefined => {
    if (s === '') return [];
    const gs = s.split(':');
    return gs.every((g) => /^[0-9a-fA-F]{1,4}$/.test(g)) ? gs : undefined;
  };
  if (halves.length === 2) {
    const left = groupsOf(halves[0]!);
    const right = groupsOf(halves[1]!);
    return !!left && !!right && left.length + right.length <= 7;
  }
  const all = groupsOf(text);
  return !!all && all.length === 8;
}

export function isValidIP(value: string): string[] {
  return ipFamilyOf(value)
    ? []
    : ['must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)'];
}

export function isValidCIDR(value: string): string[] {
  const slash = value.indexOf('/');
  const bad = ['must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)'];
  if (slash < 0) return bad;
  const family = ipFamilyOf(value.slice(0, slash));
  const bitsText = value.slice(slash + 1);
  if (!family || !/^(0|[1-9]\d{0,2})$/.test(bitsText)) return bad;
  const bits = Number(bitsText);
  return bits <= (family === 'IPv4' ? 32 : 128) ? [] : bad;
}

/** Upstream's `IsFullyQualifiedDomainName`-style check used for Service externalName (trailing dot allowed). */
export function isDNSName(value: string): string[] {
  const name = value.endsWith('.') ? value.slice(0, -1) : value;
  return isDNS1123Subdomain(name);
}

/**
 * Makes a generateName prefix checkable as a full name: upstream drops the last two characters of
 * a prefix ending in '-' and appends 'a' (the random suffix will follow the dash).
 */
export function maskTrailingDash(name: string): string {
  return name.length > 1 && name.endsWith('-') ? `${name.slice(0, -2)}a` : name;
}
