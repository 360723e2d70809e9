import { describe, expect, it } from 'vitest';
import { aggregate, checksFor, evaluatePod, levelVersionString, type Obj } from './checks.js';

const c = (name: string, securityContext: Obj = {}, extra: Obj = {}): Obj => ({ name, image: 'busybox', securityContext, ...extra });
/** A container that passes every restricted check. */
const good = (name: string): Obj => c(name, { allowPrivilegeEscalation: false, runAsNonRoot: true, capabilities: { drop: ['ALL'] }, seccompProfile: { type: 'RuntimeDefault' } });
const spec = (over: Obj = {}): Obj => ({ containers: [good('a')], ...over });

// One row per check and outcome: level, pod metadata, pod spec, the expected failures (`reason (detail)`).
const cases: Array<[string, 'baseline' | 'restricted', Obj, Obj, string]> = [
  ['passes baseline with nothing set', 'baseline', {}, { containers: [c('a')] }, ''],
  ['passes restricted when every container is locked down', 'restricted', {}, spec(), ''],
  ['hostProcess on pod and container', 'baseline', {}, spec({ securityContext: { windowsOptions: { hostProcess: true } }, containers: [c('a', { windowsOptions: { hostProcess: true } })] }), 'hostProcess (pod and container "a" must not set securityContext.windowsOptions.hostProcess=true)'],
  ['host namespaces', 'baseline', {}, spec({ hostNetwork: true, hostIPC: true }), 'host namespaces (hostNetwork=true, hostIPC=true)'],
  ['privileged containers, init ones included', 'baseline', {}, spec({ initContainers: [c('i', { privileged: true })], containers: [c('a', { privileged: true })] }), 'privileged (containers "i", "a" must not set securityContext.privileged=true)'],
  ['non-default capabilities', 'baseline', {}, spec({ containers: [c('a', { capabilities: { add: ['SYS_ADMIN', 'CHOWN', 'NET_ADMIN'] } })] }), 'non-default capabilities (container "a" must not include "NET_ADMIN", "SYS_ADMIN" in securityContext.capabilities.add)'],
  ['hostPath volumes', 'baseline', {}, spec({ volumes: [{ name: 'h', hostPath: { path: '/' } }, { name: 'e', emptyDir: {} }] }), 'hostPath volumes (volume "h")'],
  ['host ports', 'baseline', {}, spec({ containers: [c('a', {}, { ports: [{ containerPort: 80, hostPort: 8080 }, { containerPort: 81 }] })] }), 'hostPort (container "a" uses hostPort 8080)'],
  ['AppArmor unconfined field and annotation', 'baseline', { annotations: { 'container.apparmor.security.beta.kubernetes.io/a': 'unconfined' } }, spec({ securityContext: { appArmorProfile: { type: 'Unconfined' } } }), 'forbidden AppArmor profiles (pod and annotation must not set AppArmor profile type to "Unconfined", "container.apparmor.security.beta.kubernetes.io/a=\\"unconfined\\"")'],
  ['AppArmor RuntimeDefault and Localhost allowed', 'baseline', { annotations: { 'container.apparmor.security.beta.kubernetes.io/a': 'runtime/default' } }, spec({ containers: [c('a', { appArmorProfile: { type: 'Localhost', localhostProfile: 'p' } })] }), ''],
  ['SELinux type, user and role', 'baseline', {}, spec({ containers: [c('a', { seLinuxOptions: { type: 'spc_t', user: 'u', role: 'r' } })] }), 'seLinuxOptions (container "a" set forbidden securityContext.seLinuxOptions: type "spc_t"; user "u"; role "r")'],
  ['SELinux allowed types', 'baseline', {}, spec({ securityContext: { seLinuxOptions: { type: 'container_engine_t', level: 's0:c1' } } }), ''],
  ['/proc mount', 'baseline', {}, spec({ containers: [c('a', { procMount: 'Unmasked' })] }), 'procMount (container "a" must not set securityContext.procMount to "Unmasked")'],
  ['seccomp Unconfined (baseline)', 'baseline', {}, spec({ securityContext: { seccompProfile: { type: 'Unconfined' } } }), 'seccompProfile (pod must not set securityContext.seccompProfile.type to "Unconfined")'],
  ['sysctls', 'baseline', {}, spec({ securityContext: { sysctls: [{ name: 'net.ipv4.tcp_rmem', value: '1' }, { name: 'kernel.msgmax', value: '1' }] } }), 'forbidden sysctls (kernel.msgmax)'],
  ['restricted volume types', 'restricted', {}, spec({ volumes: [{ name: 'n', nfs: { server: 's', path: '/' } }, { name: 'h', hostPath: { path: '/' } }, { name: 'ok', configMap: { name: 'x' } }] }), 'hostPath volumes (volume "h"), restricted volume types (volumes "n", "h" use restricted volume types "hostPath", "nfs")'],
  ['privilege escalation', 'restricted', {}, spec({ containers: [c('a', { runAsNonRoot: true, capabilities: { drop: ['ALL'] }, seccompProfile: { type: 'RuntimeDefault' } })] }), 'allowPrivilegeEscalation != false (container "a" must set securityContext.allowPrivilegeEscalation=false)'],
  ['runAsNonRoot explicitly false', 'restricted', {}, spec({ securityContext: { runAsNonRoot: false } }), 'runAsNonRoot != true (pod must not set securityContext.runAsNonRoot=false)'],
  ['runAsNonRoot set on the pod covers containers', 'restricted', {}, spec({ securityContext: { runAsNonRoot: true }, containers: [c('a', { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] }, seccompProfile: { type: 'RuntimeDefault' } })] }), ''],
  ['runAsUser 0', 'restricted', {}, spec({ securityContext: { runAsUser: 0 } }), 'runAsUser=0 (pod must not set runAsUser=0)'],
  ['seccomp restricted: Unconfined container', 'restricted', {}, spec({ containers: [c('a', { allowPrivilegeEscalation: false, runAsNonRoot: true, capabilities: { drop: ['ALL'] }, seccompProfile: { type: 'Unconfined' } })] }), 'seccompProfile (container "a" must not set securityContext.seccompProfile.type to "Unconfined")'],
  ['capabilities restricted: drop ALL and only NET_BIND_SERVICE', 'restricted', {}, spec({ containers: [c('a', { allowPrivilegeEscalation: false, runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' }, capabilities: { add: ['NET_BIND_SERVICE', 'CHOWN'] } })] }), 'unrestricted capabilities (container "a" must set securityContext.capabilities.drop=["ALL"]; container "a" must not include "CHOWN" in securityContext.capabilities.add)'],
  [
    'an unhardened pod under restricted, in check-ID order',
    'restricted',
    {},
    { containers: [c('nginx')] },
    'allowPrivilegeEscalation != false (container "nginx" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container "nginx" must set securityContext.capabilities.drop=["ALL"]), runAsNonRoot != true (pod or container "nginx" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container "nginx" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")',
  ],
  ['a Windows pod skips the Linux-only restricted checks', 'restricted', {}, { os: { name: 'windows' }, securityContext: { runAsNonRoot: true }, containers: [c('w')] }, ''],
];

describe('Pod Security Standards checks (1.32)', () => {
  it.each(cases)('%s', (_name, level, meta, podSpec, expected) => {
    expect(aggregate(evaluatePod({ level, version: 'latest' }, meta, podSpec))).toBe(expected);
  });

  it('privileged runs no check; restricted replaces baseline capabilities and seccomp checks', () => {
    expect(checksFor({ level: 'privileged', version: 'latest' })).toEqual([]);
    const restricted = checksFor({ level: 'restricted', version: 'latest' }).map((c) => c.id);
    expect(restricted).not.toContain('capabilities_baseline');
    expect(restricted).not.toContain('seccompProfile_baseline');
    expect(restricted).toContain('hostNamespaces');
    expect(checksFor({ level: 'baseline', version: 'latest' }).map((c) => c.id)).not.toContain('runAsNonRoot');
  });

  it('follows the policy version: sysctls allowed later, restricted checks introduced later', () => {
    const tcp = spec({ securityContext: { sysctls: [{ name: 'net.ipv4.tcp_keepalive_time', value: '1' }] } });
    expect(aggregate(evaluatePod({ level: 'baseline', version: 28 }, {}, tcp))).toBe('forbidden sysctls (net.ipv4.tcp_keepalive_time)');
    expect(aggregate(evaluatePod({ level: 'baseline', version: 29 }, {}, tcp))).toBe('');
    const ids = (v: number) => checksFor({ level: 'restricted', version: v }).map((c) => c.id);
    expect(ids(21)).not.toContain('capabilities_restricted');
    expect(ids(22)).toContain('capabilities_restricted');
    expect(levelVersionString({ level: 'baseline', version: 30 })).toBe('baseline:v1.30');
  });
});
