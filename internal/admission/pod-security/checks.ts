// internal/admission/pod-security/checks owns the Pod Security Standards as upstream's
// pod-security-admission 1.32 evaluates them: the baseline and restricted checks over a pod's
// metadata and spec, each giving upstream's forbidden reason and detail, which checks a level
// and version run (restricted runs baseline's checks too, with its own capabilities and seccomp
// checks replacing baseline's), and the aggregated message (`reason (detail), ...` in check-ID
// order). Windows pods (spec.os.name=windows) skip the checks upstream skips for them since 1.25.
// Pure: no I/O. Imports: nothing from the project.

export type Obj = Record<string, unknown>;
export type Level = 'privileged' | 'baseline' | 'restricted';

/** A policy version: the minor of `v1.<minor>`, or 'latest'. */
export type Version = number | 'latest';
/** The newest policy version this server knows; a newer label value means latest. */
export const LATEST_MINOR = 32;

export interface LevelVersion {
  level: Level;
  version: Version;
}

export interface CheckResult {
  reason: string;
  detail: string;
}

interface Check {
  id: string;
  level: 'baseline' | 'restricted';
  /** First policy version (minor) the check applies at. */
  since: number;
  /** Skipped for pods with spec.os.name=windows (policy versions 1.25 and later). */
  notWindows?: boolean;
  /** Baseline checks this restricted check takes the place of. */
  overrides?: string[];
  run(meta: Obj, spec: Obj, minor: number): CheckResult | undefined;
}

const rec = (v: unknown): Obj => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj) : {});
const list = (v: unknown): Obj[] => (Array.isArray(v) ? v.map(rec) : []);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** `"a", "b"`: each value quoted, as upstream's joinQuote. */
export const joinQuote = (items: readonly string[]): string => items.map((s) => JSON.stringify(s)).join(', ');
const plural = (one: string, many: string, n: number): string => (n === 1 ? one : many);
const sortedUnique = (items: Iterable<string>): string[] => [...new Set(items)].sort();

/** Every container of the pod: containers, initContainers and ephemeralContainers. */
function containers(spec: Obj): Obj[] {
  return [...list(spec.initContainers), ...list(spec.containers), ...list(spec.ephemeralContainers)];
}
const sc = (o: Obj): Obj => rec(o.securityContext);
const named = (c: Obj): string => str(c.name);

/** `pod and containers "a", "b"` or whichever part applies. */
function setters(pod: boolean, bad: readonly string[]): string {
  const parts: string[] = [];
  if (pod) parts.push('pod');
  if (bad.length) parts.push(containersNamed(bad));
  return parts.join(' and ');
}

/** The containers for which `offending` finds something, and everything it found (sorted, once each). */
function offendingContainers(spec: Obj, offending: (c: Obj) => string[]): { bad: string[]; values: string[] } {
  const bad: string[] = [];
  const values = new Set<string>();
  for (const c of containers(spec)) {
    const found = offending(c);
    if (found.length) {
      bad.push(named(c));
      for (const v of found) values.add(v);
    }
  }
  return { bad, values: sortedUnique(values) };
}
/** `containers "a", "b"`. */
const containersNamed = (bad: readonly string[]): string => `${plural('container', 'containers', bad.length)} ${joinQuote(bad)}`;

const hostProcess: Check = {
  id: 'hostProcess',
  level: 'baseline',
  since: 0,
  run(_meta, spec) {
    const pod = rec(sc(spec).windowsOptions).hostProcess === true;
    const bad = containers(spec).filter((c) => rec(sc(c).windowsOptions).hostProcess === true).map(named);
    if (!pod && bad.length === 0) return undefined;
    return { reason: 'hostProcess', detail: `${setters(pod, bad)} must not set securityContext.windowsOptions.hostProcess=true` };
  },
};

const hostNamespaces: Check = {
  id: 'hostNamespaces',
  level: 'baseline',
  since: 0,
  run(_meta, spec) {
    const set = (['hostNetwork', 'hostPID', 'hostIPC'] as const).filter((f) => spec[f] === true).map((f) => `${f}=true`);
    return set.length ? { reason: 'host namespaces', detail: set.join(', ') } : undefined;
  },
};

const privileged: Check = {
  id: 'privileged',
  level: 'baseline',
  since: 0,
  run(_meta, spec) {
    const bad = containers(spec).filter((c) => sc(c).privileged === true).map(named);
    return bad.length ? { reason: 'privileged', detail: `${containersNamed(bad)} must not set securityContext.privileged=true` } : undefined;
  },
};

const BASELINE_CAPABILITIES = new Set(['AUDIT_WRITE', 'CHOWN', 'DAC_OVERRIDE', 'FOWNER', 'FSETID', 'KILL', 'MKNOD', 'NET_BIND_SERVICE', 'SETFCAP', 'SETGID', 'SETPCAP', 'SETUID', 'SYS_CHROOT']);
const added = (c: Obj): string[] => (Array.isArray(rec(sc(c).capabilities).add) ? (rec(sc(c).capabilities).add as unknown[]).map(str) : []);
const dropped = (c: Obj): string[] => (Array.isArray(rec(sc(c).capabilities).drop) ? (rec(sc(c).capabilities).drop as unknown[]).map(str) : []);

const capabilitiesBaseline: Check = {
  id: 'capabilities_baseline',
  level: 'baseline',
  since: 0,
  run(_meta, spec) {
    const { bad, values } = offendingContainers(spec, (c) => added(c).filter((cap) => !BASELINE_CAPABILITIES.has(cap)));
    if (!bad.length) return undefined;
    return { reason: 'non-default capabilities', detail: `${containersNamed(bad)} must not include ${joinQuote(values)} in securityContext.capabilities.add` };
  },
};

const hostPathVolumes: Check = {
  id: 'hostPathVolumes',
  level: 'baseline',
  since: 0,
  run(_meta, spec) {
    const bad = list(spec.volumes).filter((v) => v.hostPath != null).map((v) => str(v.name));
    return bad.length ? { reason: 'hostPath volumes', detail: `${plural('volume', 'volumes', bad.length)} ${joinQuote(bad)}` } : undefined;
  },
};

const hostPorts: Check = {
  id: 'hostPorts',
  level: 'baseline',
  since: 0,
  run(_meta, spec) {
    const { bad, values } = offendingContainers(spec, (c) => list(c.ports).filter((p) => typeof p.hostPort === 'number' && p.hostPort !== 0).map((p) => String(p.hostPort)));
    if (!bad.length) return undefined;
    return { reason: 'hostPort', detail: `${containersNamed(bad)} ${plural('uses', 'use', bad.length)} ${plural('hostPort', 'hostPorts', values.length)} ${values.join(', ')}` };
  },
};

const APPARMOR_ANNOTATION_PREFIX = 'container.apparmor.security.beta.kubernetes.io/';
const appArmorProfile: Check = {
  id: 'appArmorProfile',
  level: 'baseline',
  since: 0,
  run(meta, spec) {
    const badType = (profile: unknown): string | undefined => {
      const type = str(rec(profile).type);
      return profile != null && type !== 'RuntimeDefault' && type !== 'Localhost' ? type : undefined;
    };
    const values = new Set<string>();
    const podBad = badType(sc(spec).appArmorProfile);
    if (podBad !== undefined) values.add(podBad);
    const bad: string[] = [];
    for (const c of containers(spec)) {
      const t = badType(sc(c).appArmorProfile);
      if (t !== undefined) {
        bad.push(named(c));
        values.add(t);
      }
    }
    const annotations = Object.entries(rec(meta.annotations))
      .filter(([k, v]) => k.startsWith(APPARMOR_ANNOTATION_PREFIX) && v !== '' && v !== 'runtime/default' && !str(v).startsWith('localhost/'))
      .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
      .sort();
    const parts = [setters(podBad !== undefined, bad)].filter(Boolean);
    if (annotations.length) parts.push(plural('annotation', 'annotations', annotations.length));
    if (!parts.length) return undefined;
    const all = [...sortedUnique(values), ...annotations];
    return { reason: plural('forbidden AppArmor profile', 'forbidden AppArmor profiles', all.length), detail: `${parts.join(' and ')} must not set AppArmor profile type to ${joinQuote(all)}` };
  },
};

const seLinuxOptions: Check = {
  id: 'seLinuxOptions',
  level: 'baseline',
  since: 0,
  run(_meta, spec, minor) {
    const allowedTypes = new Set(['', 'container_t', 'container_init_t', 'container_kvm_t', ...(minor >= 31 ? ['container_engine_t'] : [])]);
    const types = new Set<string>();
    const users = new Set<string>();
    const roles = new Set<string>();
    const bad = (o: Obj): boolean => {
      const opts = sc(o).seLinuxOptions;
      if (opts == null) return false;
      const r = rec(opts);
      let found = false;
      if (!allowedTypes.has(str(r.type))) (types.add(str(r.type)), (found = true));
      if (str(r.user)) (users.add(str(r.user)), (found = true));
      if (str(r.role)) (roles.add(str(r.role)), (found = true));
      return found;
    };
    const pod = bad(spec);
    const badContainers = containers(spec).filter(bad).map(named);
    if (!pod && !badContainers.length) return undefined;
    const data: string[] = [];
    if (types.size) data.push(`${plural('type', 'types', types.size)} ${joinQuote(sortedUnique(types))}`);
    if (users.size) data.push(`${plural('user', 'users', users.size)} ${joinQuote(sortedUnique(users))}`);
    if (roles.size) data.push(`${plural('role', 'roles', roles.size)} ${joinQuote(sortedUnique(roles))}`);
    return { reason: 'seLinuxOptions', detail: `${setters(pod, badContainers)} set forbidden securityContext.seLinuxOptions: ${data.join('; ')}` };
  },
};

const procMount: Check = {
  id: 'procMount',
  level: 'baseline',
  since: 0,
  run(_meta, spec) {
    const { bad, values } = offendingContainers(spec, (c) => {
      const t = sc(c).procMount;
      return t != null && t !== 'Default' ? [str(t)] : [];
    });
    if (!bad.length) return undefined;
    return { reason: 'procMount', detail: `${containersNamed(bad)} must not set securityContext.procMount to ${joinQuote(values)}` };
  },
};

const seccompType = (o: Obj): string | undefined => {
  const p = sc(o).seccompProfile;
  return p == null ? undefined : str(rec(p).type);
};

const seccompBaseline: Check = {
  id: 'seccompProfile_baseline',
  level: 'baseline',
  since: 19,
  run(_meta, spec) {
    const values = new Set<string>();
    const pod = seccompType(spec) === 'Unconfined';
    if (pod) values.add('Unconfined');
    const bad = containers(spec).filter((c) => seccompType(c) === 'Unconfined').map(named);
    if (bad.length) values.add('Unconfined');
    if (!pod && !bad.length) return undefined;
    return { reason: 'seccompProfile', detail: `${setters(pod, bad)} must not set securityContext.seccompProfile.type to ${joinQuote([...values])}` };
  },
};

/** Safe sysctls, with the policy version each became allowed at. */
const SAFE_SYSCTLS: ReadonlyArray<[string, number]> = [
  ['kernel.shm_rmid_forced', 0],
  ['net.ipv4.ip_local_port_range', 0],
  ['net.ipv4.tcp_syncookies', 0],
  ['net.ipv4.ping_group_range', 0],
  ['net.ipv4.ip_unprivileged_port_start', 0],
  ['net.ipv4.ip_local_reserved_ports', 27],
  ['net.ipv4.tcp_keepalive_time', 29],
  ['net.ipv4.tcp_fin_timeout', 29],
  ['net.ipv4.tcp_keepalive_intvl', 29],
  ['net.ipv4.tcp_keepalive_probes', 29],
  ['net.ipv4.tcp_rmem', 32],
  ['net.ipv4.tcp_wmem', 32],
];

const sysctls: Check = {
  id: 'sysctls',
  level: 'baseline',
  since: 0,
  run(_meta, spec, minor) {
    const safe = new Set(SAFE_SYSCTLS.filter(([, since]) => minor >= since).map(([n]) => n));
    const bad = list(sc(spec).sysctls).map((s) => str(s.name)).filter((n) => !safe.has(n));
    return bad.length ? { reason: 'forbidden sysctls', detail: bad.join(', ') } : undefined;
  },
};

const ALLOWED_VOLUME_TYPES = new Set(['configMap', 'csi', 'downwardAPI', 'emptyDir', 'ephemeral', 'persistentVolumeClaim', 'projected', 'secret']);
const restrictedVolumes: Check = {
  id: 'restrictedVolumes',
  level: 'restricted',
  since: 0,
  run(_meta, spec) {
    const bad: string[] = [];
    const types = new Set<string>();
    for (const v of list(spec.volumes)) {
      const sources = Object.keys(v).filter((k) => k !== 'name' && v[k] != null);
      const forbidden = sources.filter((k) => !ALLOWED_VOLUME_TYPES.has(k));
      if (forbidden.length || sources.length === 0) {
        bad.push(str(v.name));
        if (forbidden.length) for (const t of forbidden) types.add(t);
        else types.add('unknown');
      }
    }
    if (!bad.length) return undefined;
    return {
      reason: 'restricted volume types',
      detail: `${plural('volume', 'volumes', bad.length)} ${joinQuote(bad)} ${plural('uses', 'use', bad.length)} ${plural('restricted volume type', 'restricted volume types', types.size)} ${joinQuote(sortedUnique(types))}`,
    };
  },
};

const allowPrivilegeEscalation: Check = {
  id: 'allowPrivilegeEscalation',
  level: 'restricted',
  since: 8,
  notWindows: true,
  run(_meta, spec) {
    const bad = containers(spec).filter((c) => sc(c).allowPrivilegeEscalation !== false).map(named);
    return bad.length ? { reason: 'allowPrivilegeEscalation != false', detail: `${containersNamed(bad)} must set securityContext.allowPrivilegeEscalation=false` } : undefined;
  },
};

const runAsNonRoot: Check = {
  id: 'runAsNonRoot',
  level: 'restricted',
  since: 0,
  run(_meta, spec) {
    const podValue = sc(spec).runAsNonRoot;
    const explicit: string[] = [];
    const implicit: string[] = [];
    for (const c of containers(spec)) {
      const v = sc(c).runAsNonRoot;
      if (v === false) explicit.push(named(c));
      else if (v == null && podValue !== true) implicit.push(named(c));
    }
    if (podValue === false || explicit.length) return { reason: 'runAsNonRoot != true', detail: `${setters(podValue === false, explicit)} must not set securityContext.runAsNonRoot=false` };
    if (implicit.length) return { reason: 'runAsNonRoot != true', detail: `pod or ${plural('container', 'containers', implicit.length)} ${joinQuote(implicit)} must set securityContext.runAsNonRoot=true` };
    return undefined;
  },
};

const runAsUser: Check = {
  id: 'runAsUser',
  level: 'restricted',
  since: 23,
  run(_meta, spec) {
    const pod = sc(spec).runAsUser === 0;
    const bad = containers(spec).filter((c) => sc(c).runAsUser === 0).map(named);
    return pod || bad.length ? { reason: 'runAsUser=0', detail: `${setters(pod, bad)} must not set runAsUser=0` } : undefined;
  },
};

const seccompRestricted: Check = {
  id: 'seccompProfile_restricted',
  level: 'restricted',
  since: 19,
  notWindows: true,
  overrides: ['seccompProfile_baseline'],
  run(_meta, spec) {
    const ok = (t: string | undefined) => t === 'RuntimeDefault' || t === 'Localhost';
    const podType = seccompType(spec);
    const podBad = podType !== undefined && !ok(podType);
    const values = new Set<string>();
    if (podBad) values.add(podType);
    const explicit: string[] = [];
    const implicit: string[] = [];
    for (const c of containers(spec)) {
      const t = seccompType(c);
      if (t !== undefined && !ok(t)) {
        explicit.push(named(c));
        values.add(t);
      } else if (t === undefined && !ok(podType)) implicit.push(named(c));
    }
    if (podBad || explicit.length) return { reason: 'seccompProfile', detail: `${setters(podBad, explicit)} must not set securityContext.seccompProfile.type to ${joinQuote(sortedUnique(values))}` };
    if (implicit.length) {
      return { reason: 'seccompProfile', detail: `pod or ${plural('container', 'containers', implicit.length)} ${joinQuote(implicit)} must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost"` };
    }
    return undefined;
  },
};

const capabilitiesRestricted: Check = {
  id: 'capabilities_restricted',
  level: 'restricted',
  since: 22,
  notWindows: true,
  overrides: ['capabilities_baseline'],
  run(_meta, spec) {
    const missingDrop = containers(spec).filter((c) => !dropped(c).includes('ALL')).map(named);
    const adding = offendingContainers(spec, (c) => added(c).filter((cap) => cap !== 'NET_BIND_SERVICE'));
    const details: string[] = [];
    if (missingDrop.length) details.push(`${containersNamed(missingDrop)} must set securityContext.capabilities.drop=["ALL"]`);
    if (adding.bad.length) details.push(`${containersNamed(adding.bad)} must not include ${joinQuote(adding.values)} in securityContext.capabilities.add`);
    return details.length ? { reason: 'unrestricted capabilities', detail: details.join('; ') } : undefined;
  },
};

/** Every check, sorted by ID as upstream's registry orders them (the order of the message). */
export const CHECKS: readonly Check[] = [
  hostProcess,
  hostNamespaces,
  privileged,
  capabilitiesBaseline,
  hostPathVolumes,
  hostPorts,
  appArmorProfile,
  seLinuxOptions,
  procMount,
  seccompBaseline,
  sysctls,
  restrictedVolumes,
  allowPrivilegeEscalation,
  runAsNonRoot,
  runAsUser,
  seccompRestricted,
  capabilitiesRestricted,
].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));

const minorOf = (v: Version): number => (v === 'latest' ? LATEST_MINOR : Math.min(v, LATEST_MINOR));

/** The checks a level and version run. */
export function checksFor(lv: LevelVersion): Check[] {
  if (lv.level === 'privileged') return [];
  const minor = minorOf(lv.version);
  const wanted = CHECKS.filter((c) => (c.level === 'baseline' || lv.level === 'restricted') && minor >= c.since);
  const overridden = new Set(wanted.flatMap((c) => c.overrides ?? []));
  return wanted.filter((c) => !overridden.has(c.id));
}

/** The failed checks of a pod (metadata and spec) at a level and version, in check-ID order. */
export function evaluatePod(lv: LevelVersion, meta: Obj, spec: Obj): CheckResult[] {
  const minor = minorOf(lv.version);
  const windows = minor >= 25 && str(rec(spec.os).name) === 'windows';
  const out: CheckResult[] = [];
  for (const c of checksFor(lv)) {
    if (windows && c.notWindows) continue;
    const r = c.run(meta, spec, minor);
    if (r) out.push(r);
  }
  return out;
}

/** `reason (detail), reason (detail)`: upstream's aggregated forbidden text. */
export function aggregate(results: readonly CheckResult[]): string {
  return results.map((r) => (r.detail ? `${r.reason} (${r.detail})` : r.reason)).join(', ');
}

/** `restricted:latest` / `baseline:v1.30`. */
export function levelVersionString(lv: LevelVersion): string {
  return `${lv.level}:${lv.version === 'latest' ? 'latest' : `v1.${lv.version}`}`;
}
