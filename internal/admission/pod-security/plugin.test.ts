import { describe, expect, it } from 'vitest';
import { StatusError } from '../../apierrors/status.js';
import { createNaming, type NamingMode } from '../../naming/naming.js';
import { ApiCatalog } from '../../schema/catalog.js';
import type { AdmissionRequest, JsonObject } from '../admission.js';
import { podSecurity } from './plugin.js';
import { DEFAULT_POD_SECURITY_CONFIG, parsePodSecurityConfiguration, policyFromLabels, type PodSecurityConfig } from './policy.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- test bodies are read freely

for (const mode of ['kubernetes', 'cluster'] as NamingMode[]) {
  describe(`PodSecurity plugin (--naming=${mode})`, () => {
    const naming = createNaming(mode);
    const catalog = new ApiCatalog(naming);
    const ps = (k: string) => `pod-security.${naming.labelDomain}/${k}`;
    const namespaces: Record<string, Record<string, string>> = {
      strict: { [ps('enforce')]: 'restricted' },
      base: { [ps('enforce')]: 'baseline', [ps('warn')]: 'restricted', [ps('audit')]: 'restricted', [ps('audit-version')]: 'v1.30' },
      open: {},
    };
    const existing: JsonObject[] = [];
    const plugin = (config: PodSecurityConfig = DEFAULT_POD_SECURITY_CONFIG) =>
      podSecurity({ naming, config, namespaceLabels: async (n) => namespaces[n], podsIn: (n) => (n === 'open' ? existing : []) });
    const run = async (p: ReturnType<typeof plugin>, fields: Partial<Omit<AdmissionRequest, 'resource'>> & { group?: string; resource?: string }) => {
      const warnings: string[] = [];
      const annotations: Record<string, string> = {};
      const { group = '', resource = 'pods', ...rest } = fields;
      const req: AdmissionRequest = {
        operation: 'CREATE',
        resource: catalog.resource(naming.group(group), 'v1', resource)!,
        subresource: '',
        namespace: 'strict',
        name: 'p',
        object: undefined,
        oldObject: undefined,
        user: { name: 'alice', groups: [] },
        dryRun: false,
        warnings,
        annotate: (k, v) => void (annotations[k] = v),
        ...rest,
      };
      let error: string | undefined;
      try {
        await p.validate!(req);
      } catch (e) {
        if (!(e instanceof StatusError)) throw e;
        error = `${e.code} ${e.status.message}`;
      }
      return { error, warnings, annotations };
    };
    const pod = (spec: Obj = {}): Obj => ({ metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'nginx' }], ...spec } });
    const restrictedFailure = 'allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"]), runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")';

    it('enforce refuses with upstream’s message and records the policy for audit', async () => {
      const r = await run(plugin(), { object: pod() });
      expect(r.error).toBe(`403 pods "p" is forbidden: violates PodSecurity "restricted:latest": ${restrictedFailure}`);
      expect(r.warnings).toEqual([]);
      expect(r.annotations[ps('enforce-policy')]).toBe('restricted:latest');
    });

    it('follows a namespace whose labels change (a new labels object per stored version)', async () => {
      const labels: Record<string, Readonly<Record<string, string>>> = { moving: { [ps('enforce')]: 'restricted' } };
      const p = podSecurity({ naming, config: DEFAULT_POD_SECURITY_CONFIG, namespaceLabels: async (n) => labels[n], podsIn: () => [] });
      expect((await run(p, { namespace: 'moving', object: pod() })).error).toContain('violates PodSecurity "restricted:latest"');
      expect((await run(p, { namespace: 'moving', object: pod() })).error).toContain('violates PodSecurity "restricted:latest"');
      labels.moving = { [ps('enforce')]: 'baseline' };
      expect((await run(p, { namespace: 'moving', object: pod() })).error).toBeUndefined();
      expect((await run(p, { namespace: 'moving', object: pod({ hostNetwork: true }) })).error).toContain('violates PodSecurity "baseline:latest"');
      delete labels.moving;
      expect((await run(p, { namespace: 'moving', object: pod({ hostNetwork: true }) })).error).toBeUndefined();
    });

    it('warn and audit report what enforce lets through', async () => {
      const r = await run(plugin(), { namespace: 'base', object: pod() });
      expect(r.error).toBeUndefined();
      expect(r.warnings).toEqual([`299 - ${JSON.stringify(`would violate PodSecurity "restricted:latest": ${restrictedFailure}`)}`]);
      expect(r.annotations[ps('audit-violations')]).toBe(`would violate PodSecurity "restricted:v1.30": ${restrictedFailure}`);
      const privileged = await run(plugin(), { namespace: 'base', object: pod({ hostNetwork: true }) });
      expect(privileged.error).toBe('403 pods "p" is forbidden: violates PodSecurity "baseline:latest": host namespaces (hostNetwork=true)');
    });

    it('workload templates get a warning (warn follows a stricter enforce), never a refusal', async () => {
      const deployment = { metadata: { name: 'd' }, spec: { template: pod() } };
      const r = await run(plugin(), { group: 'apps', resource: 'deployments', name: 'd', object: deployment });
      expect(r.error).toBeUndefined();
      expect(r.warnings).toEqual([`299 - ${JSON.stringify(`would violate PodSecurity "restricted:latest": ${restrictedFailure}`)}`]);
      const cron = { metadata: { name: 'cj' }, spec: { jobTemplate: { spec: { template: pod() } } } };
      expect((await run(plugin(), { group: 'batch', resource: 'cronjobs', name: 'cj', object: cron })).warnings).toHaveLength(1);
      // An update that leaves the template as it was is not evaluated.
      const same = await run(plugin(), { group: 'apps', resource: 'deployments', name: 'd', operation: 'UPDATE', object: { ...deployment, metadata: { name: 'd', labels: { x: 'y' } } }, oldObject: deployment });
      expect(same.warnings).toEqual([]);
    });

    it('skips pod updates that change nothing a check reads, and evaluates image changes', async () => {
      const old = pod();
      const relabelled = { ...pod(), metadata: { name: 'p', labels: { a: 'b' } } };
      expect((await run(plugin(), { operation: 'UPDATE', object: relabelled, oldObject: old })).error).toBeUndefined();
      const newImage = pod({ containers: [{ name: 'c', image: 'nginx:2' }] });
      expect((await run(plugin(), { operation: 'UPDATE', object: newImage, oldObject: old })).error).toContain('violates PodSecurity');
      expect((await run(plugin(), { operation: 'UPDATE', subresource: 'status', object: newImage, oldObject: old })).error).toBeUndefined();
    });

    it('exempts usernames, runtime classes and namespaces from the configuration', async () => {
      const config = parsePodSecurityConfiguration(naming, {
        apiVersion: `${naming.group('pod-security.admission.config.k8s.io')}/v1`,
        kind: 'PodSecurityConfiguration',
        defaults: { enforce: 'baseline' },
        exemptions: { usernames: ['ci'], runtimeClasses: ['kata'], namespaces: ['strict'] },
      });
      const p = plugin(config);
      const ns = await run(p, { object: pod() });
      expect(ns.error).toBeUndefined();
      expect(ns.annotations[ps('exempt')]).toBe('namespace');
      expect((await run(p, { namespace: 'open', user: { name: 'ci', groups: [] }, object: pod({ hostPID: true }) })).annotations[ps('exempt')]).toBe('user');
      expect((await run(p, { namespace: 'open', object: pod({ hostPID: true, runtimeClassName: 'kata' }) })).annotations[ps('exempt')]).toBe('runtimeClass');
      // The configured default (baseline) applies to a namespace without labels.
      expect((await run(p, { namespace: 'open', object: pod({ hostPID: true }) })).error).toBe('403 pods "p" is forbidden: violates PodSecurity "baseline:latest": host namespaces (hostPID=true)');
    });

    it('refuses invalid policy labels on namespaces, and warns about existing pods when enforce tightens', async () => {
      const ns = (labels: Record<string, string>) => ({ metadata: { name: 'open', labels } });
      const bad = await run(plugin(), { resource: 'namespaces', namespace: '', name: 'open', object: ns({ [ps('enforce')]: 'strictest' }) });
      expect(bad.error).toBe(`422 Namespace "open" is invalid: metadata.labels[${ps('enforce')}]: Invalid value: "strictest": must be one of privileged, baseline, restricted`);
      existing.push(pod({ hostNetwork: true }), { ...pod(), metadata: { name: 'q' } }, { ...pod(), metadata: { name: 'r' } });
      const tightened = await run(plugin(), { resource: 'namespaces', namespace: '', name: 'open', operation: 'UPDATE', object: ns({ [ps('enforce')]: 'restricted' }), oldObject: ns({}) });
      expect(tightened.error).toBeUndefined();
      expect(tightened.warnings.map((w) => JSON.parse(w.slice('299 - '.length)))).toEqual([
        'existing pods in namespace "open" violate the new PodSecurity enforce level "restricted:latest"',
        'p: allowPrivilegeEscalation != false, unrestricted capabilities, host namespaces, runAsNonRoot != true, seccompProfile',
        'q (and 1 other pod): allowPrivilegeEscalation != false, unrestricted capabilities, runAsNonRoot != true, seccompProfile',
      ]);
      const unchanged = await run(plugin(), { resource: 'namespaces', namespace: '', name: 'open', operation: 'UPDATE', object: ns({ [ps('enforce')]: 'restricted', other: 'x' }), oldObject: ns({ [ps('enforce')]: 'restricted' }) });
      expect(unchanged.warnings).toEqual([]);
    });

    it('reads labels as upstream: enforce fails closed, warn and audit fail open, bad versions mean latest', () => {
      const { policy, errors } = policyFromLabels(naming, { [ps('enforce')]: 'x', [ps('warn')]: 'y', [ps('audit-version')]: 'v2' }, DEFAULT_POD_SECURITY_CONFIG.defaults);
      expect(policy.enforce).toEqual({ level: 'restricted', version: 'latest' });
      expect(policy.warn.level).toBe('privileged');
      expect(policy.audit.version).toBe('latest');
      expect(errors.map((e) => e.field)).toEqual([`metadata.labels[${ps('enforce')}]`, `metadata.labels[${ps('audit-version')}]`, `metadata.labels[${ps('warn')}]`]);
      expect(policyFromLabels(naming, { [ps('enforce-version')]: 'v1.99' }, DEFAULT_POD_SECURITY_CONFIG.defaults).policy.enforce.version).toBe('latest');
      expect(() => parsePodSecurityConfiguration(naming, { defaults: { warn: 'loose' } })).toThrow('defaults.warn: Invalid value: "loose"');
    });
  });
}
