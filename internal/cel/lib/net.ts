// internal/cel/lib/net owns upstream's Kubernetes `ip` and `cidr` libraries: ip(), isIP,
// ip.isCanonical, the IP predicates (family, isUnspecified, isLoopback, isLinkLocalMulticast,
// isLinkLocalUnicast, isGlobalUnicast), cidr(), isCIDR, containsIP, containsCIDR, prefixLength,
// masked, ip() of a CIDR, string() and equality. Parsing is strict as upstream's (Go's netip):
// no leading zeros in IPv4, no zones, and IPv4-mapped IPv6 addresses refused. Imports: lib/common.

import { CelLibraryError, type Environment, fn } from './common.js';

export class CelIP {
  constructor(readonly bytes: Uint8Array) {}
  get family(): 4 | 6 {
    return this.bytes.length === 4 ? 4 : 6;
  }
  toString(): string {
    return formatIP(this.bytes);
  }
}

export class CelCIDR {
  constructor(
    readonly ip: CelIP,
    readonly bits: number,
  ) {}
  toString(): string {
    return `${this.ip}/${this.bits}`;
  }
}

const V4_PART = /^(0|[1-9]\d{0,2})$/;

function parseV4(s: string): Uint8Array | undefined {
  const parts = s.split('.');
  if (parts.length !== 4) return undefined;
  const out = new Uint8Array(4);
  for (let i = 0; i < 4; i++) {
    if (!V4_PART.test(parts[i]!)) return undefined;
    const n = Number(parts[i]);
    if (n > 255) return undefined;
    out[i] = n;
  }
  return out;
}

function parseV6(s: string): Uint8Array | undefined {
  if (s.includes('%')) return undefined;
  let text = s;
  let tail: Uint8Array | undefined;
  const lastColon = text.lastIndexOf(':');
  if (lastColon >= 0 && text.slice(lastColon + 1).includes('.')) {
    tail = parseV4(text.slice(lastColon + 1));
    if (!tail) return undefined;
    text = `${text.slice(0, lastColon + 1)}0:0`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const groups = (p: string): number[] | undefined => {
    if (p === '') return [];
    const gs = p.split(':');
    if (!gs.every((g) => /^[0-9a-fA-F]{1,4}$/.test(g))) return undefined;
    return gs.map((g) => parseInt(g, 16));
  };
  let all: number[];
  if (halves.length === 2) {
    const left = groups(halves[0]!);
    const right = groups(halves[1]!);
    if (!left || !right || left.length + right.length > 7) return undefined;
    all = [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
  } else {
    const g = groups(text);
    if (!g || g.length !== 8) return undefined;
    all = g;
  }
  const out = new Uint8Array(16);
  all.forEach((g, i) => {
    out[2 * i] = g >> 8;
    out[2 * i + 1] = g & 0xff;
  });
  if (tail) out.set(tail, 12);
  return out;
}

function isV4Mapped(b: Uint8Array): boolean {
  return b.length === 16 && b.slice(0, 10).every((x) => x === 0) && b[10] === 0xff && b[11] === 0xff;
}

/** The address, or why not (upstream's words). */
export function parseIP(s: string): CelIP | string {
  if (s.includes('%')) return `IP address with zone value is not allowed`;
  const b = s.includes(':') ? parseV6(s) : parseV4(s);
  if (!b) return `ParseAddr(${JSON.stringify(s)}): unable to parse IP`;
  if (isV4Mapped(b)) return 'IPv4-mapped IPv6 address is not allowed';
  return new CelIP(b);
}

export function formatIP(b: Uint8Array): string {
  if (b.length === 4) return Array.from(b).join('.');
  const g = Array.from({ length: 8 }, (_, i) => (b[2 * i]! << 8) | b[2 * i + 1]!);
  let bestStart = -1;
  let bestLen = 1;
  for (let i = 0; i < 8; ) {
    if (g[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && g[j] === 0) j++;
    if (j - i > bestLen) {
      bestStart = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = (xs: number[]) => xs.map((x) => x.toString(16)).join(':');
  if (bestStart < 0) return hex(g);
  return `${hex(g.slice(0, bestStart))}::${hex(g.slice(bestStart + bestLen))}`;
}

export function parseCIDR(s: string): CelCIDR | string {
  const slash = s.indexOf('/');
  if (slash < 0) return `netip.ParsePrefix(${JSON.stringify(s)}): no '/'`;
  const ip = parseIP(s.slice(0, slash));
  if (typeof ip === 'string') return ip;
  const bitsText = s.slice(slash + 1);
  const max = ip.family === 4 ? 32 : 128;
  if (!/^(0|[1-9]\d{0,2})$/.test(bitsText) || Number(bitsText) > max) return `netip.ParsePrefix(${JSON.stringify(s)}): bad bits after slash: ${JSON.stringify(bitsText)}`;
  return new CelCIDR(ip, Number(bitsText));
}

function mask(b: Uint8Array, bits: number): Uint8Array {
  const out = new Uint8Array(b);
  for (let i = 0; i < out.length; i++) {
    const keep = Math.max(0, Math.min(8, bits - 8 * i));
    out[i] = out[i]! & ((0xff << (8 - keep)) & 0xff);
  }
  return out;
}

function contains(c: CelCIDR, ip: CelIP): boolean {
  if (ip.family !== c.ip.family) return false;
  const a = mask(c.ip.bytes, c.bits);
  const b = mask(ip.bytes, c.bits);
  return a.every((x, i) => x === b[i]);
}

const orThrow = <T>(v: T | string, what: string): T => {
  if (typeof v === 'string') throw new CelLibraryError(`${what} parse error during conversion from string: ${v}`);
  return v;
};
const sameBytes = (a: Uint8Array, b: Uint8Array) => a.length === b.length && a.every((x, i) => x === b[i]);

class IPNamespace {}

export function registerNet(env: Environment): void {
  env.registerType('net.IP', CelIP);
  env.registerType('net.CIDR', CelCIDR);
  env.registerType('kubernetes.IPNamespace', IPNamespace);
  env.registerConstant('ip', 'kubernetes.IPNamespace', new IPNamespace());
  fn(env, 'ip(string): net.IP', (s: string) => orThrow(parseIP(s), 'IP Address'));
  fn(env, 'isIP(string): bool', (s: string) => typeof parseIP(s) !== 'string');
  fn(env, 'kubernetes.IPNamespace.isCanonical(string): bool', (_ns: unknown, s: string) => orThrow(parseIP(s), 'IP Address').toString() === s, 'ip.isCanonical');
  fn(env, 'net.IP.family(): int', (ip: CelIP) => BigInt(ip.family));
  fn(env, 'net.IP.isUnspecified(): bool', (ip: CelIP) => ip.bytes.every((x) => x === 0));
  fn(env, 'net.IP.isLoopback(): bool', (ip: CelIP) => (ip.family === 4 ? ip.bytes[0] === 127 : ip.bytes.slice(0, 15).every((x) => x === 0) && ip.bytes[15] === 1));
  fn(env, 'net.IP.isLinkLocalMulticast(): bool', (ip: CelIP) => (ip.family === 4 ? ip.bytes[0] === 224 && ip.bytes[1] === 0 && ip.bytes[2] === 0 : ip.bytes[0] === 0xff && (ip.bytes[1]! & 0x0f) === 0x02));
  fn(env, 'net.IP.isLinkLocalUnicast(): bool', (ip: CelIP) => (ip.family === 4 ? ip.bytes[0] === 169 && ip.bytes[1] === 254 : ip.bytes[0] === 0xfe && (ip.bytes[1]! & 0xc0) === 0x80));
  fn(env, 'net.IP.isGlobalUnicast(): bool', (ip: CelIP) => {
    const b = ip.bytes;
    if (b.every((x) => x === 0)) return false;
    if (ip.family === 4) return !(b[0] === 127 || b[0]! >= 224 || (b[0] === 169 && b[1] === 254));
    const loopback = b.slice(0, 15).every((x) => x === 0) && b[15] === 1;
    return !(loopback || b[0] === 0xff || (b[0] === 0xfe && (b[1]! & 0xc0) === 0x80));
  });
  fn(env, 'string(net.IP): string', (ip: CelIP) => ip.toString(), 'string');
  env.registerOperator('net.IP == net.IP', (a: CelIP, b: CelIP) => sameBytes(a.bytes, b.bytes));

  fn(env, 'cidr(string): net.CIDR', (s: string) => orThrow(parseCIDR(s), 'network address'));
  fn(env, 'isCIDR(string): bool', (s: string) => typeof parseCIDR(s) !== 'string');
  fn(env, 'net.CIDR.containsIP(net.IP): bool', (c: CelCIDR, ip: CelIP) => contains(c, ip));
  fn(env, 'net.CIDR.containsIP(string): bool', (c: CelCIDR, s: string) => contains(c, orThrow(parseIP(s), 'IP Address')));
  fn(env, 'net.CIDR.containsCIDR(net.CIDR): bool', (c: CelCIDR, o: CelCIDR) => o.bits >= c.bits && contains(c, o.ip));
  fn(env, 'net.CIDR.containsCIDR(string): bool', (c: CelCIDR, s: string) => {
    const o = orThrow(parseCIDR(s), 'network address');
    return o.bits >= c.bits && contains(c, o.ip);
  });
  fn(env, 'net.CIDR.ip(): net.IP', (c: CelCIDR) => c.ip);
  fn(env, 'net.CIDR.prefixLength(): int', (c: CelCIDR) => BigInt(c.bits));
  fn(env, 'net.CIDR.masked(): net.CIDR', (c: CelCIDR) => new CelCIDR(new CelIP(mask(c.ip.bytes, c.bits)), c.bits));
  fn(env, 'string(net.CIDR): string', (c: CelCIDR) => c.toString(), 'string');
  env.registerOperator('net.CIDR == net.CIDR', (a: CelCIDR, b: CelCIDR) => a.bits === b.bits && sameBytes(a.ip.bytes, b.ip.bytes));
}
