import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { ReloadableFiles } from '../config/reloadable-files.js';
import { silentLogger } from '../log/logger.js';
import type { Authorizer } from './authorizer.js';
import { AuthorizationConfigController } from './authorization-config-controller.js';
import { AuthorizationConfigError, parseAuthorizationConfig, type ConfiguredAuthorizer } from './authorization-config.js';
import { AuthorizerChain } from './chain.js';

const GROUP = 'apiserver.config.cluster.io';
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function tmp(): string {
  const d = mkdtempSync(join(tmpdir(), 'authz-config-'));
  dirs.push(d);
  return d;
}
// Lives for the whole file (the afterEach cleanup is for each test's own directory).
const dir = mkdtempSync(join(tmpdir(), 'authz-config-'));
const kubeconfig = join(dir, 'webhook.kubeconfig');
writeFileSync(kubeconfig, 'apiVersion: v1\nkind: Config\n');
mkdirSync(join(dir, 'a-directory'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const webhook = (over: Record<string, unknown> = {}): Record<string, unknown> => ({
  timeout: '3s',
  subjectAccessReviewVersion: 'v1',
  matchConditionSubjectAccessReviewVersion: 'v1',
  failurePolicy: 'Deny',
  connectionInfo: { type: 'KubeConfigFile', kubeConfigFile: kubeconfig },
  ...over,
});
const doc = (authorizers: unknown[], apiVersion = `${GROUP}/v1`): string => JSON.stringify({ apiVersion, kind: 'AuthorizationConfiguration', authorizers });
const problems = (text: string): string[] => {
  try {
    parseAuthorizationConfig(text, { group: GROUP });
  } catch (e) {
    if (e instanceof AuthorizationConfigError) return e.problems;
    throw e;
  }
  return [];
};

describe('AuthorizationConfiguration parsing', () => {
  it('reads YAML with every field, defaulting the webhook as upstream v1 does', () => {
    const yaml = `
apiVersion: ${GROUP}/v1
kind: AuthorizationConfiguration
authorizers:
  - type: Node
    name: node
  - type: Webhook
    name: first.example.com
    webhook:
      timeout: 3s
      authorizedTTL: 1m
      unauthorizedTTL: 0s
      cacheUnauthorizedRequests: false
      subjectAccessReviewVersion: v1beta1
      matchConditionSubjectAccessReviewVersion: v1
      failurePolicy: NoOpinion
      connectionInfo:
        type: KubeConfigFile
        kubeConfigFile: ${kubeconfig}
      matchConditions:
        - expression: has(request.resourceAttributes)
        - expression: request.user != "system:anonymous"
  - type: RBAC
    name: rbac
`;
    expect(parseAuthorizationConfig(yaml, { group: GROUP })).toEqual<ConfiguredAuthorizer[]>([
      { type: 'Node', name: 'node' },
      {
        type: 'Webhook',
        name: 'first.example.com',
        webhook: {
          authorizedTtlMs: 60_000,
          cacheAuthorizedRequests: true,
          unauthorizedTtlMs: 30_000,
          cacheUnauthorizedRequests: false,
          timeoutMs: 3000,
          subjectAccessReviewVersion: 'v1beta1',
          matchConditionSubjectAccessReviewVersion: 'v1',
          failurePolicy: 'NoOpinion',
          kubeConfigFile: kubeconfig,
          matchConditions: [{ expression: 'has(request.resourceAttributes)' }, { expression: 'request.user != "system:anonymous"' }],
        },
      },
      { type: 'RBAC', name: 'rbac' },
    ]);
  });

  it.each(['v1', 'v1beta1', 'v1alpha1'])('accepts apiVersion %s, as upstream 1.32 does', (v) => {
    expect(parseAuthorizationConfig(doc([{ type: 'RBAC', name: 'rbac' }], `${GROUP}/${v}`), { group: GROUP })).toEqual([{ type: 'RBAC', name: 'rbac' }]);
  });

  const tooMany = Array.from({ length: 65 }, (_, i) => ({ expression: `request.user == "u${i}"` }));
  it.each<[string, string, string[]]>([
    ['the other naming\'s group', doc([{ type: 'RBAC', name: 'r' }], 'apiserver.config.k8s.io/v1'), [`apiVersion: Unsupported value: "apiserver.config.k8s.io/v1": supported values: "${GROUP}/v1", "${GROUP}/v1beta1", "${GROUP}/v1alpha1"`]],
    ['another kind', JSON.stringify({ apiVersion: `${GROUP}/v1`, kind: 'AuthenticationConfiguration' }), ['kind: Unsupported value: "AuthenticationConfiguration": supported values: "AuthorizationConfiguration"']],
    ['no authorizers', doc([]), ['authorizers: Required value: at least one authorization mode must be defined']],
    ['a missing type', doc([{ name: 'x' }]), ['authorizers[0].type: Required value']],
    ['ABAC in the file', doc([{ type: 'ABAC', name: 'abac' }]), ['authorizers[0].type: Unsupported value: "ABAC": supported values: "Node", "RBAC", "Webhook"']],
    ['AlwaysAllow in the file', doc([{ type: 'AlwaysAllow', name: 'a' }]), ['authorizers[0].type: Unsupported value: "AlwaysAllow": supported values: "Node", "RBAC", "Webhook"']],
    ['two RBAC', doc([{ type: 'RBAC', name: 'a' }, { type: 'RBAC', name: 'b' }]), ['authorizers[1].type: Duplicate value: "RBAC"']],
    ['two Node', doc([{ type: 'Node', name: 'a' }, { type: 'Node', name: 'b' }]), ['authorizers[1].type: Duplicate value: "Node"']],
    ['a missing name', doc([{ type: 'RBAC' }]), ['authorizers[0].name: Required value']],
    ['a duplicate name', doc([{ type: 'RBAC', name: 'x' }, { type: 'Node', name: 'x' }]), ['authorizers[1].name: Duplicate value: "x"']],
    ['a name that is not DNS-1123', doc([{ type: 'RBAC', name: 'My_RBAC' }]), [`authorizers[0].name: Invalid value: "My_RBAC": authorizer name is invalid: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`]],
    ['a Webhook without its block', doc([{ type: 'Webhook', name: 'w' }]), ['authorizers[0].webhook: Required value: required when type=Webhook']],
    ['a webhook block on RBAC', doc([{ type: 'RBAC', name: 'r', webhook: webhook() }]), ['authorizers[0].webhook: Invalid value: "non-null": may only be specified when type=Webhook']],
    ['no timeout', doc([{ type: 'Webhook', name: 'w', webhook: webhook({ timeout: undefined }) }]), ['authorizers[0].webhook.timeout: Required value']],
    ['a zero timeout', doc([{ type: 'Webhook', name: 'w', webhook: webhook({ timeout: '0s' }) }]), ['authorizers[0].webhook.timeout: Required value']],
    ['a timeout over 30s', doc([{ type: 'Webhook', name: 'w', webhook: webhook({ timeout: '31s' }) }]), ['authorizers[0].webhook.timeout: Invalid value: "31s": must be > 0s and <= 30s']],
    ['a negative timeout', doc([{ type: 'Webhook', name: 'w', webhook: webhook({ timeout: '-1s' }) }]), ['authorizers[0].webhook.timeout: Invalid value: "-1s": must be > 0s and <= 30s']],
    ['a negative TTL', doc([{ type: 'Webhook', name: 'w', webhook: webhook({ authorizedTTL: '-5m' }) }]), ['authorizers[0].webhook.authorizedTTL: Invalid value: "-5m": must be greater than 0']],
    ['no SAR version', doc([{ type: 'Webhook', name: 'w', webhook: webhook({ subjectAccessReviewVersion: undefined }) }]), ['authorizers[0].webhook.subjectAccessReviewVersion: Required value']],
    ['a SAR version v2', doc([{ type: 'Webhook', name: 'w', webhook: webhook({ subjectAccessReviewVersion: 'v2' }) }]), ['authorizers[0].webhook.subjectAccessReviewVersion: Unsupported value: "v2": supported values: "v1", "v1beta1"']],
    ['a match-condition SAR version v1beta1', doc([{ type: 'Webhook', name: 'w', webhook: webhook({ matchConditionSubjectAccessReviewVersion: 'v1beta1' }) }]), ['authorizers[0].webhook.matchConditionSubjectAccessReviewVersion: Unsupported value: "v1beta1": supported values: "v1"']],
    ['no failure policy', doc([{ type: 'Webhook', name: 'w', webhook: webhook({ failurePolicy: undefined }) }]), ['authorizers[0].webhook.failurePolicy: Required value']],
    ['failure policy Allow', doc([{ type: 'Webhook', name: 'w', webhook: webhook({ failurePolicy: 'Allow' }) }]), ['authorizers[0].webhook.failurePolicy: Unsupported value: "Allow": supported values: "Deny", "NoOpinion"']],
    ['InClusterConfig', doc([{ type: 'Webhook', name: 'w', webhook: webhook({ connectionInfo: { type: 'InClusterConfig' } }) }]), ['authorizers[0].webhook.connectionInfo.type: Invalid value: "InClusterConfig": not supported for the API server itself; use KubeConfigFile']],
    ['an unknown connection type', doc([{ type: 'Webhook', name: 'w', webhook: webhook({ connectionInfo: { type: 'Magic' } }) }]), ['authorizers[0].webhook.connectionInfo.type: Unsupported value: "Magic": supported values: "InClusterConfig", "KubeConfigFile"']],
    ['no kubeconfig path', doc([{ type: 'Webhook', name: 'w', webhook: webhook({ connectionInfo: { type: 'KubeConfigFile' } }) }]), ['authorizers[0].webhook.connectionInfo.kubeConfigFile: Required value']],
    ['a relative kubeconfig path', doc([{ type: 'Webhook', name: 'w', webhook: webhook({ connectionInfo: { type: 'KubeConfigFile', kubeConfigFile: 'w.kubeconfig' } }) }]), ['authorizers[0].webhook.connectionInfo.kubeConfigFile: Invalid value: "w.kubeconfig": must be an absolute path']],
    ['a kubeconfig that is a directory', doc([{ type: 'Webhook', name: 'w', webhook: webhook({ connectionInfo: { type: 'KubeConfigFile', kubeConfigFile: join(dir, 'a-directory') } }) }]), [`authorizers[0].webhook.connectionInfo.kubeConfigFile: Invalid value: ${JSON.stringify(join(dir, 'a-directory'))}: must be a regular file`]],
    ['65 match conditions', doc([{ type: 'Webhook', name: 'w', webhook: webhook({ matchConditions: tooMany }) }]), ['authorizers[0].webhook.matchConditions: Too many: 65: must have at most 64 items']],
    ['an empty match condition', doc([{ type: 'Webhook', name: 'w', webhook: webhook({ matchConditions: [{ expression: '  ' }] }) }]), ['authorizers[0].webhook.matchConditions[0].expression: Required value']],
    ['a repeated match condition', doc([{ type: 'Webhook', name: 'w', webhook: webhook({ matchConditions: [{ expression: 'true' }, { expression: 'true' }] }) }]), ['authorizers[0].webhook.matchConditions[1].expression: Duplicate value: "true"']],
  ])('refuses %s', (_name, text, expected) => {
    expect(problems(text)).toEqual(expected);
  });

  it('refuses a match condition that does not compile, naming it', () => {
    const p = problems(doc([{ type: 'Webhook', name: 'w', webhook: webhook({ matchConditions: [{ expression: 'request.user ==' }] }) }]));
    expect(p).toHaveLength(1);
    expect(p[0]).toMatch(/^authorizers\[0\]\.webhook\.matchConditions\[0\]\.expression: Invalid value: "request\.user ==": compilation failed: /);
  });

  it('reports every problem, in upstream\'s aggregate form', () => {
    const text = doc([{ type: 'RBAC' }, { type: 'Webhook', name: 'w', webhook: webhook({ timeout: '1m', failurePolicy: 'x' }) }]);
    expect(() => parseAuthorizationConfig(text, { group: GROUP })).toThrow(
      '[authorizers[0].name: Required value, authorizers[1].webhook.timeout: Invalid value: "1m": must be > 0s and <= 30s, authorizers[1].webhook.failurePolicy: Unsupported value: "x": supported values: "Deny", "NoOpinion"]',
    );
  });

  it('refuses text that is not YAML', () => {
    expect(problems('a: [')[0]).toMatch(/^not valid YAML or JSON/);
  });
});

describe('AuthorizationConfigController', () => {
  const named = (name: string): Authorizer => ({ name, authorize: () => ({ decision: 'noOpinion', reason: '' }) });
  const build = (configured: readonly ConfiguredAuthorizer[]): Authorizer[] => configured.map((c) => named(c.name));
  const reloads = async (registry: Registry): Promise<Record<string, number>> => {
    const m = registry.getSingleMetric('apiserver_authorization_config_controller_automatic_reloads_total');
    const out: Record<string, number> = {};
    for (const v of (await m!.get()).values) out[String(v.labels.status)] = v.value;
    return out;
  };
  /** Replaces the file as editors and ConfigMap volumes do (new inode), so the watcher sees it. */
  const replace = (file: string, text: string): void => {
    writeFileSync(`${file}.tmp`, text);
    renameSync(`${file}.tmp`, file);
  };

  it('loads at start, swaps a valid new file whole, keeps the chain on an invalid one, and counts both', async () => {
    const d = tmp();
    const file = join(d, 'authz.yaml');
    writeFileSync(file, doc([{ type: 'Node', name: 'first' }, { type: 'RBAC', name: 'second' }]));
    const files = new ReloadableFiles(new Map([['authorization', file]]));
    const chain = new AuthorizerChain([]);
    const registry = new Registry();
    const c = new AuthorizationConfigController({ files, group: GROUP, build, chain, log: silentLogger, registry, apiserverId: 'test', recheckIntervalMs: 0 });
    expect(chain.current().map((z) => z.name)).toEqual(['first', 'second']);

    replace(file, doc([{ type: 'RBAC', name: 'only' }]));
    files.check();
    expect(chain.current().map((z) => z.name)).toEqual(['only']);
    expect(await reloads(registry)).toEqual({ success: 1 });

    replace(file, doc([{ type: 'RBAC', name: 'a' }, { type: 'RBAC', name: 'b' }]));
    files.check();
    expect(chain.current().map((z) => z.name)).toEqual(['only']);
    expect(await reloads(registry)).toEqual({ success: 1, failure: 1 });
    // The same invalid bytes again are not another failed reload.
    replace(file, doc([{ type: 'RBAC', name: 'a' }, { type: 'RBAC', name: 'b' }]));
    files.check();
    expect(await reloads(registry)).toEqual({ success: 1, failure: 1 });

    // Back to a valid file: it applies.
    replace(file, doc([{ type: 'Node', name: 'again' }]));
    files.check();
    expect(chain.current().map((z) => z.name)).toEqual(['again']);
    expect(await reloads(registry)).toEqual({ success: 2, failure: 1 });
    c.stop();
  });

  it('keeps the chain when a valid file names an authorizer that cannot be built', async () => {
    const d = tmp();
    const file = join(d, 'authz.yaml');
    writeFileSync(file, doc([{ type: 'RBAC', name: 'fine' }]));
    const files = new ReloadableFiles(new Map([['authorization', file]]));
    const chain = new AuthorizerChain([]);
    const registry = new Registry();
    const c = new AuthorizationConfigController({
      files, group: GROUP, chain, log: silentLogger, registry, apiserverId: 'x', recheckIntervalMs: 0,
      build: (configured) => {
        if (configured.some((x) => x.name === 'boom')) throw new Error('not built yet');
        return build(configured);
      },
    });
    replace(file, doc([{ type: 'RBAC', name: 'boom' }]));
    files.check();
    expect(chain.current().map((z) => z.name)).toEqual(['fine']);
    expect(await reloads(registry)).toEqual({ failure: 1 });
    c.stop();
  });

  it('re-reads on its periodic check, without the metadata poll', async () => {
    const d = tmp();
    const file = join(d, 'authz.yaml');
    writeFileSync(file, doc([{ type: 'RBAC', name: 'aaaa' }]));
    const files = new ReloadableFiles(new Map([['authorization', file]]));
    const chain = new AuthorizerChain([]);
    const c = new AuthorizationConfigController({ files, group: GROUP, build, chain, log: silentLogger, registry: undefined, apiserverId: 'test', recheckIntervalMs: 50 });
    // Nobody polls the files' metadata here (no files.watch()): only the periodic re-read can see it.
    writeFileSync(file, doc([{ type: 'RBAC', name: 'bbbb' }]));
    for (let i = 0; i < 100 && chain.current()[0]!.name === 'aaaa'; i++) await new Promise((r) => setTimeout(r, 20));
    expect(chain.current().map((z) => z.name)).toEqual(['bbbb']);
    c.stop();
  });

  it('refuses to start on an invalid file', () => {
    const d = tmp();
    const file = join(d, 'authz.yaml');
    writeFileSync(file, doc([{ type: 'ABAC', name: 'abac' }]));
    const files = new ReloadableFiles(new Map([['authorization', file]]));
    expect(() => new AuthorizationConfigController({ files, group: GROUP, build, chain: new AuthorizerChain([]), log: silentLogger, registry: undefined, apiserverId: 't', recheckIntervalMs: 0 })).toThrow(/Unsupported value: "ABAC"/);
  });
});
