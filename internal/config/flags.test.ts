import { describe, it, expect } from 'vitest';
import { FlagError, helpText, parseFlags, type ServerConfig } from './flags.js';
import { parseDuration } from './duration.js';
import { KNOWN_GATES } from './feature-gates.js';
import { enablementFrom, parseRuntimeConfig } from './runtime-config.js';
import { stabilityOf } from '../schema/versions.js';

const parse = (...args: string[]) => parseFlags(args) as ServerConfig;

describe('flags', () => {
  it('has the documented defaults', () => {
    const c = parse();
    expect(c).toMatchObject({ dataDir: './data', bindAddress: '0.0.0.0', securePort: 6443, storage: 'leveldb', naming: 'cluster', compactionIntervalMs: 300_000, logLevel: 'warn' });
    expect(c.featureGates.enabled('APIResponseCompression')).toBe(true);
    expect(c.featureGates.enabled('CBORServingAndStorage')).toBe(false);
    expect(c).toMatchObject({ snapshotCount: 10_000, legacyServiceAccountTokenCleanUpPeriodMs: 365 * 24 * 3600_000, serviceAccountExtendTokenExpiration: true });
    expect(parse('--snapshot-count=500').snapshotCount).toBe(500);
    expect(c).toMatchObject({ defaultNotReadyTolerationSeconds: 300, defaultUnreachableTolerationSeconds: 300 });
    expect(parse('--default-not-ready-toleration-seconds=60', '--default-unreachable-toleration-seconds=0')).toMatchObject({ defaultNotReadyTolerationSeconds: 60, defaultUnreachableTolerationSeconds: 0 });
    expect(c.etcd).toEqual({ servers: [], caFile: undefined, certFile: undefined, keyFile: undefined, prefix: '/registry', compactionIntervalMs: 300_000 });
    expect(parse('--storage=etcd', '--etcd-servers=https://a:2379, https://b:2379', '--etcd-prefix=/clusterd', '--etcd-compaction-interval=1m', '--etcd-cafile=ca.pem', '--etcd-certfile=c.pem', '--etcd-keyfile=k.pem').etcd).toEqual({
      servers: ['https://a:2379', 'https://b:2379'],
      caFile: 'ca.pem',
      certFile: 'c.pem',
      keyFile: 'k.pem',
      prefix: '/clusterd',
      compactionIntervalMs: 60_000,
    });
  });

  it('accepts --name=value and --name value', () => {
    const c = parse('--secure-port=0', '--data-dir', '/tmp/x', '--naming=kubernetes', '--storage=memory', '--shutdown-delay-duration=2s');
    expect(c).toMatchObject({ securePort: 0, dataDir: '/tmp/x', naming: 'kubernetes', storage: 'memory', shutdownDelayMs: 2000 });
  });

  it.each([
    [['--nope'], /unknown flag: --nope/],
    [['--secure-port=70000'], /--secure-port/],
    [['--storage=sqlite'], /must be one of leveldb, memory, etcd/],
    [['--storage=etcd'], /--storage=etcd needs --etcd-servers/],
    [['--etcd-servers=https://127.0.0.1:2379'], /only used with --storage=etcd/],
    [['--storage=etcd', '--etcd-servers=https://127.0.0.1:2379', '--etcd-certfile=c.pem'], /--etcd-certfile and --etcd-keyfile go together/],
    [['--storage=etcd', '--etcd-servers=https://127.0.0.1:2379', '--initial-cluster=a=127.0.0.1:2380', '--name=a'], /replaces the Raft group/],
    [['--naming=k8s'], /must be one of cluster, kubernetes/],
    [['--bind-address=localhost'], /not an IP address/],
    [['--livez-grace-period=5 minutes'], /invalid duration/],
    [['--feature-gates=Nope=true'], /unrecognized feature gate: Nope/],
    [['--feature-gates=ServerSideApply=false'], /locked to true/],
    [['--feature-gates=CBORServingAndStorage=maybe'], /must be true or false/],
    [['--runtime-config=batch/v1=perhaps'], /true or false/],
    [['--tls-cert-file=/a.crt'], /must be given together/],
    [['--data-dir'], /needs an argument/],
    [['stray'], /unexpected argument/],
    [['--snapshot-count=0'], /--snapshot-count must be at least 1/],
    [['--legacy-service-account-token-clean-up-period=0s'], /must be greater than 0/],
    [['--default-not-ready-toleration-seconds=-1'], /--default-not-ready-toleration-seconds: must be a non-negative integer/],
    [['--proxy-client-cert-file=/p.crt'], /--proxy-client-cert-file and --proxy-client-key-file go together/],
    [['--proxy-client-key-file=/p.key'], /--proxy-client-cert-file and --proxy-client-key-file go together/],
  ])('rejects %j', (args, message) => {
    expect(() => parseFlags(args)).toThrow(FlagError);
    expect(() => parseFlags(args)).toThrow(message);
  });

  it('takes the front-proxy client certificate and key together, neither by default', () => {
    const parsed = parseFlags(['--proxy-client-cert-file=/p.crt', '--proxy-client-key-file=/p.key']) as ServerConfig;
    expect(parsed.proxyClient).toEqual({ certFile: '/p.crt', keyFile: '/p.key' });
    expect((parseFlags([]) as ServerConfig).proxyClient).toEqual({ certFile: undefined, keyFile: undefined });
  });

  it('takes an IP or a DNS name for --advertise-address, nothing else', () => {
    const parsed = (args: string[]): ServerConfig => parseFlags(args) as ServerConfig;
    expect(parsed(['--advertise-address=10.0.0.7']).advertiseAddress).toBe('10.0.0.7');
    expect(parsed(['--advertise-address', 'clusterd-0.clusterd-peer']).advertiseAddress).toBe('clusterd-0.clusterd-peer');
    expect(parsed([]).advertiseAddress).toBeUndefined();
    for (const bad of ['https://x', 'a b', 'x:6443', '-x.example']) {
      expect(() => parseFlags([`--advertise-address=${bad}`]), bad).toThrow(/--advertise-address: not an IP address or DNS name/);
    }
  });

  // On three machines with the README's command line (API on 0.0.0.0, no --advertise-address)
  // each replica must publish the host the others reach it at — its peer host, which its
  // serving certificate names — not 127.0.0.1, which is each machine itself.
  it.each([
    ['a wildcard bind: the host of its --initial-cluster entry', ['--name=a', '--initial-cluster=a=10.0.0.1:2380,b=10.0.0.2:2380'], '10.0.0.1'],
    ['a wildcard IPv6 bind: the host of its entry', ['--name=b', '--bind-address=::', '--initial-cluster=a=10.0.0.1:2380,b=[fd00::2]:2380'], 'fd00::2'],
    ['a DNS name as peer host', ['--name=a', '--initial-cluster=a=a.example.com:2380'], 'a.example.com'],
    ['a joiner: the host of --peer-address', ['--name=d', '--join=https://10.0.0.1:6443', '--token=t', '--peer-address=10.0.0.4:2380'], '10.0.0.4'],
    ['an explicit --advertise-address wins', ['--name=a', '--initial-cluster=a=10.0.0.1:2380', '--advertise-address=a.example.com'], 'a.example.com'],
    ['a specific bind address is what the others reach', ['--name=a', '--initial-cluster=a=10.0.0.1:2380', '--bind-address=192.168.1.5'], undefined],
    ['a single replica keeps no default', [], undefined],
  ])('advertises, for %s', (_what, args, want) => {
    expect(parse(...args).advertiseAddress).toBe(want);
  });

  it('documents every flag in --help', () => {
    expect(parseFlags(['--help'])).toBe('help');
    const text = helpText();
    for (const flag of ['data-dir', 'bind-address', 'secure-port', 'storage', 'naming', 'feature-gates', 'runtime-config', 'livez-grace-period', 'shutdown-delay-duration', 'tls-cert-file', 'tls-private-key-file', 'client-ca-file', 'compaction-interval']) {
      expect(text).toContain(`--${flag}=`);
    }
  });

  it('parses Go durations', () => {
    expect([parseDuration('1h30m'), parseDuration('250ms'), parseDuration('0'), parseDuration('1.5s')]).toEqual([5_400_000, 250, 0, 1500]);
  });
});

describe('the feature gates both specification documents name', () => {
  it.each([
    ['APIResponseCompression', 'beta', true],
    ['CBORServingAndStorage', 'alpha', false],
    ['ListFromCacheSnapshot', 'beta', true],
    ['AllowUnsafeMalformedObjectDeletion', 'alpha', false],
    ['NodeDeclaredFeatures', 'alpha', false],
    ['StructuredAuthenticationConfiguration', 'beta', true],
    ['StructuredAuthenticationConfigurationEgressSelector', 'beta', true],
    ['ContainerCheckpoint', 'beta', true],
    ['DeclarativeValidation', 'beta', true],
    ['DeclarativeValidationTakeover', 'beta', false],
  ] as const)('%s is known (%s, default %s) and can be set', (gate, stage, def) => {
    expect(KNOWN_GATES[gate]).toEqual({ stage, default: def });
    expect(parse(`--feature-gates=${gate}=${!def}`).featureGates.enabled(gate)).toBe(!def);
  });
});

describe('runtime-config', () => {
  const enabled = (text: string) => enablementFrom(parseRuntimeConfig(text), stabilityOf);
  it.each([
    ['', 'batch', 'v1', undefined, true],
    ['', 'networking.cluster.io', 'v1beta1', undefined, false],
    ['batch/v1=false', 'batch', 'v1', undefined, false],
    ['api/beta=true', 'networking.cluster.io', 'v1beta1', undefined, true],
    ['api/all=true', 'scheduling.cluster.io', 'v1alpha1', undefined, true],
    ['api/all=true,api/alpha=false', 'scheduling.cluster.io', 'v1alpha1', undefined, false],
    ['v1=false', '', 'v1', undefined, false],
    ['networking.cluster.io/v1beta1/ipaddresses', 'networking.cluster.io', 'v1beta1', undefined, true],
    ['networking.cluster.io/v1beta1/ipaddresses', 'networking.cluster.io', 'v1beta1', 'ipaddresses', true],
    ['networking.cluster.io/v1beta1/ipaddresses', 'networking.cluster.io', 'v1beta1', 'servicecidrs', false],
    ['apps/v1/daemonsets=false', 'apps', 'v1', 'daemonsets', false],
    ['apps/v1/daemonsets=false', 'apps', 'v1', 'deployments', true],
  ])('%s → %s/%s %s served: %s', (text, group, version, resource, expected) => {
    expect(enabled(text)(group, version, resource)).toBe(expected);
  });
});

describe('authentication and controller flags', () => {
  it('default as upstream: anonymous on, lookup on, bootstrap tokens off, default controllers', () => {
    expect(parse()).toMatchObject({ anonymousAuth: true, serviceAccountLookup: true, enableBootstrapTokenAuth: false, controllers: ['*'], serviceAccountIssuers: [], serviceAccountKeyFiles: [] });
  });

  it('takes booleans alone or with a value, repeatable key files and issuers, comma lists', () => {
    const c = parse('--enable-bootstrap-token-auth', '--anonymous-auth=false', '--service-account-issuer=https://a', '--service-account-issuer', 'https://b',
      '--service-account-key-file=/k1', '--service-account-key-file=/k2', '--api-audiences=x,y', '--controllers=*,tokencleaner,-serviceaccount', '--service-account-max-token-expiration=48h');
    expect(c).toMatchObject({
      enableBootstrapTokenAuth: true, anonymousAuth: false, serviceAccountIssuers: ['https://a', 'https://b'], serviceAccountKeyFiles: ['/k1', '/k2'],
      apiAudiences: ['x', 'y'], controllers: ['*', 'tokencleaner', '-serviceaccount'], serviceAccountMaxTokenExpirationMs: 48 * 3600_000,
    });
  });

  it.each([
    ['--controllers=*,nosuch', 'not in the list of known controllers'],
    ['--anonymous-auth=maybe', 'must be true or false'],
    ['--service-account-max-token-expiration=10m', 'at least 1h'],
  ])('refuses %s', (arg, message) => {
    expect(() => parseFlags([arg])).toThrow(FlagError);
    expect(() => parseFlags([arg])).toThrow(message);
  });
});

describe('external authentication flags', () => {
  it('has upstream\'s defaults and reads lists as comma-separated and repeatable', () => {
    const d = parse();
    expect(d.oidc).toMatchObject({ usernameClaim: 'sub', signingAlgs: ['RS256'], requiredClaims: [] });
    expect(d.tokenWebhook).toEqual({ configFile: undefined, version: 'v1beta1', cacheTtlMs: 120_000 });
    const c = parse(
      '--oidc-issuer-url=https://idp.example', '--oidc-client-id=k', '--oidc-signing-algs=ES256,RS256', '--oidc-signing-algs=PS256',
      '--oidc-required-claim=hd=example.com,team=a', '--oidc-required-claim=x=y=z',
      '--requestheader-username-headers=X-Remote-User,X-User', '--requestheader-username-headers=X-Third', '--requestheader-client-ca-file=/ca',
    );
    expect(c.oidc.signingAlgs).toEqual(['ES256', 'RS256', 'PS256']);
    expect(c.oidc.requiredClaims).toEqual([{ claim: 'hd', value: 'example.com' }, { claim: 'team', value: 'a' }, { claim: 'x', value: 'y=z' }]);
    expect(c.requestHeader.usernameHeaders).toEqual(['X-Remote-User', 'X-User', 'X-Third']);
  });

  it.each([
    [['--authentication-config=/f', '--oidc-issuer-url=https://idp.example', '--oidc-client-id=k'], /--authentication-config and --oidc-issuer-url are mutually exclusive/],
    [['--oidc-groups-claim=g'], /--oidc-issuer-url and --oidc-client-id are both required/],
    [['--requestheader-username-headers=X-Remote-User'], /needs --requestheader-client-ca-file/],
    [['--authentication-config=/f', '--feature-gates=StructuredAuthenticationConfiguration=false'], /needs the feature gate StructuredAuthenticationConfiguration/],
    [['--authentication-token-webhook-version=v2'], /must be one of v1, v1beta1/],
  ])('refuses %j', (args, message) => {
    expect(() => parseFlags(args)).toThrow(FlagError);
    expect(() => parseFlags(args)).toThrow(message);
  });
});
