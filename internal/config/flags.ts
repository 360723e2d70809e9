// internal/config/flags owns the server's command line: the flag table (names, defaults,
// help), parsing into a typed ServerConfig, and `--help` text. Bad input is a FlagError, which
// the entry point prints and exits with status 2.
// Imports: naming (mode names), duration, feature-gates, runtime-config.

import { isIP } from 'node:net';
import { NAMING_MODES, type NamingMode } from '../naming/naming.js';
import { formatDuration, parseDuration } from './duration.js';
import { FeatureGates } from './feature-gates.js';
import { parseRuntimeConfig, type RuntimeConfigEntry } from './runtime-config.js';

export type LogLevel = 'error' | 'warn' | 'info' | 'debug';

export interface ServerConfig {
  dataDir: string;
  bindAddress: string;
  securePort: number;
  storage: 'leveldb' | 'memory';
  naming: NamingMode;
  featureGates: FeatureGates;
  runtimeConfig: RuntimeConfigEntry[];
  livezGracePeriodMs: number;
  shutdownDelayMs: number;
  tlsCertFile: string | undefined;
  tlsPrivateKeyFile: string | undefined;
  clientCaFile: string | undefined;
  compactionIntervalMs: number;
  logLevel: LogLevel;
  maxRequestsInflight: number;
  maxMutatingRequestsInflight: number;
}

export class FlagError extends Error {
  override name = 'FlagError';
}

interface FlagSpec {
  name: string;
  value: string;
  help: string;
  default: string;
  apply(config: ServerConfig, raw: string): void;
}

const oneOf = <T extends string>(flag: string, allowed: readonly T[], raw: string): T => {
  if (!(allowed as readonly string[]).includes(raw)) {
    throw new FlagError(`invalid value "${raw}" for --${flag}: must be one of ${allowed.join(', ')}`);
  }
  return raw as T;
};

const duration = (flag: string, raw: string): number => {
  try {
    return parseDuration(raw);
  } catch (e) {
    throw new FlagError(`invalid value "${raw}" for --${flag}: ${(e as Error).message}`);
  }
};

const count = (flag: string, raw: string): number => {
  if (!/^\d+$/.test(raw)) throw new FlagError(`invalid value "${raw}" for --${flag}: must be a non-negative integer`);
  return Number(raw);
};

const FLAGS: FlagSpec[] = [
  {
    name: 'data-dir', value: 'path', default: './data',
    help: 'Directory for the store (<dir>/store), generated certificates (<dir>/pki) and admin.kubeconfig.',
    apply: (c, v) => { if (!v) throw new FlagError('--data-dir must not be empty'); c.dataDir = v; },
  },
  {
    name: 'bind-address', value: 'ip', default: '0.0.0.0',
    help: 'IP address to listen on for HTTPS (0.0.0.0 or :: for all interfaces).',
    apply: (c, v) => { if (!isIP(v)) throw new FlagError(`invalid value "${v}" for --bind-address: not an IP address`); c.bindAddress = v; },
  },
  {
    name: 'secure-port', value: 'port', default: '6443',
    help: 'HTTPS port. 0 picks a free port and logs it.',
    apply: (c, v) => {
      const n = Number(v);
      if (!/^\d+$/.test(v) || n > 65535) throw new FlagError(`invalid value "${v}" for --secure-port: must be 0..65535`);
      c.securePort = n;
    },
  },
  {
    name: 'storage', value: 'leveldb|memory', default: 'leveldb',
    help: 'leveldb keeps data in <data-dir>/store; memory keeps nothing across restarts.',
    apply: (c, v) => { c.storage = oneOf('storage', ['leveldb', 'memory'] as const, v); },
  },
  {
    name: 'naming', value: 'cluster|kubernetes', default: 'cluster',
    help: 'cluster serves the spec\'s names (*.cluster.io); kubernetes serves upstream names (*.k8s.io) so stock clients work unchanged.',
    apply: (c, v) => { c.naming = oneOf('naming', NAMING_MODES, v); },
  },
  {
    name: 'feature-gates', value: 'A=true,B=false', default: '',
    help: 'Feature gates to turn on or off, for example APIResponseCompression=false,CBORServingAndStorage=true.',
    apply: (c, v) => {
      try { c.featureGates = FeatureGates.parse(v); } catch (e) { throw new FlagError(`invalid value for --feature-gates: ${(e as Error).message}`); }
    },
  },
  {
    name: 'runtime-config', value: 'key[=bool],...', default: '',
    help: 'API group-versions or resources to serve or not: api/all, api/beta, <group>/<version>, <group>/<version>/<resource> (no value means true).',
    apply: (c, v) => {
      try { c.runtimeConfig = parseRuntimeConfig(v); } catch (e) { throw new FlagError(`invalid value for --runtime-config: ${(e as Error).message}`); }
    },
  },
  {
    name: 'livez-grace-period', value: 'duration', default: '0s',
    help: 'Time after start during which /livez reports healthy even while start-up hooks are still running.',
    apply: (c, v) => { c.livezGracePeriodMs = duration('livez-grace-period', v); },
  },
  {
    name: 'shutdown-delay-duration', value: 'duration', default: '0s',
    help: 'On SIGTERM, /readyz fails at once but requests are still served for this long before the listener closes.',
    apply: (c, v) => { c.shutdownDelayMs = duration('shutdown-delay-duration', v); },
  },
  {
    name: 'tls-cert-file', value: 'path', default: '',
    help: 'Serving certificate (PEM). Default: <data-dir>/pki/apiserver.crt, generated on first start.',
    apply: (c, v) => { c.tlsCertFile = v || undefined; },
  },
  {
    name: 'tls-private-key-file', value: 'path', default: '',
    help: 'Private key for --tls-cert-file (PEM). Default: <data-dir>/pki/apiserver.key.',
    apply: (c, v) => { c.tlsPrivateKeyFile = v || undefined; },
  },
  {
    name: 'client-ca-file', value: 'path', default: '',
    help: 'CA bundle (PEM) that signs client certificates; the certificate CN is the user, each O a group. Default: <data-dir>/pki/ca.crt.',
    apply: (c, v) => { c.clientCaFile = v || undefined; },
  },
  {
    name: 'compaction-interval', value: 'duration', default: '5m',
    help: 'How long history stays readable (exact reads, continue tokens, watch replay); compaction runs at this interval. 0 disables compaction.',
    apply: (c, v) => { c.compactionIntervalMs = duration('compaction-interval', v); },
  },
  {
    name: 'max-requests-inflight', value: 'n', default: '400',
    help: 'Most non-mutating requests served at once; more get 429 Too Many Requests. 0 = no limit. Watches do not count.',
    apply: (c, v) => { c.maxRequestsInflight = count('max-requests-inflight', v); },
  },
  {
    name: 'max-mutating-requests-inflight', value: 'n', default: '200',
    help: 'Most mutating requests (create, update, patch, delete) served at once; more get 429. 0 = no limit.',
    apply: (c, v) => { c.maxMutatingRequestsInflight = count('max-mutating-requests-inflight', v); },
  },
  {
    name: 'log-level', value: 'error|warn|info|debug', default: 'warn',
    help: 'Least severe log level written (JSON lines on stderr). Start-up and shutdown are logged at warn so the default shows them.',
    apply: (c, v) => { c.logLevel = oneOf('log-level', ['error', 'warn', 'info', 'debug'] as const, v); },
  },
];

export function defaultConfig(): ServerConfig {
  const c = {} as ServerConfig;
  c.featureGates = new FeatureGates();
  c.runtimeConfig = [];
  c.tlsCertFile = c.tlsPrivateKeyFile = c.clientCaFile = undefined;
  for (const f of FLAGS) if (f.default !== '') f.apply(c, f.default);
  return c;
}

/** Parses argv (without node and script). Returns 'help' when --help/-h is given. */
export function parseFlags(argv: readonly string[]): ServerConfig | 'help' {
  const config = defaultConfig();
  const byName = new Map(FLAGS.map((f) => [f.name, f]));
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--help' || arg === '-h') return 'help';
    if (!arg.startsWith('--')) throw new FlagError(`unexpected argument "${arg}" (flags look like --name=value; see --help)`);
    const eq = arg.indexOf('=');
    const name = arg.slice(2, eq < 0 ? undefined : eq);
    const spec = byName.get(name);
    if (!spec) throw new FlagError(`unknown flag: --${name} (see --help)`);
    let value: string;
    if (eq >= 0) value = arg.slice(eq + 1);
    else {
      const next = argv[i + 1];
      if (next === undefined || next.startsWith('--')) throw new FlagError(`flag needs an argument: --${name}`);
      value = next;
      i++;
    }
    spec.apply(config, value);
  }
  if (Boolean(config.tlsCertFile) !== Boolean(config.tlsPrivateKeyFile)) {
    throw new FlagError('--tls-cert-file and --tls-private-key-file must be given together');
  }
  return config;
}

export function helpText(program = 'clusterd'): string {
  const lines = [
    `Usage: ${program} [flags]`,
    '',
    'A cluster control-plane API server. On first start it generates a CA, serving and admin',
    'certificates under <data-dir>/pki and writes <data-dir>/admin.kubeconfig for kubectl.',
    '',
    'Flags:',
  ];
  for (const f of FLAGS) {
    lines.push(`  --${f.name}=${f.value}`);
    lines.push(`      ${f.help}${f.default !== '' ? ` (default ${f.default})` : ''}`);
  }
  lines.push('  -h, --help', '      Print this help and exit.');
  return lines.join('\n') + '\n';
}

export { formatDuration };
