// PodSecurity and the PVC protection finalizer through kubectl against a real server process,
// under both namings: enforce refuses a pod with upstream's message, warn and workload
// templates print kubectl's `Warning:` lines, tightening a namespace's enforce label warns
// about the pods already there, a namespace exempted by --admission-control-config-file is not
// evaluated; a claim keeps its finalizer while a pod uses it and goes once the pod is deleted.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNaming } from '../internal/naming/naming.js';
import { kubectl, kubectlAvailable } from './support/kubectl.js';
import { startServerProcess, type ServerProcess } from './support/server-process.js';

const haveKubectl = kubectlAvailable();
if (!haveKubectl && process.env.CI === 'true') throw new Error('kubectl is required under CI=true');

const RESTRICTED = 'allowPrivilegeEscalation != false (container "p" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container "p" must set securityContext.capabilities.drop=["ALL"]), runAsNonRoot != true (pod or container "p" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container "p" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")';

for (const mode of ['cluster', 'kubernetes'] as const) {
  describe.skipIf(!haveKubectl)(`PodSecurity and storage protection through kubectl (--naming=${mode})`, () => {
    const naming = createNaming(mode);
    const ps = (k: string) => `pod-security.${naming.labelDomain}/${k}`;
    const dir = mkdtempSync(join(tmpdir(), 'psa-e2e-'));
    let server: ServerProcess;
    const k = (...args: string[]) => kubectl(server.kubeconfig, args);
    const ok = async (...args: string[]) => {
      const r = await k(...args);
      expect(r.code, r.stderr).toBe(0);
      return r;
    };

    beforeAll(async () => {
      const config = join(dir, 'admission.yaml');
      writeFileSync(
        config,
        [
          `apiVersion: ${naming.group('apiserver.config.k8s.io')}/v1`,
          'kind: AdmissionConfiguration',
          'plugins:',
          '- name: PodSecurity',
          '  configuration:',
          `    apiVersion: ${naming.group('pod-security.admission.config.k8s.io')}/v1`,
          '    kind: PodSecurityConfiguration',
          '    defaults: {enforce: privileged}',
          '    exemptions: {namespaces: [exempt]}',
          '',
        ].join('\n'),
      );
      server = await startServerProcess([`--naming=${mode}`, `--admission-control-config-file=${config}`]);
      for (const ns of ['strict', 'warned', 'exempt', 'storage']) await ok('create', 'namespace', ns);
      await ok('label', 'namespace', 'strict', `${ps('enforce')}=restricted`);
      await ok('label', 'namespace', 'exempt', `${ps('enforce')}=restricted`);
      await ok('label', 'namespace', 'warned', `${ps('warn')}=baseline`);
    });
    afterAll(async () => {
      await server?.stop();
      rmSync(dir, { recursive: true, force: true });
    });

    it('enforce: kubectl run is refused with upstream’s message', async () => {
      const r = await k('run', 'p', '--image=nginx', '-n', 'strict');
      expect(r.code).not.toBe(0);
      expect(r.stderr.trim()).toBe(`Error from server (Forbidden): pods "p" is forbidden: violates PodSecurity "restricted:latest": ${RESTRICTED}`);
    });

    it('a Deployment’s template only warns (warn follows the stricter enforce level)', async () => {
      const r = await ok('create', 'deployment', 'd', '--image=nginx', '-n', 'strict');
      expect(r.stdout).toContain('deployment.apps/d created');
      expect(r.stderr).toContain('Warning: would violate PodSecurity "restricted:latest": allowPrivilegeEscalation != false (container "nginx" must set securityContext.allowPrivilegeEscalation=false)');
    });

    it('warn: kubectl prints the warning and the pod is created; a tightened enforce label warns about it', async () => {
      const r = await ok('run', 'h', '--image=nginx', '-n', 'warned', '--overrides={"spec":{"hostNetwork":true}}');
      expect(r.stdout).toContain('pod/h created');
      expect(r.stderr).toContain('Warning: would violate PodSecurity "baseline:latest": host namespaces (hostNetwork=true)');
      const label = await ok('label', 'namespace', 'warned', `${ps('enforce')}=baseline`);
      expect(label.stderr).toContain('Warning: existing pods in namespace "warned" violate the new PodSecurity enforce level "baseline:latest"');
      expect(label.stderr).toContain('Warning: h: host namespaces');
    });

    it('invalid policy labels are refused; an exempt namespace is not evaluated', async () => {
      const bad = await k('label', 'namespace', 'warned', `${ps('audit')}=loose`);
      expect(bad.code).not.toBe(0);
      expect(bad.stderr).toContain(`metadata.labels[${ps('audit')}]: Invalid value: "loose": must be one of privileged, baseline, restricted`);
      await ok('run', 'p', '--image=nginx', '-n', 'exempt');
    });

    it('a claim used by a pod keeps its pvc-protection finalizer until the pod is deleted', async () => {
      const claim = 'apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data, namespace: storage}\nspec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}\n';
      const applied = await kubectl(server.kubeconfig, ['apply', '-f', '-'], claim);
      expect(applied.code, applied.stderr).toBe(0);
      expect((await ok('get', 'pvc', 'data', '-n', 'storage', '-o', 'jsonpath={.metadata.finalizers}')).stdout).toBe(`["${naming.labelDomain}/pvc-protection"]`);
      await ok('run', 'user', '-n', 'storage', '--image=busybox', '--overrides={"spec":{"volumes":[{"name":"v","persistentVolumeClaim":{"claimName":"data"}}],"containers":[{"name":"user","image":"busybox","volumeMounts":[{"name":"v","mountPath":"/data"}]}]}}');
      await ok('delete', 'pvc', 'data', '-n', 'storage', '--wait=false');
      await new Promise((r) => setTimeout(r, 500));
      const held = await ok('get', 'pvc', 'data', '-n', 'storage', '-o', 'jsonpath={.metadata.deletionTimestamp} {.metadata.finalizers}');
      expect(held.stdout).toMatch(new RegExp(`^\\d{4}-\\d\\d-\\d\\dT\\S+Z \\["${naming.labelDomain}/pvc-protection"\\]$`));
      await ok('delete', 'pod', 'user', '-n', 'storage', '--grace-period=0', '--force');
      await ok('wait', '--for=delete', 'pvc/data', '-n', 'storage', '--timeout=30s');
    });
  });
}
