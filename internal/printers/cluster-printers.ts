// internal/printers/cluster-printers owns the tables of the remaining groups upstream prints:
// RBAC bindings, certificates, coordination, networking, discovery, storage, scheduling, node,
// admission registration, flow control, internal apiserver, dynamic resource allocation,
// storage migration and API registration. Roles, cluster roles and custom resource definitions
// have no printer upstream: they get the default Name / Created At table.
// Imports: printer-kit, human-duration, selectors.

import { formatLabelSelectorMeta } from '../selectors/label-selector.js';
import { humanDuration } from './human-duration.js';
import {
  age,
  ageCol,
  at,
  byString,
  col,
  doc,
  isDeleting,
  isObj,
  type KindPrinter,
  list,
  listWithMore,
  metadataOf,
  nameCol,
  nameOf,
  num,
  obj,
  type PrintContext,
  quantityText,
  str,
  strMap,
} from './printer-kit.js';

/** Kinds whose table is just the name and the age. */
const nameAndAge = (): KindPrinter => ({
  columns: [nameCol(), ageCol()],
  row: (o, ctx) => ({ cells: [nameOf(o), age(o, ctx)] }),
});

// --- rbac ---------------------------------------------------------------------------------------

/** Upstream's SubjectsStrings: users, groups, `namespace/name` service accounts. */
function subjectColumns(subjects: unknown): [string, string, string] {
  const users: string[] = [];
  const groups: string[] = [];
  const sas: string[] = [];
  for (const s of list(subjects).map(obj)) {
    if (s.kind === 'ServiceAccount') sas.push(`${str(s.namespace)}/${str(s.name)}`);
    else if (s.kind === 'User') users.push(str(s.name));
    else if (s.kind === 'Group') groups.push(str(s.name));
  }
  return [users.join(', '), groups.join(', '), sas.join(', ')];
}

const bindingPrinter = (what: 'roleBinding' | 'clusterRoleBinding', schema: string): KindPrinter => ({
  columns: [
    nameCol(),
    col('Role', 'string', doc(schema, 'roleRef')),
    ageCol(),
    col('Users', 'string', `Users in the ${what}`, { priority: 1 }),
    col('Groups', 'string', `Groups in the ${what}`, { priority: 1 }),
    col('ServiceAccounts', 'string', `ServiceAccounts in the ${what}`, { priority: 1 }),
  ],
  row(b, ctx) {
    const ref = obj(at(b, 'roleRef'));
    return { cells: [nameOf(b), `${str(ref.kind)}/${str(ref.name)}`, age(b, ctx), ...subjectColumns(at(b, 'subjects'))] };
  },
});

// --- certificates and coordination ----------------------------------------------------------------

export function csrStatusText(csr: unknown): string {
  const types = new Set(list(at(csr, 'status', 'conditions')).map((c) => str(obj(c).type)));
  // Precedence: Denied over Approved over Pending; Failed and Issued are appended.
  let status = types.has('Denied') ? 'Denied' : types.has('Approved') ? 'Approved' : 'Pending';
  if (types.has('Failed')) status += ',Failed';
  if (str(at(csr, 'status', 'certificate')).length > 0) status += ',Issued';
  return status;
}

const csrPrinter: KindPrinter = {
  columns: [
    nameCol(),
    ageCol(),
    col('SignerName', 'string', doc('certificates.v1.CertificateSigningRequestSpec', 'signerName')),
    col('Requestor', 'string', doc('certificates.v1.CertificateSigningRequestSpec', 'request')),
    col('RequestedDuration', 'string', doc('certificates.v1.CertificateSigningRequestSpec', 'expirationSeconds')),
    col('Condition', 'string', doc('certificates.v1.CertificateSigningRequestStatus', 'conditions')),
  ],
  row(csr, ctx) {
    const spec = obj(at(csr, 'spec'));
    const expiry = spec.expirationSeconds;
    return {
      cells: [
        nameOf(csr),
        age(csr, ctx),
        str(spec.signerName) || '<none>',
        str(spec.username),
        typeof expiry === 'number' ? humanDuration(expiry * 1000) : '<none>',
        csrStatusText(csr),
      ],
    };
  },
};

const clusterTrustBundlePrinter: KindPrinter = {
  columns: [nameCol(), col('SignerName', 'string', doc('certificates.v1beta1.ClusterTrustBundleSpec', 'signerName'))],
  row: (ctb) => ({ cells: [nameOf(ctb), str(at(ctb, 'spec', 'signerName')) || '<none>'] }),
};

const leasePrinter: KindPrinter = {
  columns: [nameCol(), col('Holder', 'string', doc('coordination.v1.LeaseSpec', 'holderIdentity')), ageCol()],
  row: (l, ctx) => ({ cells: [nameOf(l), str(at(l, 'spec', 'holderIdentity')), age(l, ctx)] }),
};

const leaseCandidatePrinter: KindPrinter = {
  columns: [
    nameCol(),
    col('LeaseName', 'string', doc('coordination.v1beta1.LeaseCandidateSpec', 'leaseName')),
    col('BinaryVersion', 'string', doc('coordination.v1beta1.LeaseCandidateSpec', 'binaryVersion')),
    col('EmulationVersion', 'string', doc('coordination.v1beta1.LeaseCandidateSpec', 'emulationVersion')),
    ageCol(),
  ],
  row(lc, ctx) {
    const spec = obj(at(lc, 'spec'));
    return { cells: [nameOf(lc), str(spec.leaseName), str(spec.binaryVersion), str(spec.emulationVersion), age(lc, ctx)] };
  },
};

// --- networking and discovery ------------------------------------------------------------------

/** Up to three rule hosts, `*` when no rule names one. */
function ingressHosts(rules: unknown): string {
  const rs = list(rules).map(obj);
  const max = 3;
  const hosts: string[] = [];
  let more = false;
  for (const r of rs) {
    if (hosts.length === max) more = true;
    if (!more && str(r.host) !== '') hosts.push(str(r.host));
  }
  if (hosts.length === 0) return '*';
  return more ? `${hosts.join(',')} + ${rs.length - max} more...` : hosts.join(',');
}

function ingressAddress(status: unknown): string {
  const points = new Set<string>();
  for (const i of list(at(status, 'ingress')).map(obj)) {
    if (str(i.ip)) points.add(str(i.ip));
    else if (str(i.hostname)) points.add(str(i.hostname));
  }
  return [...points].sort(byString).join(',');
}

const ingressPrinter: KindPrinter = {
  columns: [
    nameCol(),
    col('Class', 'string', 'The name of the IngressClass resource that should be used for additional configuration'),
    col('Hosts', 'string', 'Hosts that incoming requests are matched against before the ingress rule'),
    col('Address', 'string', 'Address is a list containing ingress points for the load-balancer'),
    col('Ports', 'string', 'Ports of TLS configurations that open'),
    ageCol(),
  ],
  row(ing, ctx) {
    const spec = obj(at(ing, 'spec'));
    return {
      cells: [
        nameOf(ing),
        typeof spec.ingressClassName === 'string' ? spec.ingressClassName : '<none>',
        ingressHosts(spec.rules),
        ingressAddress(at(ing, 'status', 'loadBalancer')),
        list(spec.tls).length > 0 ? '80, 443' : '80',
        age(ing, ctx),
      ],
    };
  },
};

const ingressClassPrinter: KindPrinter = {
  columns: [
    nameCol(),
    col('Controller', 'string', 'Controller that is responsible for handling this class'),
    col('Parameters', 'string', 'A reference to a resource with additional parameters'),
    ageCol(),
  ],
  row(ic, ctx) {
    const p = at(ic, 'spec', 'parameters');
    let parameters = '<none>';
    if (isObj(p)) {
      parameters = str(p.kind);
      if (typeof p.apiGroup === 'string') parameters += `.${p.apiGroup}`;
      parameters += `/${str(p.name)}`;
    }
    return { cells: [nameOf(ic), str(at(ic, 'spec', 'controller')), parameters, age(ic, ctx)] };
  },
};

const networkPolicyPrinter: KindPrinter = {
  columns: [nameCol(), col('Pod-Selector', 'string', doc('networking.v1.NetworkPolicySpec', 'podSelector')), ageCol()],
  // podSelector is not a pointer upstream: absent means {} (all pods), which prints <none>.
  row: (np, ctx) => ({ cells: [nameOf(np), formatLabelSelectorMeta(at(np, 'spec', 'podSelector') ?? {}), age(np, ctx)] }),
};

const serviceCIDRPrinter: KindPrinter = {
  columns: [nameCol(), col('CIDRs', 'string', doc('networking.v1.ServiceCIDRSpec', 'cidrs')), ageCol()],
  row: (s, ctx) => ({ cells: [nameOf(s), list(at(s, 'spec', 'cidrs')).map((c) => str(c)).join(','), age(s, ctx)] }),
};

const ipAddressPrinter: KindPrinter = {
  columns: [nameCol(), col('ParentRef', 'string', doc('networking.v1.IPAddressSpec', 'parentRef')), ageCol()],
  row(ip, ctx) {
    const ref = at(ip, 'spec', 'parentRef');
    let parent = '<none>';
    if (isObj(ref)) {
      const gr = str(ref.group) ? `${str(ref.resource)}.${str(ref.group)}` : str(ref.resource);
      parent = gr.toLowerCase();
      if (str(ref.namespace)) parent += `/${str(ref.namespace)}`;
      parent += `/${str(ref.name)}`;
    }
    return { cells: [nameOf(ip), parent, age(ip, ctx)] };
  },
};

const endpointSlicePrinter: KindPrinter = {
  columns: [
    nameCol(),
    col('AddressType', 'string', doc('discovery.v1.EndpointSlice', 'addressType')),
    col('Ports', 'string', doc('discovery.v1.EndpointSlice', 'ports')),
    col('Endpoints', 'string', doc('discovery.v1.EndpointSlice', 'endpoints')),
    ageCol(),
  ],
  row(es, ctx) {
    const ports = list(at(es, 'ports'))
      .map(obj)
      .map((p) => (typeof p.port === 'number' ? String(p.port) : typeof p.name === 'string' ? p.name : '*'));
    const addresses = list(at(es, 'endpoints')).flatMap((e) => list(obj(e).addresses).map((a) => str(a)));
    return { cells: [nameOf(es), str(at(es, 'addressType')), listWithMore(ports), listWithMore(addresses), age(es, ctx)] };
  },
};

// --- storage ------------------------------------------------------------------------------------

function isDefaultStorageClass(sc: unknown, ctx: PrintContext): boolean {
  const a = strMap(metadataOf(sc).annotations);
  return (
    a[`${ctx.naming.labelPrefix('storageclass')}is-default-class`] === 'true' ||
    a[`${ctx.naming.labelPrefix('storageclass.beta')}is-default-class`] === 'true'
  );
}

const storageClassPrinter: KindPrinter = {
  columns: [
    nameCol(),
    col('Provisioner', 'string', doc('storage.v1.StorageClass', 'provisioner')),
    col('ReclaimPolicy', 'string', doc('storage.v1.StorageClass', 'reclaimPolicy')),
    col('VolumeBindingMode', 'string', doc('storage.v1.StorageClass', 'volumeBindingMode')),
    col('AllowVolumeExpansion', 'string', doc('storage.v1.StorageClass', 'allowVolumeExpansion')),
    ageCol(),
  ],
  row(sc, ctx) {
    const o = obj(sc);
    return {
      cells: [
        isDefaultStorageClass(sc, ctx) ? `${nameOf(sc)} (default)` : nameOf(sc),
        str(o.provisioner),
        str(o.reclaimPolicy, 'Delete'),
        str(o.volumeBindingMode, 'Immediate'),
        o.allowVolumeExpansion === true,
        age(sc, ctx),
      ],
    };
  },
};

const volumeAttributesClassPrinter: KindPrinter = {
  columns: [nameCol(), col('DriverName', 'string', doc('storage.v1.VolumeAttributesClass', 'driverName')), ageCol()],
  row: (v, ctx) => ({ cells: [nameOf(v), str(at(v, 'driverName')), age(v, ctx)] }),
};

const volumeAttachmentPrinter: KindPrinter = {
  columns: [
    nameCol(),
    col('Attacher', 'string', doc('storage.v1.VolumeAttachmentSpec', 'attacher'), { format: 'name' }),
    col('PV', 'string', doc('storage.v1.VolumeAttachmentSource', 'persistentVolumeName')),
    col('Node', 'string', doc('storage.v1.VolumeAttachmentSpec', 'nodeName')),
    col('Attached', 'boolean', doc('storage.v1.VolumeAttachmentStatus', 'attached')),
    ageCol(),
  ],
  row(va, ctx) {
    const spec = obj(at(va, 'spec'));
    return {
      cells: [
        nameOf(va),
        str(spec.attacher),
        str(at(spec, 'source', 'persistentVolumeName')),
        str(spec.nodeName),
        at(va, 'status', 'attached') === true,
        age(va, ctx),
      ],
    };
  },
};

const csiNodePrinter: KindPrinter = {
  columns: [nameCol(), col('Drivers', 'integer', 'Drivers indicates the number of CSI drivers registered on the node'), ageCol()],
  row: (n, ctx) => ({ cells: [nameOf(n), list(at(n, 'spec', 'drivers')).length, age(n, ctx)] }),
};

const csiDriverPrinter: KindPrinter = {
  columns: [
    nameCol(),
    col('AttachRequired', 'boolean', doc('storage.v1.CSIDriverSpec', 'attachRequired')),
    col('PodInfoOnMount', 'boolean', doc('storage.v1.CSIDriverSpec', 'podInfoOnMount')),
    col('StorageCapacity', 'boolean', doc('storage.v1.CSIDriverSpec', 'storageCapacity')),
    col('TokenRequests', 'string', doc('storage.v1.CSIDriverSpec', 'tokenRequests')),
    col('RequiresRepublish', 'boolean', doc('storage.v1.CSIDriverSpec', 'requiresRepublish')),
    col('Modes', 'string', doc('storage.v1.CSIDriverSpec', 'volumeLifecycleModes')),
    ageCol(),
  ],
  row(d, ctx) {
    const spec = obj(at(d, 'spec'));
    const tokens = Array.isArray(spec.tokenRequests)
      ? spec.tokenRequests.map((t) => str(obj(t).audience)).join(',')
      : '<unset>';
    return {
      cells: [
        nameOf(d),
        spec.attachRequired !== false,
        spec.podInfoOnMount === true,
        spec.storageCapacity === true,
        tokens,
        spec.requiresRepublish === true,
        list(spec.volumeLifecycleModes).map((m) => str(m)).join(',') || '<none>',
        age(d, ctx),
      ],
    };
  },
};

const csiStorageCapacityPrinter: KindPrinter = {
  columns: [
    nameCol(),
    col('StorageClassName', 'string', doc('storage.v1.CSIStorageCapacity', 'storageClassName')),
    col('Capacity', 'string', doc('storage.v1.CSIStorageCapacity', 'capacity')),
  ],
  row: (c) => ({
    cells: [nameOf(c), str(at(c, 'storageClassName')), at(c, 'capacity') === undefined ? '<unset>' : quantityText(at(c, 'capacity'))],
  }),
};

// --- scheduling and node -----------------------------------------------------------------------

const priorityClassPrinter: KindPrinter = {
  columns: [
    nameCol(),
    col('Value', 'integer', doc('scheduling.v1.PriorityClass', 'value')),
    col('Global-Default', 'boolean', doc('scheduling.v1.PriorityClass', 'globalDefault')),
    ageCol(),
    col('PreemptionPolicy', 'string', doc('scheduling.v1.PriorityClass', 'preemptionPolicy')),
  ],
  row: (pc, ctx) => ({
    cells: [
      nameOf(pc),
      num(at(pc, 'value')),
      at(pc, 'globalDefault') === true,
      age(pc, ctx),
      // Defaulted on create.
      str(at(pc, 'preemptionPolicy'), 'PreemptLowerPriority'),
    ],
  }),
};

const runtimeClassPrinter: KindPrinter = {
  columns: [nameCol(), col('Handler', 'string', doc('node.v1.RuntimeClass', 'handler')), ageCol()],
  row: (rc, ctx) => ({ cells: [nameOf(rc), str(at(rc, 'handler')), age(rc, ctx)] }),
};

// --- admission registration ------------------------------------------------------------------

const webhookConfigPrinter: KindPrinter = {
  columns: [nameCol(), col('Webhooks', 'integer', 'Webhooks indicates the number of webhooks registered in this configuration'), ageCol()],
  row: (w, ctx) => ({ cells: [nameOf(w), list(at(w, 'webhooks')).length, age(w, ctx)] }),
};

const policyPrinter = (rulesColumn: 'Validations' | 'Mutations', description: string): KindPrinter => ({
  columns: [
    nameCol(),
    col(rulesColumn, 'integer', description),
    col('ParamKind', 'string', 'ParamKind specifies the kind of resources used to parameterize this policy'),
    ageCol(),
  ],
  row(p, ctx) {
    const spec = obj(at(p, 'spec'));
    const pk = spec.paramKind;
    const paramKind = isObj(pk) ? `${str(pk.apiVersion)}/${str(pk.kind)}` : '<unset>';
    const rules = list(rulesColumn === 'Validations' ? spec.validations : spec.mutations).length;
    return { cells: [nameOf(p), rules, paramKind, age(p, ctx)] };
  },
});

const policyBindingPrinter: KindPrinter = {
  columns: [
    nameCol(),
    col('PolicyName', 'string', 'PolicyName indicates the policy definition which the policy binding binded to'),
    col('ParamRef', 'string', 'ParamRef indicates the param resource which sets the configration param'),
    ageCol(),
  ],
  row(b, ctx) {
    const pr = at(b, 'spec', 'paramRef');
    let param = '<unset>';
    if (isObj(pr)) {
      if (str(pr.name)) param = str(pr.namespace) ? `${str(pr.namespace)}/${str(pr.name)}` : `*/${str(pr.name)}`;
      // Upstream prints the selector struct's Go form here; the selector's own syntax reads better.
      else if (isObj(pr.selector)) param = formatLabelSelectorMeta(pr.selector);
    }
    return { cells: [nameOf(b), str(at(b, 'spec', 'policyName')), param, age(b, ctx)] };
  },
};

// --- flow control ------------------------------------------------------------------------------

const flowSchemaPrinter: KindPrinter = {
  columns: [
    nameCol(),
    col('PriorityLevel', 'string', doc('flowcontrol.v1.PriorityLevelConfigurationReference', 'name')),
    col('MatchingPrecedence', 'string', doc('flowcontrol.v1.FlowSchemaSpec', 'matchingPrecedence')),
    col('DistinguisherMethod', 'string', doc('flowcontrol.v1.FlowSchemaSpec', 'distinguisherMethod')),
    ageCol(),
    col('MissingPL', 'string', 'references a broken or non-existent PriorityLevelConfiguration'),
  ],
  row(fs, ctx) {
    const spec = obj(at(fs, 'spec'));
    const dm = spec.distinguisherMethod;
    const dangling = list(at(fs, 'status', 'conditions'))
      .map(obj)
      .find((c) => c.type === 'Dangling');
    return {
      cells: [
        nameOf(fs),
        str(at(spec, 'priorityLevelConfiguration', 'name')),
        num(spec.matchingPrecedence),
        isObj(dm) ? str(dm.type) : '<none>',
        age(fs, ctx),
        dangling ? str(dangling.status) : '?',
      ],
    };
  },
  // Lists print in matching order: precedence, then name.
  compare(a, b) {
    const pa = num(at(a, 'spec', 'matchingPrecedence'));
    const pb = num(at(b, 'spec', 'matchingPrecedence'));
    return pa !== pb ? pa - pb : byString(nameOf(a), nameOf(b));
  },
};

const priorityLevelPrinter: KindPrinter = {
  columns: [
    nameCol(),
    col('Type', 'string', doc('flowcontrol.v1.PriorityLevelConfigurationSpec', 'type')),
    col('NominalConcurrencyShares', 'string', doc('flowcontrol.v1.LimitedPriorityLevelConfiguration', 'nominalConcurrencyShares')),
    col('Queues', 'string', doc('flowcontrol.v1.QueuingConfiguration', 'queues')),
    col('HandSize', 'string', doc('flowcontrol.v1.QueuingConfiguration', 'handSize')),
    col('QueueLengthLimit', 'string', doc('flowcontrol.v1.QueuingConfiguration', 'queueLengthLimit')),
    ageCol(),
  ],
  row(pl, ctx) {
    const limited = at(pl, 'spec', 'limited');
    let cells: Array<string | number> = ['<none>', '<none>', '<none>', '<none>'];
    if (isObj(limited)) {
      // The v1 defaults, for objects stored without them.
      const ncs = num(limited.nominalConcurrencyShares, 30);
      const q = at(limited, 'limitResponse', 'queuing');
      cells = isObj(q)
        ? [ncs, num(q.queues, 64), num(q.handSize, 8), num(q.queueLengthLimit, 50)]
        : [ncs, '<none>', '<none>', '<none>'];
    }
    return { cells: [nameOf(pl), str(at(pl, 'spec', 'type')), ...cells, age(pl, ctx)] };
  },
};

const storageVersionPrinter: KindPrinter = {
  columns: [
    nameCol(),
    col('CommonEncodingVersion', 'string', doc('apiserverinternal.v1alpha1.StorageVersionStatus', 'commonEncodingVersion')),
    col('StorageVersions', 'string', doc('apiserverinternal.v1alpha1.StorageVersionStatus', 'storageVersions')),
    ageCol(),
  ],
  row(sv, ctx) {
    const status = obj(at(sv, 'status'));
    const versions = list(status.storageVersions)
      .map(obj)
      .map((v) => `${str(v.apiServerID)}=${str(v.encodingVersion)}`);
    return {
      cells: [
        nameOf(sv),
        typeof status.commonEncodingVersion === 'string' ? status.commonEncodingVersion : '<unset>',
        listWithMore(versions),
        age(sv, ctx),
      ],
    };
  },
};

// --- dynamic resource allocation, storage migration, API registration --------------------------------

export function resourceClaimState(claim: unknown): string {
  const states: string[] = [];
  const deleting = isDeleting(claim);
  if (deleting) states.push('deleted');
  const allocation = at(claim, 'status', 'allocation');
  if (allocation === undefined || allocation === null) {
    if (!deleting) states.push('pending');
  } else {
    states.push('allocated');
    if (list(at(claim, 'status', 'reservedFor')).length > 0) states.push('reserved');
  }
  return states.join(',');
}

const resourceClaimPrinter: KindPrinter = {
  columns: [nameCol(), col('State', 'string', 'A summary of the current state (allocated, pending, reserved, etc.).'), ageCol()],
  row: (c, ctx) => ({ cells: [nameOf(c), resourceClaimState(c), age(c, ctx)] }),
};

const resourceSlicePrinter: KindPrinter = {
  columns: [
    nameCol(),
    col('Node', 'string', doc('resource.v1.ResourceSliceSpec', 'nodeName')),
    col('Driver', 'string', doc('resource.v1.ResourceSliceSpec', 'driver')),
    col('Pool', 'string', doc('resource.v1.ResourcePool', 'name')),
    ageCol(),
  ],
  row(s, ctx) {
    const spec = obj(at(s, 'spec'));
    return { cells: [nameOf(s), str(spec.nodeName), str(spec.driver), str(at(spec, 'pool', 'name')), age(s, ctx)] };
  },
};

const storageVersionMigrationPrinter: KindPrinter = {
  columns: [
    col('Name', 'string', doc('io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta', 'name')),
    col('Resource', 'string', 'Fully qualified resource to migrate'),
  ],
  row(m) {
    const r = obj(at(m, 'spec', 'resource'));
    const parts = [str(r.resource), str(r.version), str(r.group)].filter((p) => p !== '');
    return { cells: [nameOf(m), parts.join('.')] };
  },
};

const apiServicePrinter: KindPrinter = {
  columns: [
    nameCol(),
    col('Service', 'string', 'The reference to the service that hosts this API endpoint.'),
    col('Available', 'string', 'Whether this service is available.'),
    ageCol(),
  ],
  row(a, ctx) {
    const svc = at(a, 'spec', 'service');
    const service = isObj(svc) ? `${str(svc.namespace)}/${str(svc.name)}` : 'Local';
    const cond = list(at(a, 'status', 'conditions'))
      .map(obj)
      .find((c) => c.type === 'Available');
    let available = 'Unknown';
    if (cond) {
      const status = str(cond.status);
      available = status !== 'True' && str(cond.reason) ? `${status} (${str(cond.reason)})` : status;
    }
    return { cells: [nameOf(a), service, available, age(a, ctx)] };
  },
};

/** Keyed by `<upstream group>/<resource>`. */
export const clusterPrinters: Readonly<Record<string, KindPrinter>> = {
  'rbac.authorization.k8s.io/rolebindings': bindingPrinter('roleBinding', 'rbac.v1.RoleBinding'),
  'rbac.authorization.k8s.io/clusterrolebindings': bindingPrinter('clusterRoleBinding', 'rbac.v1.ClusterRoleBinding'),
  'certificates.k8s.io/certificatesigningrequests': csrPrinter,
  'certificates.k8s.io/clustertrustbundles': clusterTrustBundlePrinter,
  'coordination.k8s.io/leases': leasePrinter,
  'coordination.k8s.io/leasecandidates': leaseCandidatePrinter,
  'networking.k8s.io/ingresses': ingressPrinter,
  'networking.k8s.io/ingressclasses': ingressClassPrinter,
  'networking.k8s.io/networkpolicies': networkPolicyPrinter,
  'networking.k8s.io/servicecidrs': serviceCIDRPrinter,
  'networking.k8s.io/ipaddresses': ipAddressPrinter,
  'discovery.k8s.io/endpointslices': endpointSlicePrinter,
  'storage.k8s.io/storageclasses': storageClassPrinter,
  'storage.k8s.io/volumeattributesclasses': volumeAttributesClassPrinter,
  'storage.k8s.io/volumeattachments': volumeAttachmentPrinter,
  'storage.k8s.io/csinodes': csiNodePrinter,
  'storage.k8s.io/csidrivers': csiDriverPrinter,
  'storage.k8s.io/csistoragecapacities': csiStorageCapacityPrinter,
  'scheduling.k8s.io/priorityclasses': priorityClassPrinter,
  'node.k8s.io/runtimeclasses': runtimeClassPrinter,
  'admissionregistration.k8s.io/mutatingwebhookconfigurations': webhookConfigPrinter,
  'admissionregistration.k8s.io/validatingwebhookconfigurations': webhookConfigPrinter,
  'admissionregistration.k8s.io/validatingadmissionpolicies': policyPrinter(
    'Validations',
    'Validations indicates the number of validation rules defined in this configuration',
  ),
  'admissionregistration.k8s.io/mutatingadmissionpolicies': policyPrinter(
    'Mutations',
    'Mutation indicates the number of mutations rules defined in this configuration',
  ),
  'admissionregistration.k8s.io/validatingadmissionpolicybindings': policyBindingPrinter,
  'admissionregistration.k8s.io/mutatingadmissionpolicybindings': policyBindingPrinter,
  'flowcontrol.apiserver.k8s.io/flowschemas': flowSchemaPrinter,
  'flowcontrol.apiserver.k8s.io/prioritylevelconfigurations': priorityLevelPrinter,
  'internal.apiserver.k8s.io/storageversions': storageVersionPrinter,
  'resource.k8s.io/deviceclasses': nameAndAge(),
  'resource.k8s.io/resourceclaims': resourceClaimPrinter,
  'resource.k8s.io/resourceclaimtemplates': nameAndAge(),
  'resource.k8s.io/resourceslices': resourceSlicePrinter,
  'storagemigration.k8s.io/storageversionmigrations': storageVersionMigrationPrinter,
  'apiregistration.k8s.io/apiservices': apiServicePrinter,
};

