import { describe, expect, it } from 'vitest';
import { FlagError, helpText, parseFlags, type ServerConfig } from '../config/flags.js';
import type { Logger } from '../log/logger.js';
import { createNaming } from '../naming/naming.js';
import { ApiCatalog } from '../schema/catalog.js';
import { StatusError } from '../apierrors/status.js';
import { AdmissionChain, type AdmissionPlugin, type AdmissionRequest } from './admission.js';
import { ALL_ORDERED_PLUGINS, buildPlugins, DEFAULT_ON_PLUGINS, enabledPluginNames, FACTORIES, validateAdmissionPluginFlags, type AdmissionPluginDeps } from './plugins.js';
import type { WebhookDispatcher } from './webhook/dispatcher.js';
import { DEFAULT_POD_SECURITY_CONFIG } from './pod-security/policy.js';

function recordingLog(): Logger & { lines: Array<{ level: string; msg: string; fields?: Record<string, unknown> }> } {
  const lines: Array<{ level: string; msg: string; fields?: Record<string, unknown> }> = [];
  const log = {
    lines,
    error: (msg: string, fields?: Record<string, unknown>) => lines.push({ level: 'error', msg, ...(fields ? { fields } : {}) }),
    warn: (msg: string, fields?: Record<string, unknown>) => lines.push({ level: 'warn', msg, ...(fields ? { fields } : {}) }),
    info: (msg: string, fields?: Record<string, unknown>) => lines.push({ level: 'info', msg, ...(fields ? { fields } : {}) }),
    debug: () => {},
    child: () => log,
  };
  return log as unknown as Logger & { lines: typeof lines };
}

const webhooksStub = {
  mutatingPlugin: (): AdmissionPlugin => ({ name: 'MutatingAdmissionWebhook', handles: () => true }),
  validatingPlugin: (): AdmissionPlugin => ({ name: 'ValidatingAdmissionWebhook', handles: () => true }),
} as unknown as WebhookDispatcher;

const deps = (log: Logger, namespaces: Record<string, boolean> = {}): AdmissionPluginDeps => ({
  log,
  naming: createNaming('kubernetes'),
  namespaceLookup: async (name) => ({ exists: name in namespaces, terminating: namespaces[name] === true }),
  immortalNamespaces: ['default'],
  nodeRestriction: { naming: createNaming('kubernetes'), getPod: async () => undefined, getNode: async () => undefined },
  priorityClasses: () => [],
  defaultTolerationSeconds: { notReady: 300, unreachable: 300 },
  webhooks: webhooksStub,
  validatingPolicies: { name: 'ValidatingAdmissionPolicy', handles: () => true },
  serviceAccounts: { getServiceAccount: async () => undefined, rootCaConfigMap: 'kube-root-ca.crt' },
  limitRanges: () => [],
  quotas: { list: () => [], get: async () => undefined, updateStatus: async () => undefined },
  podSecurity: { config: DEFAULT_POD_SECURITY_CONFIG, namespaceLabels: async () => ({}), podsIn: () => [] },
  storageClasses: () => [],
  authorize: () => ({ decision: 'noOpinion', reason: '' }),
});

describe('admission plugin flags', () => {
  it('runs upstream’s default set in upstream’s order, whatever order the flags name plugins in', () => {
    const byDefault = enabledPluginNames([], []);
    expect(byDefault).toEqual(ALL_ORDERED_PLUGINS.filter((n) => DEFAULT_ON_PLUGINS.has(n)));
    // On by default with the default Node,RBAC authorization, as kubeadm and k3s run it.
    expect(byDefault).toContain('NodeRestriction');
    expect(enabledPluginNames([], ['NodeRestriction'])).not.toContain('NodeRestriction');
    const c = parseFlags(['--enable-admission-plugins=AlwaysDeny,NodeRestriction,NamespaceExists', '--disable-admission-plugins=ValidatingAdmissionWebhook,NamespaceLifecycle']) as ServerConfig;
    const names = enabledPluginNames(c.enableAdmissionPlugins, c.disableAdmissionPlugins);
    expect(names.indexOf('NamespaceExists')).toBeLessThan(names.indexOf('NodeRestriction'));
    expect(names.indexOf('NodeRestriction')).toBeLessThan(names.indexOf('MutatingAdmissionWebhook'));
    expect(names.at(-1)).toBe('AlwaysDeny');
    expect(names).not.toContain('ValidatingAdmissionWebhook');
    expect(names).not.toContain('NamespaceLifecycle');
  });

  it.each([
    [['--enable-admission-plugins=Nope'], 'enable-admission-plugins plugin "Nope" is unknown'],
    [['--disable-admission-plugins=PodSecurityPolicy'], 'disable-admission-plugins plugin "PodSecurityPolicy" is unknown'],
    [['--enable-admission-plugins=NodeRestriction,AlwaysDeny', '--disable-admission-plugins=AlwaysDeny,NodeRestriction'], '[AlwaysDeny NodeRestriction] in enable-admission-plugins and disable-admission-plugins overlapped'],
  ])('refuses %j', (args, message) => {
    expect(() => parseFlags(args)).toThrow(FlagError);
    expect(() => parseFlags(args)).toThrow(message);
  });

  it('lists both errors at once', () => {
    expect(validateAdmissionPluginFlags(['A'], ['B'])).toEqual(['enable-admission-plugins plugin "A" is unknown', 'disable-admission-plugins plugin "B" is unknown']);
  });

  it('--help explains both flags and names every plugin', () => {
    const help = helpText();
    expect(help).toContain('--enable-admission-plugins=name,...');
    expect(help).toContain('--disable-admission-plugins=name,...');
    for (const n of ALL_ORDERED_PLUGINS) expect(help).toContain(n);
  });
});

describe('building the chain', () => {
  const naming = createNaming('kubernetes');
  const catalog = new ApiCatalog(naming);
  const req = (fields: Partial<AdmissionRequest>): AdmissionRequest => ({
    operation: 'CREATE',
    resource: catalog.resource('', 'v1', 'configmaps')!,
    subresource: '',
    namespace: 'ns',
    name: 'x',
    object: { metadata: { name: 'x' } },
    oldObject: undefined,
    user: { name: 'u', groups: [] },
    dryRun: false,
    ...fields,
  });

  it('logs the enabled names it does not implement once: warn for those asked for, info for defaults', () => {
    const log = recordingLog();
    const plugins = buildPlugins(enabledPluginNames(['AlwaysPullImages'], []), deps(log), ['AlwaysPullImages']);
    expect(plugins.map((p) => p.name)).toEqual(['NamespaceLifecycle', 'LimitRanger', 'ServiceAccount', 'NodeRestriction', 'TaintNodesByCondition', 'PodSecurity', 'Priority', 'DefaultTolerationSeconds', 'DefaultStorageClass', 'StorageObjectInUseProtection', 'CertificateApproval', 'CertificateSigning', 'CertificateSubjectRestriction', 'MutatingAdmissionPolicy', 'MutatingAdmissionWebhook', 'ValidatingAdmissionPolicy', 'ValidatingAdmissionWebhook', 'ResourceQuota']);
    const warn = log.lines.filter((l) => l.level === 'warn');
    expect(warn).toHaveLength(1);
    expect(warn[0]!.fields).toEqual({ plugins: ['AlwaysPullImages'] });
    const info = log.lines.filter((l) => l.level === 'info');
    expect(info).toHaveLength(1);
    const unimplementedDefaults = [...DEFAULT_ON_PLUGINS].filter((n) => !FACTORIES[n as keyof typeof FACTORIES]);
    expect(new Set(info[0]!.fields!.plugins as string[])).toEqual(new Set(unimplementedDefaults));
  });

  it('places the storage steps after the mutating webhooks and before the validating ones', () => {
    const step: AdmissionPlugin = { name: 'step', handles: () => true };
    const names = buildPlugins(enabledPluginNames(['AlwaysDeny'], []), deps(recordingLog()), [], [step]).map((p) => p.name);
    expect(names).toEqual(['NamespaceLifecycle', 'LimitRanger', 'ServiceAccount', 'NodeRestriction', 'TaintNodesByCondition', 'PodSecurity', 'Priority', 'DefaultTolerationSeconds', 'DefaultStorageClass', 'StorageObjectInUseProtection', 'CertificateApproval', 'CertificateSigning', 'CertificateSubjectRestriction', 'MutatingAdmissionPolicy', 'MutatingAdmissionWebhook', 'step', 'ValidatingAdmissionPolicy', 'ValidatingAdmissionWebhook', 'ResourceQuota', 'AlwaysDeny']);
    expect(buildPlugins(['NamespaceLifecycle'], deps(recordingLog()), [], [step]).map((p) => p.name)).toEqual(['NamespaceLifecycle', 'step']);
  });

  it('AlwaysDeny and NamespaceExists answer as upstream', async () => {
    const chain = new AdmissionChain(buildPlugins(['NamespaceExists', 'AlwaysDeny'], deps(recordingLog(), { ns: false })));
    const outcome = async (r: AdmissionRequest, phase: 'mutate' | 'validate') => {
      try {
        await chain[phase](r);
        return 'ok';
      } catch (e) {
        return e instanceof StatusError ? `${e.code} ${e.status.message}` : String(e);
      }
    };
    expect(await outcome(req({}), 'mutate')).toBe('403 configmaps "x" is forbidden: admission control is denying all modifications');
    expect(await outcome(req({}), 'validate')).toBe('ok');
    expect(await outcome(req({ namespace: 'gone' }), 'validate')).toBe('404 namespaces "gone" not found');
    // NamespaceLifecycle refuses in the mutating phase, before any later mutating plugin runs.
    const reached: string[] = [];
    const later: AdmissionPlugin = { name: 'later', handles: () => true, admit: (r) => void reached.push(r.namespace) };
    const lifecycle = new AdmissionChain([...buildPlugins(['NamespaceLifecycle'], deps(recordingLog(), { ns: false, ending: true })), later]);
    const lifecycleOutcome = async (r: AdmissionRequest) => {
      try {
        await lifecycle.mutate(r);
        return 'ok';
      } catch (e) {
        return e instanceof StatusError ? `${e.code} ${e.status.message}` : String(e);
      }
    };
    expect(await lifecycleOutcome(req({ namespace: 'gone' }))).toBe('404 namespaces "gone" not found');
    expect(await lifecycleOutcome(req({ namespace: 'ending' }))).toBe('403 configmaps "x" is forbidden: unable to create new content in namespace ending because it is being terminated');
    expect(await lifecycleOutcome(req({ operation: 'DELETE', resource: catalog.resource('', 'v1', 'namespaces')!, namespace: '', name: 'default', object: undefined }))).toBe('403 namespaces "default" is forbidden: this namespace may not be deleted');
    expect(await lifecycleOutcome(req({}))).toBe('ok');
    expect(reached).toEqual(['ns']);
  });
});
