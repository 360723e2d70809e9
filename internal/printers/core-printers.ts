// internal/printers/core-printers owns the tables of the core group's kinds other than pods and
// the workload controllers: nodes, namespaces, services, endpoints, config maps, secrets,
// service accounts, events (both the core and the events.k8s.io shape), persistent volumes and
// claims, component statuses, resource quotas and pod templates. Cells follow upstream's printers.
// Imports: printer-kit, human-duration, selectors (label formatting).

import { formatLabels } from '../selectors/label-selector.js';
import { parseTimestamp, timeSince } from './human-duration.js';
import {
  age,
  ageCol,
  at,
  byString,
  col,
  containerCells,
  doc,
  isDeleting,
  isObj,
  joinHostPort,
  type KindPrinter,
  list,
  metadataOf,
  nameCol,
  nameOf,
  num,
  obj,
  type Obj,
  type PrintContext,
  quantityText,
  str,
  strMap,
} from './printer-kit.js';


// --- nodes -----------------------------------------------------------------------------------

/** Roles from `node-role.<domain>/<role>` label keys and the legacy `<domain>/role` label value. */
export function nodeRoles(labels: Record<string, string>, ctx: PrintContext): string[] {
  const rolePrefix = ctx.naming.labelPrefix('node-role');
  const legacyRoleLabel = ctx.naming.label('role');
  const roles = new Set<string>();
  for (const [k, v] of Object.entries(labels)) {
    if (k.startsWith(rolePrefix)) {
      const role = k.slice(rolePrefix.length);
      if (role) roles.add(role);
    } else if (k === legacyRoleLabel && v !== '') roles.add(v);
  }
  return [...roles].sort(byString);
}

const nodeAddress = (node: unknown, type: string): string =>
  str(list(at(node, 'status', 'addresses')).map(obj).find((a) => a.type === type)?.address) || '<none>';

const nodePrinter: KindPrinter = {
  columns: [
    nameCol(),
    col('Status', 'string', 'The status of the node'),
    col('Roles', 'string', 'The roles of the node'),
    ageCol(),
    col('Version', 'string', doc('core.v1.NodeSystemInfo', 'kubeletVersion')),
    col('Internal-IP', 'string', doc('core.v1.NodeStatus', 'addresses'), { priority: 1 }),
    col('External-IP', 'string', doc('core.v1.NodeStatus', 'addresses'), { priority: 1 }),
    col('OS-Image', 'string', doc('core.v1.NodeSystemInfo', 'osImage'), { priority: 1 }),
    col('Kernel-Version', 'string', doc('core.v1.NodeSystemInfo', 'kernelVersion'), { priority: 1 }),
    col('Container-Runtime', 'string', doc('core.v1.NodeSystemInfo', 'containerRuntimeVersion'), { priority: 1 }),
  ],
  row(node, ctx) {
    // Only the Ready condition is shown; the last one listed wins, as in upstream's map.
    let ready: Obj | undefined;
    for (const c of list(at(node, 'status', 'conditions'))) if (isObj(c) && c.type === 'Ready') ready = c;
    const status: string[] = [];
    if (ready) status.push(ready.status === 'True' ? 'Ready' : 'NotReady');
    else status.push('Unknown');
    if (at(node, 'spec', 'unschedulable') === true) status.push('SchedulingDisabled');
    const roles = nodeRoles(strMap(metadataOf(node).labels), ctx).join(',') || '<none>';
    const info = obj(at(node, 'status', 'nodeInfo'));
    return {
      cells: [
        nameOf(node),
        status.join(','),
        roles,
        age(node, ctx),
        str(info.kubeletVersion),
        nodeAddress(node, 'InternalIP'),
        nodeAddress(node, 'ExternalIP'),
        str(info.osImage) || '<unknown>',
        str(info.kernelVersion) || '<unknown>',
        str(info.containerRuntimeVersion) || '<unknown>',
      ],
    };
  },
};

// --- namespaces, config maps, secrets, service accounts ---------------------------------------

const namespacePrinter: KindPrinter = {
  columns: [nameCol(), col('Status', 'string', 'The status of the namespace'), ageCol()],
  row: (ns, ctx) => ({ cells: [nameOf(ns), str(at(ns, 'status', 'phase')), age(ns, ctx)] }),
};

const configMapPrinter: KindPrinter = {
  columns: [nameCol(), col('Data', 'string', doc('core.v1.ConfigMap', 'data')), ageCol()],
  row: (cm, ctx) => ({
    cells: [nameOf(cm), Object.keys(obj(at(cm, 'data'))).length + Object.keys(obj(at(cm, 'binaryData'))).length, age(cm, ctx)],
  }),
};

const secretPrinter: KindPrinter = {
  columns: [
    nameCol(),
    col('Type', 'string', doc('core.v1.Secret', 'type')),
    col('Data', 'string', doc('core.v1.Secret', 'data')),
    ageCol(),
  ],
  row: (s, ctx) => ({ cells: [nameOf(s), str(at(s, 'type')), Object.keys(obj(at(s, 'data'))).length, age(s, ctx)] }),
};

const serviceAccountPrinter: KindPrinter = {
  columns: [nameCol(), col('Secrets', 'string', doc('core.v1.ServiceAccount', 'secrets')), ageCol()],
  row: (sa, ctx) => ({ cells: [nameOf(sa), list(at(sa, 'secrets')).length, age(sa, ctx)] }),
};

// --- services and endpoints -------------------------------------------------------------------

/** Load-balancer ingress points: IPs, else hostnames, de-duplicated and sorted. */
function loadBalancerText(status: unknown): string {
  const points = new Set<string>();
  for (const i of list(at(status, 'ingress')).map(obj)) {
    if (str(i.ip)) points.add(str(i.ip));
    else if (str(i.hostname)) points.add(str(i.hostname));
  }
  // The server always renders the wide form, so nothing is clipped.
  return [...points].sort(byString).join(',');
}

function serviceExternalIP(svc: unknown): string {
  const spec = obj(at(svc, 'spec'));
  const externalIPs = list(spec.externalIPs).map((x) => str(x));
  switch (spec.type ?? 'ClusterIP') {
    case 'ClusterIP':
    case 'NodePort':
      return externalIPs.length > 0 ? externalIPs.join(',') : '<none>';
    case 'LoadBalancer': {
      const lb = loadBalancerText(at(svc, 'status', 'loadBalancer'));
      if (externalIPs.length > 0) return [...(lb ? lb.split(',') : []), ...externalIPs].join(',');
      return lb || '<pending>';
    }
    case 'ExternalName':
      return str(spec.externalName);
    default:
      return '<unknown>';
  }
}

const servicePorts = (ports: unknown): string =>
  list(ports)
    .map(obj)
    .map((p) => {
      const protocol = str(p.protocol, 'TCP');
      return num(p.nodePort) > 0 ? `${num(p.port)}:${num(p.nodePort)}/${protocol}` : `${num(p.port)}/${protocol}`;
    })
    .join(',');

const servicePrinter: KindPrinter = {
  columns: [
    nameCol(),
    col('Type', 'string', doc('core.v1.ServiceSpec', 'type')),
    col('Cluster-IP', 'string', doc('core.v1.ServiceSpec', 'clusterIP')),
    col('External-IP', 'string', doc('core.v1.ServiceSpec', 'externalIPs')),
    col('Port(s)', 'string', doc('core.v1.ServiceSpec', 'ports')),
    ageCol(),
    col('Selector', 'string', doc('core.v1.ServiceSpec', 'selector'), { priority: 1 }),
  ],
  row(svc, ctx) {
    const spec = obj(at(svc, 'spec'));
    // clusterIPs[0] is the primary IP; older objects may only carry clusterIP.
    const clusterIP = str(list(spec.clusterIPs)[0]) || str(spec.clusterIP) || '<none>';
    return {
      cells: [
        nameOf(svc),
        str(spec.type, 'ClusterIP'),
        clusterIP,
        serviceExternalIP(svc),
        servicePorts(spec.ports) || '<none>',
        age(svc, ctx),
        formatLabels(strMap(spec.selector)),
      ],
    };
  },
};

/** Up to three `ip:port` endpoints, then ` + N more...`; `<none>` without subsets. */
export function formatEndpoints(endpoints: unknown): string {
  const subsets = list(at(endpoints, 'subsets')).map(obj);
  if (subsets.length === 0) return '<none>';
  const max = 3;
  const shown: string[] = [];
  let count = 0;
  for (const ss of subsets) {
    const addresses = list(ss.addresses).map(obj);
    const ports = list(ss.ports).map(obj);
    if (ports.length === 0) {
      // Headless services may have no ports.
      count += addresses.length;
      for (const a of addresses) if (shown.length < max) shown.push(str(a.ip));
      continue;
    }
    for (const p of ports) {
      count += addresses.length;
      for (const a of addresses) if (shown.length < max) shown.push(joinHostPort(str(a.ip), num(p.port)));
    }
  }
  const text = shown.join(',');
  return count > max ? `${text} + ${count - max} more...` : text;
}

const endpointsPrinter: KindPrinter = {
  columns: [nameCol(), col('Endpoints', 'string', doc('core.v1.Endpoints', 'subsets')), ageCol()],
  row: (ep, ctx) => ({ cells: [nameOf(ep), formatEndpoints(ep), age(ep, ctx)] }),
};

// --- events -----------------------------------------------------------------------------------

/**
 * Reads an event in either shape: core v1 (`involvedObject`, `message`, `firstTimestamp`, …) or
 * events.k8s.io/v1 (`regarding`, `note`, `deprecatedFirstTimestamp`, …).
 */
function eventView(e: unknown) {
  const o = obj(e);
  const v1 = !('involvedObject' in o) && ('regarding' in o || 'note' in o || 'deprecatedSource' in o);
  return {
    subject: obj(v1 ? o.regarding : o.involvedObject),
    message: str(v1 ? o.note : o.message),
    source: obj(v1 ? o.deprecatedSource : o.source),
    firstTimestamp: v1 ? o.deprecatedFirstTimestamp : o.firstTimestamp,
    lastTimestamp: v1 ? o.deprecatedLastTimestamp : o.lastTimestamp,
    count: num(v1 ? o.deprecatedCount : o.count),
    eventTime: o.eventTime,
    series: isObj(o.series) ? o.series : undefined,
    type: str(o.type),
    reason: str(o.reason),
    // Core JSON names the reporting controller reportingComponent.
    reportingController: str(v1 ? o.reportingController : o.reportingComponent),
    reportingInstance: str(o.reportingInstance),
  };
}

const eventPrinter: KindPrinter = {
  columns: [
    col('Last Seen', 'string', doc('core.v1.Event', 'lastTimestamp')),
    col('Type', 'string', doc('core.v1.Event', 'type')),
    col('Reason', 'string', doc('core.v1.Event', 'reason')),
    col('Object', 'string', doc('core.v1.Event', 'involvedObject')),
    col('Subobject', 'string', doc('core.v1.ObjectReference', 'fieldPath'), { priority: 1 }),
    col('Source', 'string', doc('core.v1.Event', 'source'), { priority: 1 }),
    col('Message', 'string', doc('core.v1.Event', 'message')),
    col('First Seen', 'string', doc('core.v1.Event', 'firstTimestamp'), { priority: 1 }),
    col('Count', 'string', doc('core.v1.Event', 'count'), { priority: 1 }),
    col('Name', 'string', doc('io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta', 'name'), { priority: 1, format: 'name' }),
  ],
  row(e, ctx) {
    const v = eventView(e);
    // New-style events carry eventTime instead of firstTimestamp, and series instead of count.
    const first =
      parseTimestamp(v.firstTimestamp) !== undefined ? timeSince(v.firstTimestamp, ctx.now) : timeSince(v.eventTime, ctx.now);
    let last = parseTimestamp(v.lastTimestamp) !== undefined ? timeSince(v.lastTimestamp, ctx.now) : first;
    let count = v.count;
    if (v.series) {
      last = timeSince(v.series.lastObservedTime, ctx.now);
      count = num(v.series.count);
    } else if (count === 0) {
      count = 1;
    }
    const kind = str(v.subject.kind).toLowerCase();
    const target = str(v.subject.name) ? `${kind}/${str(v.subject.name)}` : kind;
    const component = str(v.source.component) || v.reportingController;
    const instance = str(v.source.host) || v.reportingInstance;
    return {
      cells: [
        last,
        v.type,
        v.reason,
        target,
        str(v.subject.fieldPath),
        instance ? `${component}, ${instance}` : component,
        v.message.trim(),
        first,
        count,
        nameOf(e),
      ],
    };
  },
};

// --- persistent volumes and claims -------------------------------------------------------------

/** Upstream's GetAccessModesAsString: fixed order, duplicates dropped. */
export function accessModesText(modes: unknown): string {
  const have = new Set(list(modes).map((m) => str(m)));
  const out: string[] = [];
  if (have.has('ReadWriteOnce')) out.push('RWO');
  if (have.has('ReadOnlyMany')) out.push('ROX');
  if (have.has('ReadWriteMany')) out.push('RWX');
  if (have.has('ReadWriteOncePod')) out.push('RWOP');
  return out.join(',');
}

/** The beta storage-class annotation wins over spec.storageClassName, as upstream reads it. */
function storageClassOf(o: unknown, ctx: PrintContext): string {
  const annotations = strMap(metadataOf(o).annotations);
  const beta = `${ctx.naming.labelPrefix('volume.beta')}storage-class`;
  if (beta in annotations) return annotations[beta]!;
  return str(at(o, 'spec', 'storageClassName'));
}

const pvPrinter: KindPrinter = {
  columns: [
    nameCol(),
    col('Capacity', 'string', doc('core.v1.PersistentVolumeSpec', 'capacity')),
    col('Access Modes', 'string', doc('core.v1.PersistentVolumeSpec', 'accessModes')),
    col('Reclaim Policy', 'string', doc('core.v1.PersistentVolumeSpec', 'persistentVolumeReclaimPolicy')),
    col('Status', 'string', doc('core.v1.PersistentVolumeStatus', 'phase')),
    col('Claim', 'string', doc('core.v1.PersistentVolumeSpec', 'claimRef')),
    col('StorageClass', 'string', 'StorageClass of the pv'),
    col('VolumeAttributesClass', 'string', 'VolumeAttributesClass of the pv'),
    col('Reason', 'string', doc('core.v1.PersistentVolumeStatus', 'reason')),
    ageCol(),
    col('VolumeMode', 'string', doc('core.v1.PersistentVolumeSpec', 'volumeMode'), { priority: 1 }),
  ],
  row(pv, ctx) {
    const spec = obj(at(pv, 'spec'));
    const claimRef = isObj(spec.claimRef) ? `${str(spec.claimRef.namespace)}/${str(spec.claimRef.name)}` : '';
    return {
      cells: [
        nameOf(pv),
        quantityText(at(spec, 'capacity', 'storage')),
        accessModesText(spec.accessModes),
        str(spec.persistentVolumeReclaimPolicy),
        isDeleting(pv) ? 'Terminating' : str(at(pv, 'status', 'phase')),
        claimRef,
        storageClassOf(pv, ctx),
        typeof spec.volumeAttributesClassName === 'string' ? spec.volumeAttributesClassName : '<unset>',
        str(at(pv, 'status', 'reason')),
        age(pv, ctx),
        typeof spec.volumeMode === 'string' ? spec.volumeMode : '<unset>',
      ],
    };
  },
};

const pvcPrinter: KindPrinter = {
  columns: [
    nameCol(),
    col('Status', 'string', doc('core.v1.PersistentVolumeClaimStatus', 'phase')),
    col('Volume', 'string', doc('core.v1.PersistentVolumeClaimSpec', 'volumeName')),
    col('Capacity', 'string', doc('core.v1.PersistentVolumeClaimStatus', 'capacity')),
    col('Access Modes', 'string', doc('core.v1.PersistentVolumeClaimStatus', 'accessModes')),
    col('StorageClass', 'string', 'StorageClass of the pvc'),
    col('VolumeAttributesClass', 'string', 'VolumeAttributesClass of the pvc'),
    ageCol(),
    col('VolumeMode', 'string', doc('core.v1.PersistentVolumeClaimSpec', 'volumeMode'), { priority: 1 }),
  ],
  row(pvc, ctx) {
    const spec = obj(at(pvc, 'spec'));
    const volumeName = str(spec.volumeName);
    // Capacity and access modes are the bound volume's, so they show only once bound.
    const bound = volumeName !== '';
    return {
      cells: [
        nameOf(pvc),
        isDeleting(pvc) ? 'Terminating' : str(at(pvc, 'status', 'phase')),
        volumeName,
        bound ? quantityText(at(pvc, 'status', 'capacity', 'storage')) : '',
        bound ? accessModesText(at(pvc, 'status', 'accessModes')) : '',
        storageClassOfClaim(pvc, ctx),
        typeof spec.volumeAttributesClassName === 'string' ? spec.volumeAttributesClassName : '<unset>',
        age(pvc, ctx),
        typeof spec.volumeMode === 'string' ? spec.volumeMode : '<unset>',
      ],
    };
  },
};

function storageClassOfClaim(pvc: unknown, ctx: PrintContext): string {
  const annotations = strMap(metadataOf(pvc).annotations);
  const beta = `${ctx.naming.labelPrefix('volume.beta')}storage-class`;
  if (beta in annotations) return annotations[beta]!;
  const cls = at(pvc, 'spec', 'storageClassName');
  return typeof cls === 'string' ? cls : '';
}

// --- component statuses, quotas, pod templates --------------------------------------------------

const componentStatusPrinter: KindPrinter = {
  columns: [
    nameCol(),
    col('Status', 'string', 'Status of the component conditions'),
    col('Message', 'string', 'Message of the component conditions'),
    col('Error', 'string', 'Error of the component conditions'),
  ],
  row(cs) {
    let status = 'Unknown';
    let message = '';
    let error = '';
    const healthy = list(at(cs, 'conditions')).map(obj).find((c) => c.type === 'Healthy');
    if (healthy) {
      status = healthy.status === 'True' ? 'Healthy' : 'Unhealthy';
      message = str(healthy.message);
      error = str(healthy.error);
    }
    return { cells: [nameOf(cs), status, message, error] };
  },
};

const resourceQuotaPrinter: KindPrinter = {
  columns: [
    nameCol(),
    col('Request', 'string', 'Request represents a minimum amount of cpu/memory that a container may consume.'),
    col(
      'Limit',
      'string',
      'Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node.',
    ),
    ageCol(),
  ],
  row(rq, ctx) {
    const hard = obj(at(rq, 'status', 'hard'));
    const used = obj(at(rq, 'status', 'used'));
    const requests: string[] = [];
    const limits: string[] = [];
    for (const name of Object.keys(hard).sort(byString)) {
      const text = `${name}: ${quantityText(used[name])}/${quantityText(hard[name])}`;
      // `limits.cpu`, `limits.memory`, … go to the Limit column.
      (name.split('.').length > 1 && name.split('.')[0] === 'limits' ? limits : requests).push(text);
    }
    return { cells: [nameOf(rq), requests.join(', '), limits.join(', '), age(rq, ctx)] };
  },
};

const podTemplatePrinter: KindPrinter = {
  columns: [
    nameCol(),
    col('Containers', 'string', 'Names of each container in the template.'),
    col('Images', 'string', 'Images referenced by each container in the template.'),
    col('Pod Labels', 'string', 'The labels for the pod template.'),
  ],
  row(pt) {
    const [names, images] = containerCells(at(pt, 'template', 'spec', 'containers'));
    return { cells: [nameOf(pt), names, images, formatLabels(strMap(at(pt, 'template', 'metadata', 'labels')))] };
  },
};

/** Keyed by `<upstream group>/<resource>`. */
export const corePrinters: Readonly<Record<string, KindPrinter>> = {
  '/nodes': nodePrinter,
  '/namespaces': namespacePrinter,
  '/configmaps': configMapPrinter,
  '/secrets': secretPrinter,
  '/serviceaccounts': serviceAccountPrinter,
  '/services': servicePrinter,
  '/endpoints': endpointsPrinter,
  '/events': eventPrinter,
  'events.k8s.io/events': eventPrinter,
  '/persistentvolumes': pvPrinter,
  '/persistentvolumeclaims': pvcPrinter,
  '/componentstatuses': componentStatusPrinter,
  '/resourcequotas': resourceQuotaPrinter,
  '/podtemplates': podTemplatePrinter,
};
