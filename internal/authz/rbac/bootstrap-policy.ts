// internal/authz/rbac/bootstrap-policy owns the default RBAC objects every cluster starts
// with: the cluster roles and bindings of upstream kube-apiserver 1.32's bootstrap policy
// (cluster-admin, the aggregated admin/edit/view, the system:* roles), the controller roles
// (`system:controller:*`) bound to their kube-system service accounts, and the Roles and
// RoleBindings in kube-system and kube-public. Feature-gated upstream additions that 1.32 leaves
// off by default (DRA, service CIDRs, volume attributes classes, cluster trust bundles) are not
// part of it. Every group name, label and annotation goes through the naming, so under
// `--naming=cluster` the rules name `rbac.authorization.cluster.io` and the objects carry
// `cluster.io/bootstrapping`. The data is written in a compact notation of our own: `rule(verbs,
// groups, resources, names)` with space-separated lists and `core` for the legacy group.
// Imports: naming.

import type { Naming } from '../../naming/naming.js';

export interface PolicyRule {
  verbs: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

export interface Subject {
  kind: 'User' | 'Group' | 'ServiceAccount';
  name: string;
  apiGroup?: string;
  namespace?: string;
}

export interface ObjectMeta {
  name: string;
  namespace?: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

export interface RoleObject {
  apiVersion: string;
  kind: 'ClusterRole' | 'Role';
  metadata: ObjectMeta;
  rules: PolicyRule[];
  aggregationRule?: { clusterRoleSelectors: Array<{ matchLabels: Record<string, string> }> };
}

export interface BindingObject {
  apiVersion: string;
  kind: 'ClusterRoleBinding' | 'RoleBinding';
  metadata: ObjectMeta;
  roleRef: { apiGroup: string; kind: 'ClusterRole' | 'Role'; name: string };
  subjects: Subject[];
}

export interface BootstrapPolicy {
  clusterRoles: RoleObject[];
  clusterRoleBindings: BindingObject[];
  /** Namespaced roles (kube-system, kube-public). */
  roles: RoleObject[];
  roleBindings: BindingObject[];
}

/** The label/annotation keys the policy uses, in the configured naming. */
export interface PolicyKeys {
  /** `<labelDomain>/bootstrapping` = `rbac-defaults`. */
  bootstrapping: string;
  /** `rbac.authorization.<labelDomain>/autoupdate`: "false" stops reconciliation of an object. */
  autoupdate: string;
  /** `<rbac group>/aggregate-to-<name>`. */
  aggregateTo(name: 'admin' | 'edit' | 'view'): string;
  /** The served RBAC group. */
  rbacGroup: string;
}

export function policyKeys(naming: Naming): PolicyKeys {
  const rbacGroup = naming.group('rbac.authorization.k8s.io');
  return {
    bootstrapping: naming.label('bootstrapping'),
    autoupdate: `${naming.labelPrefix('rbac.authorization')}autoupdate`,
    aggregateTo: (name) => `${rbacGroup}/aggregate-to-${name}`,
    rbacGroup,
  };
}

// --- the compact notation -------------------------------------------------------------------

/** A rule before naming: groups are upstream names, `core` is the legacy group. */
type RawRule = { verbs: string; groups?: string; resources?: string; names?: string; urls?: string };

const words = (s: string): string[] => s.split(' ').filter(Boolean);
const rule = (verbs: string, groups: string, resources: string, names?: string): RawRule => ({ verbs, groups, resources, ...(names ? { names } : {}) });
const urls = (verbs: string, paths: string): RawRule => ({ verbs, urls: paths });

const READ = 'get list watch';
const WRITE = 'create delete deletecollection patch update';
const EVENTS = rule('create update patch', 'core events.k8s.io', 'events');

// --- cluster roles --------------------------------------------------------------------------

interface RawRole {
  name: string;
  rules: RawRule[];
  /** The aggregate-to-* labels this role carries. */
  aggregateTo?: Array<'admin' | 'edit' | 'view'>;
  /** admin/edit/view: rules come from the roles carrying `aggregate-to-<this>`. */
  aggregates?: 'admin' | 'edit' | 'view';
}

const CLUSTER_ROLES: RawRole[] = [
  { name: 'cluster-admin', rules: [rule('*', '*', '*'), urls('*', '*')] },
  { name: 'system:discovery', rules: [urls('get', '/api /api/* /apis /apis/* /healthz /livez /openapi /openapi/* /readyz /version /version/')] },
  { name: 'system:monitoring', rules: [urls('get', '/healthz /healthz/* /livez /livez/* /metrics /metrics/slis /readyz /readyz/*')] },
  { name: 'system:basic-user', rules: [rule('create', 'authorization.k8s.io', 'selfsubjectaccessreviews selfsubjectrulesreviews'), rule('create', 'authentication.k8s.io', 'selfsubjectreviews')] },
  { name: 'system:public-info-viewer', rules: [urls('get', '/healthz /livez /readyz /version /version/')] },
  { name: 'admin', aggregates: 'admin', rules: [] },
  { name: 'edit', aggregates: 'edit', aggregateTo: ['admin'], rules: [] },
  { name: 'view', aggregates: 'view', aggregateTo: ['edit'], rules: [] },
  {
    name: 'system:aggregate-to-admin',
    aggregateTo: ['admin'],
    rules: [rule('create', 'authorization.k8s.io', 'localsubjectaccessreviews'), rule(`${WRITE} ${READ}`, 'rbac.authorization.k8s.io', 'roles rolebindings')],
  },
  {
    name: 'system:aggregate-to-edit',
    aggregateTo: ['edit'],
    rules: [
      rule(READ, 'core', 'pods/attach pods/proxy pods/exec pods/portforward secrets services/proxy'),
      rule('impersonate', 'core', 'serviceaccounts'),
      rule(WRITE, 'core', 'pods pods/attach pods/proxy pods/exec pods/portforward'),
      rule('create', 'core', 'pods/eviction'),
      rule(WRITE, 'core', 'replicationcontrollers replicationcontrollers/scale serviceaccounts services services/proxy persistentvolumeclaims configmaps secrets events'),
      rule('create', 'core', 'serviceaccounts/token'),
      rule(WRITE, 'apps', 'statefulsets statefulsets/scale daemonsets deployments deployments/scale deployments/rollback replicasets replicasets/scale'),
      rule(WRITE, 'autoscaling', 'horizontalpodautoscalers'),
      rule(WRITE, 'batch', 'jobs cronjobs'),
      rule(WRITE, 'extensions', 'daemonsets deployments deployments/scale deployments/rollback ingresses replicasets replicasets/scale replicationcontrollers/scale networkpolicies'),
      rule(WRITE, 'policy', 'poddisruptionbudgets'),
      rule(WRITE, 'networking.k8s.io', 'ingresses networkpolicies'),
      rule(`${WRITE} ${READ}`, 'coordination.k8s.io', 'leases'),
    ],
  },
  {
    name: 'system:aggregate-to-view',
    aggregateTo: ['view'],
    rules: [
      rule(READ, 'core', 'pods replicationcontrollers replicationcontrollers/scale serviceaccounts services services/status endpoints persistentvolumeclaims persistentvolumeclaims/status configmaps'),
      rule(READ, 'core', 'limitranges resourcequotas bindings events pods/status resourcequotas/status namespaces/status replicationcontrollers/status pods/log'),
      rule(READ, 'core', 'namespaces'),
      rule(READ, 'discovery.k8s.io', 'endpointslices'),
      rule(READ, 'apps', 'controllerrevisions statefulsets statefulsets/status statefulsets/scale daemonsets daemonsets/status deployments deployments/status deployments/scale replicasets replicasets/status replicasets/scale'),
      rule(READ, 'autoscaling', 'horizontalpodautoscalers horizontalpodautoscalers/status'),
      rule(READ, 'batch', 'jobs jobs/status cronjobs cronjobs/status'),
      rule(READ, 'extensions', 'daemonsets daemonsets/status deployments deployments/scale deployments/status ingresses ingresses/status replicasets replicasets/scale replicasets/status replicationcontrollers/scale networkpolicies'),
      rule(READ, 'policy', 'poddisruptionbudgets poddisruptionbudgets/status'),
      rule(READ, 'networking.k8s.io', 'ingresses ingresses/status networkpolicies'),
    ],
  },
  { name: 'system:heapster', rules: [rule(READ, 'core', 'events pods nodes namespaces'), rule(READ, 'extensions', 'deployments')] },
  {
    name: 'system:node',
    rules: [
      rule('create', 'authentication.k8s.io', 'tokenreviews'),
      rule('create', 'authorization.k8s.io', 'subjectaccessreviews localsubjectaccessreviews'),
      rule(READ, 'core', 'services'),
      rule(`create ${READ}`, 'core', 'nodes'),
      rule('update patch', 'core', 'nodes/status'),
      rule('update patch', 'core', 'nodes'),
      rule('create update patch', 'core', 'events'),
      rule(READ, 'core', 'pods'),
      rule('create delete', 'core', 'pods'),
      rule('update patch', 'core', 'pods/status'),
      rule('create', 'core', 'pods/eviction'),
      rule(READ, 'core', 'secrets configmaps'),
      rule('get', 'core', 'persistentvolumeclaims persistentvolumes'),
      rule('get', 'core', 'endpoints'),
      rule(`create ${READ}`, 'certificates.k8s.io', 'certificatesigningrequests'),
      rule('get create update patch delete', 'coordination.k8s.io', 'leases'),
      rule('get', 'storage.k8s.io', 'volumeattachments'),
      rule('create', 'core', 'serviceaccounts/token'),
      rule('get update patch', 'core', 'persistentvolumeclaims/status'),
      rule(READ, 'storage.k8s.io', 'csidrivers'),
      rule('get create update patch delete', 'storage.k8s.io', 'csinodes'),
      rule(READ, 'node.k8s.io', 'runtimeclasses'),
    ],
  },
  {
    name: 'system:node-proxier',
    rules: [rule('list watch', 'core', 'services endpoints'), rule(READ, 'core', 'nodes'), EVENTS, rule('list watch', 'discovery.k8s.io', 'endpointslices')],
  },
  { name: 'system:node-problem-detector', rules: [rule('get', 'core', 'nodes'), rule('patch', 'core', 'nodes/status'), EVENTS] },
  { name: 'system:kubelet-api-admin', rules: [rule(READ, 'core', 'nodes'), rule('proxy', 'core', 'nodes'), rule('*', 'core', 'nodes/proxy nodes/metrics nodes/stats nodes/log')] },
  { name: 'system:node-bootstrapper', rules: [rule(`create ${READ}`, 'certificates.k8s.io', 'certificatesigningrequests')] },
  { name: 'system:auth-delegator', rules: [rule('create', 'authentication.k8s.io', 'tokenreviews'), rule('create', 'authorization.k8s.io', 'subjectaccessreviews')] },
  { name: 'system:kube-aggregator', rules: [rule(READ, 'core', 'services endpoints')] },
  {
    name: 'system:kube-controller-manager',
    rules: [
      EVENTS,
      rule('create', 'coordination.k8s.io', 'leases'),
      rule('get update', 'coordination.k8s.io', 'leases', 'kube-controller-manager'),
      rule('create', 'core', 'secrets serviceaccounts'),
      rule('delete', 'core', 'secrets'),
      rule('get', 'core', 'namespaces secrets serviceaccounts configmaps'),
      rule('update', 'core', 'secrets serviceaccounts'),
      rule('create', 'authentication.k8s.io', 'tokenreviews'),
      rule('create', 'authorization.k8s.io', 'subjectaccessreviews'),
      rule('list watch', '*', '*'),
      rule('create', 'core', 'serviceaccounts/token'),
    ],
  },
  { name: 'system:kube-dns', rules: [rule('list watch', 'core', 'endpoints services')] },
  {
    name: 'system:persistent-volume-provisioner',
    rules: [
      rule('create delete get list watch', 'core', 'persistentvolumes'),
      rule('get list watch update', 'core', 'persistentvolumeclaims'),
      rule(READ, 'storage.k8s.io', 'storageclasses'),
      rule('watch', 'core', 'events'),
      EVENTS,
    ],
  },
  {
    name: 'system:kube-scheduler',
    rules: [
      EVENTS,
      rule('create', 'coordination.k8s.io', 'leases'),
      rule('get update', 'coordination.k8s.io', 'leases', 'kube-scheduler'),
      rule(READ, 'core', 'nodes'),
      rule(`${READ} delete`, 'core', 'pods'),
      rule('create', 'core', 'bindings pods/binding'),
      rule('patch update', 'core', 'pods/status'),
      rule(READ, 'core', 'replicationcontrollers services'),
      rule(READ, 'apps extensions', 'replicasets'),
      rule(READ, 'apps', 'statefulsets'),
      rule(READ, 'policy', 'poddisruptionbudgets'),
      rule(READ, 'core', 'persistentvolumeclaims persistentvolumes'),
      rule('create', 'authentication.k8s.io', 'tokenreviews'),
      rule('create', 'authorization.k8s.io', 'subjectaccessreviews'),
      rule(READ, 'storage.k8s.io', 'csinodes'),
      rule(READ, 'core', 'namespaces'),
      rule(READ, 'storage.k8s.io', 'csidrivers'),
      rule(READ, 'storage.k8s.io', 'csistoragecapacities'),
    ],
  },
  {
    name: 'system:volume-scheduler',
    rules: [rule(`${READ} patch update`, 'core', 'persistentvolumes'), rule(READ, 'storage.k8s.io', 'storageclasses'), rule(`${READ} patch update`, 'core', 'persistentvolumeclaims')],
  },
  { name: 'system:certificates.k8s.io:legacy-unknown-approver', rules: [rule('approve', 'certificates.k8s.io', 'signers', 'kubernetes.io/legacy-unknown')] },
  { name: 'system:certificates.k8s.io:kubelet-serving-approver', rules: [rule('approve', 'certificates.k8s.io', 'signers', 'kubernetes.io/kubelet-serving')] },
  { name: 'system:certificates.k8s.io:kube-apiserver-client-approver', rules: [rule('approve', 'certificates.k8s.io', 'signers', 'kubernetes.io/kube-apiserver-client')] },
  { name: 'system:certificates.k8s.io:kube-apiserver-client-kubelet-approver', rules: [rule('approve', 'certificates.k8s.io', 'signers', 'kubernetes.io/kube-apiserver-client-kubelet')] },
  { name: 'system:certificates.k8s.io:certificatesigningrequests:nodeclient', rules: [rule('create', 'certificates.k8s.io', 'certificatesigningrequests/nodeclient')] },
  { name: 'system:certificates.k8s.io:certificatesigningrequests:selfnodeclient', rules: [rule('create', 'certificates.k8s.io', 'certificatesigningrequests/selfnodeclient')] },
  { name: 'system:service-account-issuer-discovery', rules: [urls('get', '/.well-known/openid-configuration /openid/v1/jwks')] },
];

/** [binding (and role) name, subjects]: `U:` user, `G:` group, `SA:ns/name` service account. */
const CLUSTER_ROLE_BINDINGS: Array<[string, string]> = [
  ['cluster-admin', 'G:system:masters'],
  ['system:monitoring', 'G:system:monitoring'],
  ['system:discovery', 'G:system:authenticated'],
  ['system:basic-user', 'G:system:authenticated'],
  ['system:public-info-viewer', 'G:system:authenticated G:system:unauthenticated'],
  ['system:node-proxier', 'U:system:kube-proxy'],
  ['system:kube-controller-manager', 'U:system:kube-controller-manager'],
  ['system:kube-dns', 'SA:kube-system/kube-dns'],
  ['system:kube-scheduler', 'U:system:kube-scheduler'],
  ['system:volume-scheduler', 'U:system:kube-scheduler'],
  // As upstream: the binding exists with no subjects (the Node authorizer grants nodes their
  // rights); it is kept so a cluster that once bound system:nodes here can be reconciled.
  ['system:node', ''],
  ['system:service-account-issuer-discovery', 'G:system:serviceaccounts'],
];

// --- controller roles (`system:controller:<name>`, bound to kube-system/<name>) ------------

const CONTROLLER_ROLES: Array<[string, RawRule[]]> = [
  ['attachdetach-controller', [
    rule('list watch', 'core', 'persistentvolumes persistentvolumeclaims'),
    rule(READ, 'core', 'nodes'),
    rule('patch update', 'core', 'nodes/status'),
    rule('list watch', 'core', 'pods'),
    EVENTS,
    rule('create delete get list watch', 'storage.k8s.io', 'volumeattachments'),
    rule(READ, 'storage.k8s.io', 'csidrivers'),
    rule(READ, 'storage.k8s.io', 'csinodes'),
  ]],
  ['clusterrole-aggregation-controller', [rule(`escalate get list watch update patch`, 'rbac.authorization.k8s.io', 'clusterroles')]],
  ['cronjob-controller', [
    rule('get list watch update', 'batch', 'cronjobs'),
    rule('get list watch create update delete patch', 'batch', 'jobs'),
    rule('update', 'batch', 'cronjobs/status'),
    rule('update', 'batch', 'cronjobs/finalizers'),
    rule('list watch delete', 'core', 'pods'),
    EVENTS,
  ]],
  ['daemon-set-controller', [
    rule(READ, 'apps extensions', 'daemonsets'),
    rule('update', 'apps extensions', 'daemonsets/status'),
    rule('update', 'apps extensions', 'daemonsets/finalizers'),
    rule('list watch', 'core', 'nodes'),
    rule('list watch create delete patch', 'core', 'pods'),
    rule('create', 'core', 'pods/binding'),
    rule('get list watch create delete update patch', 'apps', 'controllerrevisions'),
    EVENTS,
  ]],
  ['deployment-controller', [
    rule('get list watch update', 'apps extensions', 'deployments'),
    rule('update', 'apps extensions', 'deployments/status'),
    rule('update', 'apps extensions', 'deployments/finalizers'),
    rule('get list watch create update patch delete', 'apps extensions', 'replicasets'),
    rule('get list watch update', 'core', 'pods'),
    EVENTS,
  ]],
  ['disruption-controller', [
    rule(READ, 'apps extensions', 'deployments'),
    rule(READ, 'apps extensions', 'replicasets'),
    rule(READ, 'core', 'replicationcontrollers'),
    rule(READ, 'policy', 'poddisruptionbudgets'),
    rule(READ, 'apps', 'statefulsets'),
    rule('update', 'policy', 'poddisruptionbudgets/status'),
    rule('patch update', 'core', 'pods/status'),
    rule('get', '*', '*/scale'),
    EVENTS,
  ]],
  ['endpoint-controller', [
    rule(READ, 'core', 'services pods'),
    rule('get list create update delete watch', 'core', 'endpoints'),
    rule('create', 'core', 'endpoints/restricted'),
    EVENTS,
  ]],
  ['endpointslice-controller', [
    rule(READ, 'core', 'services pods nodes'),
    rule('update', 'core', 'services/finalizers'),
    rule('create update delete get list watch', 'discovery.k8s.io', 'endpointslices'),
    EVENTS,
  ]],
  ['endpointslicemirroring-controller', [
    rule(READ, 'core', 'services endpoints'),
    rule('update', 'core', 'services/finalizers'),
    rule('update', 'core', 'endpoints/finalizers'),
    rule('create update delete get list watch', 'discovery.k8s.io', 'endpointslices'),
    EVENTS,
  ]],
  ['expand-controller', [
    rule('get list watch update patch', 'core', 'persistentvolumes'),
    rule('update patch', 'core', 'persistentvolumeclaims/status'),
    rule(READ, 'core', 'persistentvolumeclaims'),
    EVENTS,
  ]],
  ['ephemeral-volume-controller', [
    rule(READ, 'core', 'pods'),
    rule('update', 'core', 'pods/finalizers'),
    rule('get list watch create', 'core', 'persistentvolumeclaims'),
    EVENTS,
  ]],
  ['generic-garbage-collector', [rule('get list watch patch update delete', '*', '*'), EVENTS]],
  ['horizontal-pod-autoscaler', [
    rule(READ, 'autoscaling', 'horizontalpodautoscalers'),
    rule('update', 'autoscaling', 'horizontalpodautoscalers/status'),
    rule('get update', '*', '*/scale'),
    rule('list watch', 'core', 'pods'),
    rule('list watch', 'metrics.k8s.io', 'pods'),
    rule(READ, 'custom.metrics.k8s.io', '*'),
    rule(READ, 'external.metrics.k8s.io', '*'),
    EVENTS,
  ]],
  ['job-controller', [
    rule('get list watch update patch', 'batch', 'jobs'),
    rule('update', 'batch', 'jobs/status'),
    rule('update', 'batch', 'jobs/finalizers'),
    rule('list watch create delete patch', 'core', 'pods'),
    EVENTS,
  ]],
  ['namespace-controller', [
    rule('get list watch delete', 'core', 'namespaces'),
    rule('update', 'core', 'namespaces/finalize namespaces/status'),
    rule('get list watch delete deletecollection', '*', '*'),
  ]],
  ['node-controller', [
    rule('get list update delete patch watch', 'core', 'nodes'),
    rule('patch update', 'core', 'nodes/status'),
    rule('patch update', 'core', 'pods/status'),
    rule('list get delete watch', 'core', 'pods'),
    EVENTS,
  ]],
  ['persistent-volume-binder', [
    rule('get list watch update create delete', 'core', 'persistentvolumes'),
    rule('update', 'core', 'persistentvolumes/status'),
    rule('get list watch update', 'core', 'persistentvolumeclaims'),
    rule('update', 'core', 'persistentvolumeclaims/status'),
    rule('get list watch create delete', 'core', 'pods'),
    rule(READ, 'storage.k8s.io', 'storageclasses'),
    rule('list watch', 'core', 'nodes'),
    EVENTS,
    rule('watch', 'core', 'events'),
  ]],
  ['pod-garbage-collector', [rule('list watch delete', 'core', 'pods'), rule(READ, 'core', 'nodes'), rule('patch', 'core', 'pods/status')]],
  ['replicaset-controller', [
    rule('get list watch update', 'apps extensions', 'replicasets'),
    rule('update', 'apps extensions', 'replicasets/status'),
    rule('update', 'apps extensions', 'replicasets/finalizers'),
    rule('list watch patch create delete', 'core', 'pods'),
    EVENTS,
  ]],
  ['replication-controller', [
    rule('get list watch update', 'core', 'replicationcontrollers'),
    rule('update', 'core', 'replicationcontrollers/status'),
    rule('update', 'core', 'replicationcontrollers/finalizers'),
    rule('list watch patch create delete', 'core', 'pods'),
    EVENTS,
  ]],
  ['resourcequota-controller', [rule('list watch', '*', '*'), rule('update', 'core', 'resourcequotas/status'), EVENTS]],
  ['route-controller', [rule('list watch', 'core', 'nodes'), rule('patch', 'core', 'nodes/status'), EVENTS]],
  ['service-account-controller', [rule('create', 'core', 'serviceaccounts'), EVENTS]],
  ['service-controller', [rule(READ, 'core', 'services'), rule('patch update', 'core', 'services/status'), rule('list watch', 'core', 'nodes'), EVENTS]],
  ['statefulset-controller', [
    rule('list watch', 'core', 'pods'),
    rule(READ, 'apps', 'statefulsets'),
    rule('update', 'apps', 'statefulsets/status'),
    rule('update', 'apps', 'statefulsets/finalizers'),
    rule('get create delete update patch', 'core', 'pods'),
    rule('get list watch create delete update patch', 'apps', 'controllerrevisions'),
    rule('get list watch create', 'core', 'persistentvolumeclaims'),
    rule('update delete', 'core', 'persistentvolumeclaims'),
    rule('update', 'core', 'pods/finalizers'),
    EVENTS,
  ]],
  ['ttl-controller', [rule('update patch list watch', 'core', 'nodes'), EVENTS]],
  ['certificate-controller', [
    rule('get list watch delete', 'certificates.k8s.io', 'certificatesigningrequests'),
    rule('update', 'certificates.k8s.io', 'certificatesigningrequests/status certificatesigningrequests/approval'),
    rule('approve', 'certificates.k8s.io', 'signers', 'kubernetes.io/kube-apiserver-client-kubelet'),
    rule('sign', 'certificates.k8s.io', 'signers', 'kubernetes.io/legacy-unknown kubernetes.io/kube-apiserver-client kubernetes.io/kube-apiserver-client-kubelet kubernetes.io/kubelet-serving'),
    rule('create', 'authorization.k8s.io', 'subjectaccessreviews'),
    EVENTS,
  ]],
  ['pvc-protection-controller', [rule('get list watch update', 'core', 'persistentvolumeclaims'), rule('update', 'core', 'persistentvolumeclaims/status'), rule(READ, 'core', 'pods'), EVENTS]],
  ['pv-protection-controller', [rule('get list watch update', 'core', 'persistentvolumes'), EVENTS]],
  ['ttl-after-finished-controller', [rule('get list watch delete', 'batch', 'jobs'), EVENTS]],
  ['root-ca-cert-publisher', [rule('create update', 'core', 'configmaps'), EVENTS]],
  ['validatingadmissionpolicy-status-controller', [
    rule(READ, 'admissionregistration.k8s.io', 'validatingadmissionpolicies'),
    rule('get patch update', 'admissionregistration.k8s.io', 'validatingadmissionpolicies/status'),
    EVENTS,
  ]],
  ['legacy-service-account-token-cleaner', [
    rule('get', 'core', 'configmaps', 'kube-apiserver-legacy-service-account-token-tracking'),
    rule('delete patch', 'core', 'secrets'),
  ]],
];

// --- namespaced roles and bindings ----------------------------------------------------------

const LEADER_LOCKING = [rule('create get list update watch', 'coordination.k8s.io', 'leases'), rule('create get list update watch', 'coordination.k8s.io', 'leasecandidates')];

/** [namespace, role name, rules]. */
const ROLES: Array<[string, string, RawRule[]]> = [
  ['kube-system', 'extension-apiserver-authentication-reader', [rule(READ, 'core', 'configmaps', 'extension-apiserver-authentication')]],
  ['kube-system', 'system::leader-locking-kube-controller-manager', LEADER_LOCKING],
  ['kube-system', 'system::leader-locking-kube-scheduler', LEADER_LOCKING],
  ['kube-system', 'system:controller:bootstrap-signer', [rule(READ, 'core', 'secrets')]],
  ['kube-system', 'system:controller:cloud-provider', [rule('create get list watch', 'core', 'configmaps')]],
  ['kube-system', 'system:controller:token-cleaner', [rule('delete get list watch', 'core', 'secrets'), EVENTS]],
  ['kube-public', 'system:controller:bootstrap-signer', [rule(READ, 'core', 'configmaps'), rule('update', 'core', 'configmaps', 'cluster-info'), EVENTS]],
];

/** [namespace, binding name, role name, subjects]. */
const ROLE_BINDINGS: Array<[string, string, string, string]> = [
  ['kube-system', 'system::extension-apiserver-authentication-reader', 'extension-apiserver-authentication-reader', 'U:system:kube-controller-manager U:system:kube-scheduler'],
  ['kube-system', 'system::leader-locking-kube-controller-manager', 'system::leader-locking-kube-controller-manager', 'U:system:kube-controller-manager SA:kube-system/kube-controller-manager SA:kube-system/leader-election-controller'],
  ['kube-system', 'system::leader-locking-kube-scheduler', 'system::leader-locking-kube-scheduler', 'U:system:kube-scheduler SA:kube-system/kube-scheduler'],
  ['kube-system', 'system:controller:bootstrap-signer', 'system:controller:bootstrap-signer', 'SA:kube-system/bootstrap-signer'],
  ['kube-system', 'system:controller:cloud-provider', 'system:controller:cloud-provider', 'SA:kube-system/cloud-provider'],
  ['kube-system', 'system:controller:token-cleaner', 'system:controller:token-cleaner', 'SA:kube-system/token-cleaner'],
  ['kube-public', 'system:controller:bootstrap-signer', 'system:controller:bootstrap-signer', 'SA:kube-system/bootstrap-signer'],
];

// --- building the objects -------------------------------------------------------------------

function toRule(raw: RawRule, naming: Naming): PolicyRule {
  if (raw.urls !== undefined) return { verbs: words(raw.verbs), nonResourceURLs: words(raw.urls) };
  const out: PolicyRule = {
    verbs: words(raw.verbs),
    apiGroups: words(raw.groups ?? '').map((g) => (g === 'core' ? '' : g === '*' ? '*' : naming.group(g))),
    resources: words(raw.resources ?? ''),
  };
  if (raw.names) out.resourceNames = words(raw.names);
  return out;
}

function toSubjects(spec: string, rbacGroup: string): Subject[] {
  return words(spec).map((s) => {
    if (s.startsWith('U:')) return { kind: 'User', apiGroup: rbacGroup, name: s.slice(2) };
    if (s.startsWith('G:')) return { kind: 'Group', apiGroup: rbacGroup, name: s.slice(2) };
    const [namespace, name] = s.slice(3).split('/') as [string, string];
    return { kind: 'ServiceAccount', name, namespace };
  });
}

/** The policy built once per naming mode: a start asks for it several times (RBAC, Node, reconcile). */
const built = new Map<string, BootstrapPolicy>();

/** The bootstrap policy in this naming's group names: a copy of its own for each caller to change. */
export function bootstrapPolicy(naming: Naming): BootstrapPolicy {
  let policy = built.get(naming.mode);
  if (!policy) built.set(naming.mode, (policy = buildBootstrapPolicy(naming)));
  return JSON.parse(JSON.stringify(policy)) as BootstrapPolicy;
}

function buildBootstrapPolicy(naming: Naming): BootstrapPolicy {
  const keys = policyKeys(naming);
  const apiVersion = `${keys.rbacGroup}/v1`;
  const meta = (name: string, namespace?: string, extraLabels: Record<string, string> = {}): ObjectMeta => ({
    name,
    ...(namespace ? { namespace } : {}),
    labels: { [keys.bootstrapping]: 'rbac-defaults', ...extraLabels },
    annotations: { [keys.autoupdate]: 'true' },
  });
  const clusterRole = (raw: RawRole): RoleObject => {
    const labels = Object.fromEntries((raw.aggregateTo ?? []).map((t) => [keys.aggregateTo(t), 'true']));
    const role: RoleObject = { apiVersion, kind: 'ClusterRole', metadata: meta(raw.name, undefined, labels), rules: raw.rules.map((r) => toRule(r, naming)) };
    if (raw.aggregates) role.aggregationRule = { clusterRoleSelectors: [{ matchLabels: { [keys.aggregateTo(raw.aggregates)]: 'true' } }] };
    return role;
  };
  const clusterBinding = (name: string, subjects: string): BindingObject => ({
    apiVersion,
    kind: 'ClusterRoleBinding',
    metadata: meta(name),
    roleRef: { apiGroup: keys.rbacGroup, kind: 'ClusterRole', name },
    subjects: toSubjects(subjects, keys.rbacGroup),
  });
  const controllers = CONTROLLER_ROLES.map(([name, rules]) => clusterRole({ name: `system:controller:${name}`, rules }));
  return {
    clusterRoles: [...CLUSTER_ROLES.map(clusterRole), ...controllers],
    clusterRoleBindings: [
      ...CLUSTER_ROLE_BINDINGS.map(([name, subjects]) => clusterBinding(name, subjects)),
      ...CONTROLLER_ROLES.map(([name]) => clusterBinding(`system:controller:${name}`, `SA:kube-system/${name}`)),
    ],
    roles: ROLES.map(([namespace, name, rules]) => ({ apiVersion, kind: 'Role', metadata: meta(name, namespace), rules: rules.map((r) => toRule(r, naming)) })),
    roleBindings: ROLE_BINDINGS.map(([namespace, name, role, subjects]) => ({
      apiVersion,
      kind: 'RoleBinding',
      metadata: meta(name, namespace),
      roleRef: { apiGroup: keys.rbacGroup, kind: 'Role', name: role },
      subjects: toSubjects(subjects, keys.rbacGroup),
    })),
  };
}
