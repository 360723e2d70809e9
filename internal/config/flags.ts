// internal/config/flags owns the server's command line: the flag table (names, defaults,
// help), parsing into a typed ServerConfig, and `--help` text. Bad input is a FlagError, which
// the entry point prints and exits with status 2.
// Imports: naming (mode names), duration, feature-gates, runtime-config, audit (config shape, modes).

import { isIP } from 'node:net';
import type { AuditConfig } from '../audit/auditor.js';
import { AUDIT_MODES } from '../audit/log-backend.js';
import { AUTHORIZATION_MODES, DEFAULT_AUTHORIZATION_MODES, validateAuthorizationFlags } from '../authz/chain.js';
import { REPLICA_NAME } from '../cluster/ids.js';
import { validateControllers } from '../controllers/selection.js';
import { ALL_ORDERED_PLUGINS, DEFAULT_ON_PLUGINS, validateAdmissionPluginFlags } from '../admission/plugin-names.js';
import { NAMING_MODES, type NamingMode } from '../naming/naming.js';
import { formatDuration, parseDuration } from './duration.js';
import { FeatureGates, KNOWN_GATES } from './feature-gates.js';
import { parseRuntimeConfig, type RuntimeConfigEntry } from './runtime-config.js';

export type LogLevel = 'error' | 'warn' | 'info' | 'debug';

export interface ServerConfig {
  dataDir: string;
  bindAddress: string;
  securePort: number;
  storage: 'leveldb' | 'memory' | 'etcd';
  /** The external etcd cluster under --storage=etcd (upstream's --etcd-* flags). */
  etcd: { servers: string[]; caFile: string | undefined; certFile: string | undefined; keyFile: string | undefined; prefix: string; compactionIntervalMs: number };
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
  /** This replica's name (its data directory, certificates and Raft member id derive from it). */
  name: string;
  /** Founding members and their peer addresses (empty: a single replica, no Raft peers). */
  initialCluster: Array<{ name: string; peerAddress: string }>;
  /** This replica's peer address when it is not in --initial-cluster (a joining replica). */
  peerAddress: string | undefined;
  /** Host (IP or DNS name) other replicas reach this one's API at; default the bind address (127.0.0.1 for a wildcard). */
  advertiseAddress: string | undefined;
  /** IP the peer listener binds (default: the host of this replica's peer address). */
  peerBindAddress: string | undefined;
  /** Directory of the cluster PKI (`clusterd pki`); default <data-dir>/pki. */
  pkiDir: string | undefined;
  /** API address (https://host:port) of any member of a running cluster to join. */
  join: string | undefined;
  /** Join token: from `clusterd token create`, or the PKI's `<pki-dir>/join-token`. */
  token: string | undefined;
  heartbeatIntervalMs: number;
  /** Applied entries between two Raft snapshots of the store (etcd's --snapshot-count). */
  snapshotCount: number;
  electionTimeoutMs: number;
  /** Structured authentication configuration file, reloaded on change (hash compared across replicas). */
  authenticationConfig: string | undefined;
  /** Structured authorization configuration file, reloaded on change (hash compared across replicas). */
  authorizationConfig: string | undefined;
  /** --authorization-mode, --authorization-policy-file and --authorization-webhook-* (exclusive with the file). */
  authorization: {
    modes: string[];
    policyFile: string | undefined;
    webhook: { configFile: string | undefined; version: string; authorizedTtlMs: number; unauthorizedTtlMs: number };
  };
  /** `major.minor`: show the metrics hidden in this release (checked against the release at start). */
  showHiddenMetricsForVersion: string | undefined;
  /** The audit log (internal/audit); off unless both a policy file and a log path are given. */
  audit: AuditConfig;
  /** Requests no authenticator rejects become system:anonymous (upstream default true). */
  anonymousAuth: boolean;
  /** Static token file (CSV: token,user,uid,"group1,group2"). */
  tokenAuthFile: string | undefined;
  /** Files of public (or private) keys that verify service-account tokens; empty = the PKI's sa.pub. */
  serviceAccountKeyFiles: string[];
  /** Private key that signs service-account tokens; default the PKI's sa.key. */
  serviceAccountSigningKeyFile: string | undefined;
  /** Issuers of service-account tokens: the first issues, all are accepted. */
  serviceAccountIssuers: string[];
  /** Audiences of the API; default the first service-account issuer. */
  apiAudiences: string[];
  /** Service-account tokens are valid only while their ServiceAccount (and bound object) exists. */
  serviceAccountLookup: boolean;
  /** tolerationSeconds of the not-ready / unreachable NoExecute tolerations DefaultTolerationSeconds adds to pods. */
  defaultNotReadyTolerationSeconds: number;
  defaultUnreachableTolerationSeconds: number;
  /** How long a secret-based service-account token may go unused before the cleaner invalidates it, and then deletes it. */
  legacyServiceAccountTokenCleanUpPeriodMs: number;
  /** Pod-bound tokens requested for 3607 s are issued for a year with a warnafter claim (upstream's safe transition). */
  serviceAccountExtendTokenExpiration: boolean;
  /** Longest expiration a TokenRequest may ask for (0 = no limit). */
  serviceAccountMaxTokenExpirationMs: number;
  /** Bootstrap-token secrets authenticate. */
  enableBootstrapTokenAuth: boolean;
  /** --enable-admission-plugins: upstream plugin names added to the default set. */
  enableAdmissionPlugins: string[];
  /** --disable-admission-plugins: upstream plugin names taken out of the default set. */
  disableAdmissionPlugins: string[];
  /** --admission-control-config-file: the AdmissionConfiguration with the plugins' configurations. */
  admissionControlConfigFile: string | undefined;
  /** --controllers as given: `*`, names, `-name`. */
  controllers: string[];
  /** Flags given on the command line (mutual exclusions that depend on "set", not on the value). */
  setFlags: Set<string>;
  /** --oidc-*: one JWT issuer without the structured file. */
  oidc: {
    issuerUrl: string | undefined;
    clientId: string | undefined;
    usernameClaim: string;
    usernamePrefix: string | undefined;
    groupsClaim: string | undefined;
    groupsPrefix: string | undefined;
    requiredClaims: Array<{ claim: string; value: string }>;
    caFile: string | undefined;
    signingAlgs: string[];
  };
  /** --authentication-token-webhook-*. */
  tokenWebhook: { configFile: string | undefined; version: 'v1' | 'v1beta1'; cacheTtlMs: number };
  /** --requestheader-*: the authenticating proxy. */
  requestHeader: {
    usernameHeaders: string[];
    uidHeaders: string[];
    groupHeaders: string[];
    extraHeadersPrefix: string[];
    clientCaFile: string | undefined;
    allowedNames: string[];
  };
  /** --proxy-client-cert-file/--proxy-client-key-file: the front-proxy identity the aggregator presents to extension API servers. */
  proxyClient: { certFile: string | undefined; keyFile: string | undefined };
}

export class FlagError extends Error {
  override name = 'FlagError';
}

interface FlagSpec {
  name: string;
  value: string;
  help: string;
  default: string;
  /** A boolean flag: `--name` alone means true (as Go's pflag). */
  boolean?: boolean;
  /** Each occurrence adds to the value instead of replacing it. */
  repeatable?: boolean;
  apply(config: ServerConfig, raw: string): void;
}

/** Go's strconv.ParseBool, which pflag's boolean flags use. */
const bool = (flag: string, raw: string): boolean => {
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(raw)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(raw)) return false;
  throw new FlagError(`invalid value "${raw}" for --${flag}: must be true or false`);
};

/** A comma-separated list (pflag's StringSlice), empty entries dropped. */
const list = (raw: string): string[] => raw.split(',').map((s) => s.trim()).filter((s) => s !== '');

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

/** `host:port`, as peer addresses are written (IPv6 hosts in brackets); an https:// prefix is allowed. */
const hostPort = (flag: string, raw: string): string => {
  const v = raw.replace(/^https:\/\//, '').replace(/\/$/, '');
  const m = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(v);
  if (!m || Number(m[2]) === 0 || Number(m[2]) > 65535) throw new FlagError(`invalid value "${raw}" for --${flag}: want host:port`);
  return v;
};

const replicaName = (flag: string, raw: string): string => {
  if (!REPLICA_NAME.test(raw)) throw new FlagError(`invalid replica name "${raw}" in --${flag}: lower-case letters, digits and '-', at most 63, starting and ending with a letter or digit`);
  return raw;
};

/** A string-list flag as upstream's: comma-separated, repeatable; the first use replaces the default. */
const listFlag = (c: ServerConfig, flag: string, current: string[], raw: string): string[] => {
  const items = raw.split(',').map((x) => x.trim()).filter((x) => x !== '');
  return c.setFlags.has(flag) ? [...current, ...items] : items;
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
    name: 'storage', value: 'leveldb|memory|etcd', default: 'leveldb',
    help: 'leveldb keeps data in <data-dir>/store; memory keeps nothing across restarts; etcd keeps it in the etcd cluster of --etcd-servers (several servers may share one; <data-dir> then holds only certificates and the kubeconfig).',
    apply: (c, v) => { c.storage = oneOf('storage', ['leveldb', 'memory', 'etcd'] as const, v); },
  },
  {
    name: 'etcd-servers', value: 'url,...', default: '',
    help: 'Client URLs of the etcd members (https://host:2379,...) for --storage=etcd.',
    apply: (c, v) => { c.etcd.servers = list(v); },
  },
  {
    name: 'etcd-cafile', value: 'path', default: '',
    help: 'CA bundle (PEM) that signs the etcd members\' serving certificates; without it etcd is dialled over plain HTTP/2.',
    apply: (c, v) => { c.etcd.caFile = v || undefined; },
  },
  {
    name: 'etcd-certfile', value: 'path', default: '',
    help: 'Client certificate (PEM) presented to etcd.',
    apply: (c, v) => { c.etcd.certFile = v || undefined; },
  },
  {
    name: 'etcd-keyfile', value: 'path', default: '',
    help: 'Private key (PEM) of --etcd-certfile.',
    apply: (c, v) => { c.etcd.keyFile = v || undefined; },
  },
  {
    name: 'etcd-prefix', value: 'prefix', default: '/registry',
    help: 'Prepended to every key in etcd; servers sharing a prefix share the data.',
    apply: (c, v) => { c.etcd.prefix = v; },
  },
  {
    name: 'etcd-compaction-interval', value: 'duration', default: '5m',
    help: 'Under --storage=etcd: how often the elected server compacts etcd\'s history to the revision of one interval before. 0 disables compaction.',
    apply: (c, v) => { c.etcd.compactionIntervalMs = duration('etcd-compaction-interval', v); },
  },
  {
    name: 'naming', value: 'cluster|kubernetes', default: 'cluster',
    help: 'cluster serves the spec\'s names (*.cluster.io); kubernetes serves upstream names (*.k8s.io) so stock clients work unchanged.',
    apply: (c, v) => { c.naming = oneOf('naming', NAMING_MODES, v); },
  },
  {
    name: 'feature-gates', value: 'A=true,B=false', default: '',
    help: `Feature gates to turn on or off, for example APIResponseCompression=false,CBORServingAndStorage=true. Known gates (stage, default): ${Object.entries(KNOWN_GATES).map(([n, g]) => `${n} (${g.stage}, ${g.default})`).join(', ')}.`,
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
    help: 'CA bundle (PEM, one or more CA certificates) that signs client certificates; the certificate CN is the user, each O a group. Default: <data-dir>/pki/ca.crt.',
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
    name: 'name', value: 'name', default: 'default',
    help: 'This replica\'s name: its Raft member id, its certificates in --pki-dir and its entry in --initial-cluster derive from it.',
    apply: (c, v) => { c.name = replicaName('name', v); },
  },
  {
    name: 'initial-cluster', value: 'name=host:port,...', default: '',
    help: 'The founding replicas and their peer addresses, identical on every founding replica (as etcd\'s --initial-cluster). Empty: a single replica. Ignored once the data directory holds a cluster.',
    apply: (c, v) => {
      c.initialCluster = [];
      if (!v) return;
      const seen = new Set<string>();
      for (const item of v.split(',')) {
        const eq = item.indexOf('=');
        if (eq < 0) throw new FlagError(`invalid value "${item}" in --initial-cluster: want name=host:port`);
        const name = replicaName('initial-cluster', item.slice(0, eq));
        if (seen.has(name)) throw new FlagError(`replica ${name} is listed twice in --initial-cluster`);
        seen.add(name);
        c.initialCluster.push({ name, peerAddress: hostPort('initial-cluster', item.slice(eq + 1)) });
      }
    },
  },
  {
    name: 'peer-address', value: 'host:port', default: '',
    help: 'Address other replicas reach this one at for Raft traffic (mutual TLS). Default: this replica\'s entry in --initial-cluster; required with --join.',
    apply: (c, v) => { c.peerAddress = v ? hostPort('peer-address', v) : undefined; },
  },
  {
    name: 'advertise-address', value: 'ip|name', default: '',
    help: 'Host other replicas reach this replica\'s API at (with --secure-port), published in the member list (a follower asks the leader for it there) and in the kubernetes Endpoints. The serving certificate must name it. Default: the bind address; for a wildcard, the host of this replica\'s peer address (a single replica: 127.0.0.1).',
    apply: (c, v) => {
      if (v && !isIP(v) && !/^(?=.{1,253}$)[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)*$/i.test(v)) {
        throw new FlagError(`invalid value "${v}" for --advertise-address: not an IP address or DNS name`);
      }
      c.advertiseAddress = v || undefined;
    },
  },
  {
    name: 'peer-bind-address', value: 'ip', default: '',
    help: 'IP the peer listener binds (for example 0.0.0.0 in a container). Default: the host of the peer address.',
    apply: (c, v) => {
      if (v && !isIP(v)) throw new FlagError(`invalid value "${v}" for --peer-bind-address: not an IP address`);
      c.peerBindAddress = v || undefined;
    },
  },
  {
    name: 'pki-dir', value: 'path', default: '',
    help: 'Cluster PKI made by `clusterd pki` (CA, peer CA, per-replica serving and peer certificates, admin and service-account keys), the same on every replica. Default: <data-dir>/pki.',
    apply: (c, v) => { c.pkiDir = v || undefined; },
  },
  {
    name: 'join', value: 'https://host:port', default: '',
    help: 'Join the running cluster that serves the API at this address (any member): the replica receives its certificates, catches up as a learner, then becomes a voter. Needs --peer-address, and --token at its first start (a replica that has joined restarts with or without it).',
    apply: (c, v) => {
      if (v && !/^https:\/\/[^/]+\/?$/.test(v)) throw new FlagError(`invalid value "${v}" for --join: want https://host:port`);
      c.join = v ? v.replace(/\/$/, '') : undefined;
    },
  },
  {
    name: 'token', value: 'token', default: '',
    help: 'Join token for --join, checked at the first start only: one `clusterd token create` printed on a member (24h unless --ttl said otherwise), or the content of <pki-dir>/join-token on a member (valid 24h from when the cluster first elected a leader).',
    apply: (c, v) => { c.token = v || undefined; },
  },
  {
    name: 'heartbeat-interval', value: 'duration', default: '100ms',
    help: 'Raft heartbeat interval (one Raft tick), as etcd\'s flag of that name.',
    apply: (c, v) => {
      c.heartbeatIntervalMs = duration('heartbeat-interval', v);
      if (c.heartbeatIntervalMs < 1) throw new FlagError('--heartbeat-interval must be at least 1ms');
    },
  },
  {
    name: 'snapshot-count', value: 'n', default: '10000',
    help: 'Applied Raft entries between two snapshots of the store, as etcd\'s flag of that name: a snapshot makes the store durable through its index and lets the log before it be dropped; an image of the store is taken only for a member too far behind the log, or a new one. At least 1.',
    apply: (c, v) => {
      c.snapshotCount = count('snapshot-count', v);
      if (c.snapshotCount < 1) throw new FlagError('--snapshot-count must be at least 1');
    },
  },
  {
    name: 'election-timeout', value: 'duration', default: '1s',
    help: 'Time without a leader\'s heartbeat before a replica campaigns (randomised up to twice this), as etcd\'s flag. At least 5 heartbeat intervals.',
    apply: (c, v) => { c.electionTimeoutMs = duration('election-timeout', v); },
  },
  {
    name: 'authentication-config', value: 'path', default: '',
    help: 'Structured authentication configuration file; reloaded when it changes. Every replica reports the hash of what it loaded; a replica whose hash differs from the leader\'s fails its config-hash readyz check.',
    apply: (c, v) => { c.authenticationConfig = v || undefined; },
  },
  {
    name: 'authorization-config', value: 'path', default: '',
    help: 'AuthorizationConfiguration file (YAML or JSON, apiVersion apiserver.config.<domain>/v1): the ordered, named authorizers (Node, RBAC, Webhook with failure policies and CEL match conditions) after system:masters. Not with --authorization-mode or any --authorization-webhook-* flag. Reloaded when it changes and re-read every 60s (an invalid file keeps the chain in force); compared across replicas like --authentication-config.',
    apply: (c, v) => { c.authorizationConfig = v || undefined; },
  },
  {
    name: 'authorization-mode', value: 'mode,...', default: DEFAULT_AUTHORIZATION_MODES.join(','),
    help: `Authorizers tried in order after system:masters (always allowed): the first allow or deny decides, no opinion from all is a 403. Comma list of ${AUTHORIZATION_MODES.join(', ')}. AlwaysAllow turns --anonymous-auth off, as upstream.`,
    apply: (c, v) => { c.authorization.modes = list(v); },
  },
  {
    name: 'authorization-policy-file', value: 'path', default: '',
    help: 'ABAC policy for --authorization-mode=ABAC: one JSON Policy (apiVersion abac.authorization.<domain>/v1beta1) per line; blank and # lines skipped. Read at start; a bad line stops the server naming it.',
    apply: (c, v) => { c.authorization.policyFile = v || undefined; },
  },
  {
    name: 'authorization-webhook-config-file', value: 'path', default: '',
    help: 'Kubeconfig naming the authorization webhook (HTTPS) for --authorization-mode=Webhook; it is sent a SubjectAccessReview per decision not cached.',
    apply: (c, v) => { c.authorization.webhook.configFile = v || undefined; },
  },
  {
    name: 'authorization-webhook-version', value: 'v1|v1beta1', default: 'v1beta1',
    help: 'Version of the SubjectAccessReview sent to and expected from the authorization webhook.',
    apply: (c, v) => { c.authorization.webhook.version = v; },
  },
  {
    name: 'authorization-webhook-cache-authorized-ttl', value: 'duration', default: '5m',
    help: 'How long the authorization webhook\'s allow answers are cached (0 = not cached).',
    apply: (c, v) => { c.authorization.webhook.authorizedTtlMs = duration('authorization-webhook-cache-authorized-ttl', v); },
  },
  {
    name: 'authorization-webhook-cache-unauthorized-ttl', value: 'duration', default: '30s',
    help: 'How long the authorization webhook\'s deny and no-opinion answers are cached (0 = not cached).',
    apply: (c, v) => { c.authorization.webhook.unauthorizedTtlMs = duration('authorization-webhook-cache-unauthorized-ttl', v); },
  },
  // External authenticators (internal/auth: request header, OIDC/JWT, token webhook).
  {
    name: 'oidc-issuer-url', value: 'https-url', default: '',
    help: 'URL of the OpenID issuer (https only). Its ID tokens are bearer tokens when they name it in iss and --oidc-client-id in aud. Not with --authentication-config.',
    apply: (c, v) => { c.oidc.issuerUrl = v || undefined; },
  },
  {
    name: 'oidc-client-id', value: 'id', default: '',
    help: 'Client ID tokens must be issued for (their aud). Required with --oidc-issuer-url.',
    apply: (c, v) => { c.oidc.clientId = v || undefined; },
  },
  {
    name: 'oidc-username-claim', value: 'claim', default: 'sub',
    help: 'ID-token claim that names the user. Claims other than email are prefixed with the issuer URL and # unless --oidc-username-prefix says otherwise.',
    apply: (c, v) => { c.oidc.usernameClaim = v; },
  },
  {
    name: 'oidc-username-prefix', value: 'prefix', default: '',
    help: 'Prefix of OIDC user names; "-" disables prefixing. Unset: the issuer URL and # (none for the email claim).',
    apply: (c, v) => { c.oidc.usernamePrefix = v === '' ? undefined : v; },
  },
  {
    name: 'oidc-groups-claim', value: 'claim', default: '',
    help: 'ID-token claim with the user\'s groups (a string or an array of strings).',
    apply: (c, v) => { c.oidc.groupsClaim = v || undefined; },
  },
  {
    name: 'oidc-groups-prefix', value: 'prefix', default: '',
    help: 'Prefix added to every OIDC group.',
    apply: (c, v) => { c.oidc.groupsPrefix = v || undefined; },
  },
  {
    name: 'oidc-required-claim', value: 'key=value,...', default: '',
    help: 'A claim the ID token must carry with this value; repeatable.',
    apply: (c, v) => {
      for (const item of v.split(',').filter((x) => x !== '')) {
        const eq = item.indexOf('=');
        if (eq <= 0) throw new FlagError(`invalid value "${item}" for --oidc-required-claim: want key=value`);
        c.oidc.requiredClaims.push({ claim: item.slice(0, eq), value: item.slice(eq + 1) });
      }
    },
  },
  {
    name: 'oidc-ca-file', value: 'path', default: '',
    help: 'CA bundle (PEM) that signs the identity provider\'s serving certificate. Default: the host\'s roots.',
    apply: (c, v) => { c.oidc.caFile = v || undefined; },
  },
  {
    name: 'oidc-signing-algs', value: 'alg,...', default: 'RS256',
    help: 'Algorithms ID tokens may be signed with: RS256, RS384, RS512, ES256, ES384, ES512, PS256, PS384, PS512.',
    apply: (c, v) => { c.oidc.signingAlgs = listFlag(c, 'oidc-signing-algs', c.oidc.signingAlgs, v); },
  },
  {
    name: 'authentication-token-webhook-config-file', value: 'path', default: '',
    help: 'Kubeconfig-format file naming the token review service: bearer tokens no other authenticator knows are sent to it as a TokenReview.',
    apply: (c, v) => { c.tokenWebhook.configFile = v || undefined; },
  },
  {
    name: 'authentication-token-webhook-version', value: 'v1|v1beta1', default: 'v1beta1',
    help: 'TokenReview version sent to the token review service (its reply must use the same).',
    apply: (c, v) => { c.tokenWebhook.version = oneOf('authentication-token-webhook-version', ['v1', 'v1beta1'] as const, v); },
  },
  {
    name: 'authentication-token-webhook-cache-ttl', value: 'duration', default: '2m',
    help: 'How long the token review service\'s answers (authenticated or not) are reused.',
    apply: (c, v) => { c.tokenWebhook.cacheTtlMs = duration('authentication-token-webhook-cache-ttl', v); },
  },
  {
    name: 'requestheader-username-headers', value: 'header,...', default: '',
    help: 'Headers an authenticating proxy names the user in, tried in order (the first non-empty wins), for example X-Remote-User. Trusted only from a client certificate signed by --requestheader-client-ca-file.',
    apply: (c, v) => { c.requestHeader.usernameHeaders = listFlag(c, 'requestheader-username-headers', c.requestHeader.usernameHeaders, v); },
  },
  {
    name: 'requestheader-uid-headers', value: 'header,...', default: '',
    help: 'Headers the proxy names the user\'s UID in (first non-empty wins), for example X-Remote-Uid.',
    apply: (c, v) => { c.requestHeader.uidHeaders = listFlag(c, 'requestheader-uid-headers', c.requestHeader.uidHeaders, v); },
  },
  {
    name: 'requestheader-group-headers', value: 'header,...', default: '',
    help: 'Headers the proxy lists groups in (every value of each), for example X-Remote-Group.',
    apply: (c, v) => { c.requestHeader.groupHeaders = listFlag(c, 'requestheader-group-headers', c.requestHeader.groupHeaders, v); },
  },
  {
    name: 'requestheader-extra-headers-prefix', value: 'prefix,...', default: '',
    help: 'Header prefixes for extra attributes, for example X-Remote-Extra-: the rest of the name, lowercased and percent-decoded, is the key.',
    apply: (c, v) => { c.requestHeader.extraHeadersPrefix = listFlag(c, 'requestheader-extra-headers-prefix', c.requestHeader.extraHeadersPrefix, v); },
  },
  {
    name: 'requestheader-client-ca-file', value: 'path', default: '',
    help: 'CA bundle (PEM) that signs the authenticating proxy\'s client certificate. Required with --requestheader-username-headers.',
    apply: (c, v) => { c.requestHeader.clientCaFile = v || undefined; },
  },
  {
    name: 'requestheader-allowed-names', value: 'cn,...', default: '',
    help: 'Common names the proxy\'s client certificate may have; empty allows any certificate the CA signed.',
    apply: (c, v) => { c.requestHeader.allowedNames = listFlag(c, 'requestheader-allowed-names', c.requestHeader.allowedNames, v); },
  },
  {
    name: 'proxy-client-cert-file', value: 'path', default: '',
    help: 'Client certificate (PEM) the aggregation layer presents to extension API servers (APIServices with spec.service) along with X-Remote-User, X-Remote-Group and X-Remote-Extra-* headers; the extension trusts it through its --requestheader-client-ca-file. Without it requests are forwarded with no client certificate (extensions then refuse the user headers). Needs --proxy-client-key-file.',
    apply: (c, v) => { c.proxyClient.certFile = v || undefined; },
  },
  {
    name: 'proxy-client-key-file', value: 'path', default: '',
    help: 'Private key (PEM) of --proxy-client-cert-file.',
    apply: (c, v) => { c.proxyClient.keyFile = v || undefined; },
  },
  {
    name: 'show-hidden-metrics-for-version', value: 'major.minor', default: '',
    help: 'The previous minor release (the only value accepted; others fail the start): /metrics shows again the deprecated metrics hidden in this release, as kube-apiserver\'s flag.',
    apply: (c, v) => {
      if (v && !/^\d+\.\d+$/.test(v)) throw new FlagError(`invalid value "${v}" for --show-hidden-metrics-for-version: want major.minor, for example 1.34`);
      c.showHiddenMetricsForVersion = v || undefined;
    },
  },
  {
    name: 'audit-policy-file', value: 'path', default: '',
    help: 'Audit policy (audit.k8s.io/v1 or audit.cluster.io/v1 Policy, YAML or JSON): which requests are audited at which level. Auditing needs this and --audit-log-path; a bad file stops the start naming the field.',
    apply: (c, v) => { c.audit.policyFile = v || undefined; },
  },
  {
    name: 'audit-log-path', value: 'path|-', default: '',
    help: 'File the audit events are written to, one per line; - writes them to standard output.',
    apply: (c, v) => { c.audit.logPath = v || undefined; },
  },
  {
    name: 'audit-log-maxage', value: 'days', default: '0',
    help: 'Days to keep rotated audit log files, by the time in their names. 0 = no age limit.',
    apply: (c, v) => { c.audit.maxAgeDays = count('audit-log-maxage', v); },
  },
  {
    name: 'audit-log-maxbackup', value: 'n', default: '0',
    help: 'Rotated audit log files to keep. 0 = keep all (subject to --audit-log-maxage).',
    apply: (c, v) => { c.audit.maxBackups = count('audit-log-maxbackup', v); },
  },
  {
    name: 'audit-log-maxsize', value: 'MB', default: '0',
    help: 'Megabytes an audit log file grows to before it is rotated to <name>-<UTC time><ext>. 0 = 100 MB, as upstream\'s log backend.',
    apply: (c, v) => { c.audit.maxSizeMB = count('audit-log-maxsize', v); },
  },
  {
    name: 'audit-log-format', value: 'json|legacy', default: 'json',
    help: 'json writes each event as one JSON line; legacy writes upstream\'s one-line text form.',
    apply: (c, v) => { c.audit.format = oneOf('audit-log-format', ['json', 'legacy'] as const, v); },
  },
  {
    name: 'audit-log-mode', value: 'batch|blocking|blocking-strict', default: 'blocking',
    help: 'When the audit queue is full: batch drops the event (counted in apiserver_audit_error_total); blocking makes the request wait for room, at most --audit-log-blocking-timeout, then drops it (counted); blocking-strict also fails a request whose RequestReceived event could not be queued.',
    apply: (c, v) => { c.audit.mode = oneOf('audit-log-mode', AUDIT_MODES, v); },
  },
  {
    name: 'audit-log-batch-buffer-size', value: 'n', default: '10000',
    help: 'Audit events the queue in front of the log holds (every mode; upstream uses it in batch mode only).',
    apply: (c, v) => {
      c.audit.bufferSize = count('audit-log-batch-buffer-size', v);
      if (c.audit.bufferSize < 1) throw new FlagError('--audit-log-batch-buffer-size must be at least 1');
    },
  },
  {
    name: 'audit-log-batch-max-size', value: 'n', default: '1',
    help: 'batch mode: most audit events written at once.',
    apply: (c, v) => {
      c.audit.batchMaxSize = count('audit-log-batch-max-size', v);
      if (c.audit.batchMaxSize < 1) throw new FlagError('--audit-log-batch-max-size must be at least 1');
    },
  },
  {
    name: 'audit-log-batch-max-wait', value: 'duration', default: '0s',
    help: 'batch mode: longest a batch smaller than --audit-log-batch-max-size waits before it is written.',
    apply: (c, v) => { c.audit.batchMaxWaitMs = duration('audit-log-batch-max-wait', v); },
  },
  {
    name: 'audit-log-blocking-timeout', value: 'duration', default: '10s',
    help: 'blocking modes: longest a request waits for room in a full audit queue before its event is dropped (clusterd\'s bound; upstream waits without one).',
    apply: (c, v) => { c.audit.blockingTimeoutMs = duration('audit-log-blocking-timeout', v); },
  },
  {
    name: 'anonymous-auth', value: 'bool', default: 'true', boolean: true,
    help: 'Requests that no authenticator rejects are served as user system:anonymous in group system:unauthenticated. An invalid bearer token is refused (401) either way.',
    apply: (c, v) => { c.anonymousAuth = bool('anonymous-auth', v); },
  },
  {
    name: 'token-auth-file', value: 'path', default: '',
    help: 'Static bearer tokens, read at start: CSV lines token,user,uid[,"group1,group2"] (quoted fields as RFC 4180). A malformed file stops the server naming the line.',
    apply: (c, v) => { c.tokenAuthFile = v || undefined; },
  },
  {
    name: 'service-account-key-file', value: 'path', default: '', repeatable: true,
    help: 'PEM file of RSA or ECDSA public keys (private keys and certificates count for their public key) that verify service-account tokens; repeatable. Default: <pki>/sa.pub.',
    apply: (c, v) => { if (v) c.serviceAccountKeyFiles.push(v); },
  },
  {
    name: 'service-account-signing-key-file', value: 'path', default: '',
    help: 'PEM private key (RSA or ECDSA) that signs service-account tokens (TokenRequest, legacy token secrets). Its public key always verifies too. Default: <pki>/sa.key.',
    apply: (c, v) => { c.serviceAccountSigningKeyFile = v || undefined; },
  },
  {
    name: 'service-account-issuer', value: 'url', default: '', repeatable: true,
    help: 'Issuer (iss) of service-account tokens; repeatable: the first issues new tokens, every one is accepted (for rotating issuers). Default: https://kubernetes.default.svc.cluster.local.',
    apply: (c, v) => { if (v) c.serviceAccountIssuers.push(v); },
  },
  {
    name: 'api-audiences', value: 'aud,...', default: '',
    help: 'Audiences of this API: a service-account token must name one of them (aud), and tokens without audiences are bound to them. Default: the first --service-account-issuer.',
    apply: (c, v) => { c.apiAudiences = list(v); },
  },
  {
    name: 'service-account-lookup', value: 'bool', default: 'true', boolean: true,
    help: 'A service-account token is valid only while its ServiceAccount (same uid) and the object it is bound to (pod, secret, node) exist; read from the watch cache.',
    apply: (c, v) => { c.serviceAccountLookup = bool('service-account-lookup', v); },
  },
  {
    name: 'default-not-ready-toleration-seconds', value: 'n', default: '300',
    help: 'tolerationSeconds of the node.<domain>/not-ready:NoExecute toleration the DefaultTolerationSeconds admission plugin adds to every pod that has no such toleration.',
    apply: (c, v) => { c.defaultNotReadyTolerationSeconds = count('default-not-ready-toleration-seconds', v); },
  },
  {
    name: 'default-unreachable-toleration-seconds', value: 'n', default: '300',
    help: 'tolerationSeconds of the node.<domain>/unreachable:NoExecute toleration the DefaultTolerationSeconds admission plugin adds to every pod that has no such toleration.',
    apply: (c, v) => { c.defaultUnreachableTolerationSeconds = count('default-unreachable-toleration-seconds', v); },
  },
  {
    name: 'legacy-service-account-token-clean-up-period', value: 'duration', default: '8760h',
    help: 'The legacy-serviceaccount-token-cleaner marks an auto-generated secret-based service-account token invalid (label <domain>/legacy-token-invalid-since) when unused and unmounted this long, and deletes it after it has been invalid this long again (upstream: a year).',
    apply: (c, v) => {
      c.legacyServiceAccountTokenCleanUpPeriodMs = duration('legacy-service-account-token-clean-up-period', v);
      if (c.legacyServiceAccountTokenCleanUpPeriodMs <= 0) throw new FlagError('--legacy-service-account-token-clean-up-period must be greater than 0');
    },
  },
  {
    name: 'service-account-extend-token-expiration', value: 'bool', default: 'true', boolean: true,
    help: 'A pod-bound TokenRequest for the API audiences with expirationSeconds 3607 (what kubelets ask for projected volumes) gets a token valid for a year, carrying a warnafter claim at the requested expiry; using it after that is counted (serviceaccount_stale_tokens_total) and audited (the stale-token annotation).',
    apply: (c, v) => { c.serviceAccountExtendTokenExpiration = bool('service-account-extend-token-expiration', v); },
  },
  {
    name: 'service-account-max-token-expiration', value: 'duration', default: '0s',
    help: 'Longest validity a TokenRequest gets (longer requests are shortened to it); 0 = no limit. At least 1h when set.',
    apply: (c, v) => {
      c.serviceAccountMaxTokenExpirationMs = duration('service-account-max-token-expiration', v);
      if (c.serviceAccountMaxTokenExpirationMs !== 0 && c.serviceAccountMaxTokenExpirationMs < 3_600_000) {
        throw new FlagError('--service-account-max-token-expiration must be at least 1h');
      }
    },
  },
  {
    name: 'enable-bootstrap-token-auth', value: 'bool', default: 'false', boolean: true,
    help: 'Bootstrap-token secrets (type bootstrap.<domain>/token in kube-system) authenticate as system:bootstrap:<token-id> in group system:bootstrappers.',
    apply: (c, v) => { c.enableBootstrapTokenAuth = bool('enable-bootstrap-token-auth', v); },
  },
  {
    name: 'controllers', value: 'name,...', default: '*',
    help: 'Controllers to run (leader-only in a cluster): * (those on by default), a name to add one, -name to leave one out; for example *,bootstrapsigner,tokencleaner. Known (upstream names or short aliases): namespace-controller (namespace), serviceaccount-controller (serviceaccount), serviceaccount-token-controller (serviceaccount-token), root-ca-certificate-publisher-controller (root-ca-cert-publisher), bootstrap-signer-controller (bootstrapsigner), token-cleaner-controller (tokencleaner), clusterrole-aggregation-controller (clusterrole-aggregation), legacy-serviceaccount-token-cleaner-controller (legacy-serviceaccount-token-cleaner), garbage-collector-controller (garbagecollector), disruption-controller (disruption: PodDisruptionBudget status), certificatesigningrequest-signing-controller (csrsigning: signs approved client-certificate requests with the cluster CA) validatingadmissionpolicy-status-controller (validatingadmissionpolicy-status: type checks policies into their status), resourcequota-controller (resourcequota: ResourceQuota status, reclaim of released usage), node-lifecycle-controller (nodelifecycle: the NoSchedule condition taints of nodes), persistentvolumeclaim-protection-controller (pvc-protection) and persistentvolume-protection-controller (pv-protection: remove the protection finalizers of claims and volumes no longer in use); bootstrap-signer and token-cleaner are off by default.',
    apply: (c, v) => {
      const entries = list(v);
      try { validateControllers(entries); } catch (e) { throw new FlagError(`invalid value for --controllers: ${(e as Error).message}`); }
      c.controllers = entries;
    },
  },
  {
    name: 'enable-admission-plugins', value: 'name,...', default: '',
    help: `Admission plugins to run besides the default ones (${[...DEFAULT_ON_PLUGINS].join(', ')}). They always run in upstream's fixed order, whatever the order here: ${ALL_ORDERED_PLUGINS.join(', ')}. Unknown names are refused; names this server does not implement yet are accepted and logged (README, Admission).`,
    apply: (c, v) => { c.enableAdmissionPlugins = list(v); },
  },
  {
    name: 'disable-admission-plugins', value: 'name,...', default: '',
    help: 'Admission plugins not to run although they are in the default set. A name may not be both enabled and disabled.',
    apply: (c, v) => { c.disableAdmissionPlugins = list(v); },
  },
  {
    name: 'admission-control-config-file', value: 'path', default: '',
    help: 'AdmissionConfiguration file (YAML or JSON, apiVersion apiserver.config.<domain>/v1) with the admission plugins\' configurations, inline or by path; read at start. PodSecurity reads its PodSecurityConfiguration (defaults and exemptions) from it.',
    apply: (c, v) => { c.admissionControlConfigFile = v || undefined; },
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
  c.initialCluster = [];
  c.etcd = { servers: [], caFile: undefined, certFile: undefined, keyFile: undefined, prefix: '/registry', compactionIntervalMs: 300_000 };
  c.peerAddress = c.peerBindAddress = c.pkiDir = c.join = c.token = c.advertiseAddress = undefined;
  c.authenticationConfig = c.authorizationConfig = undefined;
  c.authorization = { modes: [], policyFile: undefined, webhook: { configFile: undefined, version: 'v1beta1', authorizedTtlMs: 0, unauthorizedTtlMs: 0 } };
  c.showHiddenMetricsForVersion = undefined;
  c.audit = {} as AuditConfig;
  c.audit.policyFile = c.audit.logPath = undefined;
  c.tokenAuthFile = c.serviceAccountSigningKeyFile = undefined;
  c.serviceAccountKeyFiles = [];
  c.serviceAccountIssuers = [];
  c.apiAudiences = [];
  c.setFlags = new Set();
  c.enableAdmissionPlugins = [];
  c.disableAdmissionPlugins = [];
  c.admissionControlConfigFile = undefined;
  c.oidc = { issuerUrl: undefined, clientId: undefined, usernameClaim: 'sub', usernamePrefix: undefined, groupsClaim: undefined, groupsPrefix: undefined, requiredClaims: [], caFile: undefined, signingAlgs: [] };
  c.tokenWebhook = { configFile: undefined, version: 'v1beta1', cacheTtlMs: 0 };
  c.requestHeader = { usernameHeaders: [], uidHeaders: [], groupHeaders: [], extraHeadersPrefix: [], clientCaFile: undefined, allowedNames: [] };
  c.proxyClient = { certFile: undefined, keyFile: undefined };
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
    else if (spec.boolean) value = 'true';
    else {
      const next = argv[i + 1];
      if (next === undefined || next.startsWith('--')) throw new FlagError(`flag needs an argument: --${name}`);
      value = next;
      i++;
    }
    spec.apply(config, value);
    config.setFlags.add(name);
  }
  if (Boolean(config.tlsCertFile) !== Boolean(config.tlsPrivateKeyFile)) {
    throw new FlagError('--tls-cert-file and --tls-private-key-file must be given together');
  }
  const oidcFlags = [...config.setFlags].filter((f) => f.startsWith('oidc-'));
  if (config.authenticationConfig && oidcFlags.length > 0) {
    throw new FlagError(`--authentication-config and --${oidcFlags[0]} are mutually exclusive: put the issuer in the configuration file`);
  }
  if (oidcFlags.length > 0 && (!config.oidc.issuerUrl || !config.oidc.clientId)) {
    throw new FlagError('--oidc-issuer-url and --oidc-client-id are both required when any --oidc-* flag is set');
  }
  if (config.authenticationConfig && !config.featureGates.enabled('StructuredAuthenticationConfiguration')) {
    throw new FlagError('--authentication-config needs the feature gate StructuredAuthenticationConfiguration');
  }
  if (config.authorizationConfig && !config.featureGates.enabled('StructuredAuthorizationConfiguration')) {
    throw new FlagError('--authorization-config cannot be used without enabling StructuredAuthorizationConfiguration feature flag');
  }
  const admissionErrors = validateAdmissionPluginFlags(config.enableAdmissionPlugins, config.disableAdmissionPlugins);
  if (admissionErrors.length) throw new FlagError(admissionErrors.length === 1 ? admissionErrors[0]! : `[${admissionErrors.join(', ')}]`);
  const authzErrors = validateAuthorizationFlags({ ...config.authorization, configFile: config.authorizationConfig, setFlags: config.setFlags });
  if (authzErrors.length) throw new FlagError(authzErrors.length === 1 ? authzErrors[0]! : `[${authzErrors.join(', ')}]`);
  if ((config.proxyClient.certFile === undefined) !== (config.proxyClient.keyFile === undefined)) {
    throw new FlagError('--proxy-client-cert-file and --proxy-client-key-file go together: give both or neither');
  }
  if (config.requestHeader.usernameHeaders.length > 0 && !config.requestHeader.clientCaFile) {
    throw new FlagError('--requestheader-username-headers needs --requestheader-client-ca-file (the proxy must present a certificate it signs)');
  }
  if (config.electionTimeoutMs < 5 * config.heartbeatIntervalMs) {
    throw new FlagError('--election-timeout must be at least 5 times --heartbeat-interval');
  }
  if (config.storage === 'etcd') {
    if (config.etcd.servers.length === 0) throw new FlagError('--storage=etcd needs --etcd-servers');
    if (config.initialCluster.length > 0 || config.join) throw new FlagError('--storage=etcd replaces the Raft group: leave out --initial-cluster and --join (servers on one etcd share it directly)');
    if ((config.etcd.certFile === undefined) !== (config.etcd.keyFile === undefined)) throw new FlagError('--etcd-certfile and --etcd-keyfile go together: give both or neither');
  } else if (config.etcd.servers.length > 0) {
    throw new FlagError('--etcd-servers is only used with --storage=etcd');
  }
  if (config.initialCluster.length > 0 || config.join) {
    if (config.storage !== 'leveldb') throw new FlagError('a cluster replica needs --storage=leveldb');
    const own = config.initialCluster.find((m) => m.name === config.name);
    if (config.join) {
      if (!config.peerAddress) throw new FlagError('--join needs --peer-address');
    } else if (!own) {
      throw new FlagError(`--initial-cluster does not list this replica (--name=${config.name})`);
    }
    if (own && config.peerAddress && own.peerAddress !== config.peerAddress) {
      throw new FlagError(`--peer-address ${config.peerAddress} differs from this replica's entry in --initial-cluster (${own.peerAddress})`);
    }
    config.peerAddress ??= own?.peerAddress;
    // A wildcard API address is no address the other replicas can use: publish the host they
    // reach this one's peer port at (its serving certificate names that host too, whether
    // from `clusterd pki --replica` or issued at its join), as kube-apiserver publishes an
    // interface's address rather than its bind address.
    if (config.advertiseAddress === undefined && (config.bindAddress === '0.0.0.0' || config.bindAddress === '::') && config.peerAddress) {
      config.advertiseAddress = splitHostPort(config.peerAddress)[0];
    }
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
    lines.push(`  --${f.name}=${f.value}${f.repeatable ? ' (repeatable)' : ''}`);
    lines.push(`      ${f.help}${f.default !== '' ? ` (default ${f.default})` : ''}`);
  }
  lines.push('  -h, --help', '      Print this help and exit.');
  return lines.join('\n') + '\n';
}

export { formatDuration };

/** A `host:port` address (an IPv6 host in brackets) as its host, unbracketed, and its port. */
export function splitHostPort(hp: string): [string, number] {
  const i = hp.lastIndexOf(':');
  return [hp.slice(0, i).replace(/^\[|\]$/g, ''), Number(hp.slice(i + 1))];
}
