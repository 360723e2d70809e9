// internal/validation/kinds/service owns the Service rules: type and affinity values, ports
// (required except for ExternalName and headless services, names required when more than one,
// unique names and port/protocol pairs, valid numbers, target ports, node ports), cluster IPs
// (valid, immutable once set except across ExternalName), external name, traffic policies, IP
// families, selector labels.
// Imports: apierrors (FieldError), validation helpers, kinds/common.

import { fieldErrors, fieldPath, type FieldError } from '../../apierrors/field-errors.js';
import { ipFamilyOf, isDNS1123Label, isDNSName, isValidCIDR, isValidIP, isValidPortName, isValidPortNum } from '../name-rules.js';
import { validateLabels } from '../object-meta.js';
import { isObject, type JsonObject } from '../plain-json.js';
import { list, obj, str, type KindValidator } from './common.js';

const TYPES = ['ClusterIP', 'ExternalName', 'LoadBalancer', 'NodePort'];
const PROTOCOLS = ['SCTP', 'TCP', 'UDP'];
const MAX_AFFINITY_TIMEOUT = 86400;

function validatePorts(spec: JsonObject, type: string): FieldError[] {
  const errs: FieldError[] = [];
  const ports = list(spec, 'ports');
  const names = new Set<string>();
  const pairs = new Set<string>();
  ports.forEach((port, i) => {
    if (!isObject(port)) return;
    const p = fieldPath.index('spec.ports', i);
    const name = str(port, 'name');
    if (ports.length > 1 && !name) errs.push(fieldErrors.required(`${p}.name`, ''));
    if (name) {
      for (const m of isDNS1123Label(name)) errs.push(fieldErrors.invalid(`${p}.name`, name, m));
      if (names.has(name)) errs.push(fieldErrors.duplicate(`${p}.name`, name));
      names.add(name);
    }
    if (typeof port.port === 'number') for (const m of isValidPortNum(port.port)) errs.push(fieldErrors.invalid(`${p}.port`, port.port, m));
    const protocol = str(port, 'protocol');
    if (!protocol) errs.push(fieldErrors.required(`${p}.protocol`, ''));
    else if (!PROTOCOLS.includes(protocol)) errs.push(fieldErrors.notSupported(`${p}.protocol`, protocol, PROTOCOLS));
    const target = port.targetPort;
    if (typeof target === 'number') for (const m of isValidPortNum(target)) errs.push(fieldErrors.invalid(`${p}.targetPort`, target, m));
    else if (typeof target === 'string') for (const m of isValidPortName(target)) errs.push(fieldErrors.invalid(`${p}.targetPort`, target, m));
    if (typeof port.nodePort === 'number' && port.nodePort !== 0) {
      if (type === 'ClusterIP' || type === 'ExternalName') {
        errs.push(fieldErrors.forbidden(`${p}.nodePort`, `may not be used when \`type\` is '${type}'`));
      } else {
        for (const m of isValidPortNum(port.nodePort)) errs.push(fieldErrors.invalid(`${p}.nodePort`, port.nodePort, m));
      }
    }
    const pair = `${protocol}/${String(port.port)}`;
    if (pairs.has(pair)) errs.push(fieldErrors.duplicate(p, { port: port.port, protocol }));
    pairs.add(pair);
  });
  return errs;
}

function validateClusterIPs(spec: JsonObject, type: string): FieldError[] {
  const errs: FieldError[] = [];
  const clusterIP = str(spec, 'clusterIP');
  const clusterIPs = list(spec, 'clusterIPs').filter((v): v is string => typeof v === 'string');
  if (type === 'ExternalName') {
    if (clusterIP && clusterIP !== 'None') errs.push(fieldErrors.forbidden('spec.clusterIPs', 'may not be set for ExternalName services'));
    return errs;
  }
  if (clusterIP && clusterIPs.length > 0 && clusterIPs[0] !== clusterIP) {
    errs.push(fieldErrors.invalid('spec.clusterIPs', clusterIPs, 'first value must match `clusterIP`'));
  }
  const all = clusterIPs.length > 0 ? clusterIPs : clusterIP ? [clusterIP] : [];
  all.forEach((ip, i) => {
    if (ip === 'None') {
      if (i > 0 || all.length > 1) errs.push(fieldErrors.invalid(fieldPath.index('spec.clusterIPs', i), ip, 'must not be None unless it is the only entry'));
      return;
    }
    for (const m of isValidIP(ip)) errs.push(fieldErrors.invalid(fieldPath.index('spec.clusterIPs', i), ip, m));
  });
  if (all.length === 2 && ipFamilyOf(all[0]!) && ipFamilyOf(all[0]!) === ipFamilyOf(all[1]!)) {
    errs.push(fieldErrors.invalid('spec.clusterIPs', all, 'may specify no more than one IP for each IP family'));
  }
  if (all.length > 2) errs.push(fieldErrors.invalid('spec.clusterIPs', all, 'may only hold up to 2 values'));
  return errs;
}

export const validateService: KindValidator = (svc, old) => {
  const spec = obj(svc, 'spec');
  if (!spec) return [fieldErrors.required('spec', '')];
  const errs: FieldError[] = [];
  const type = str(spec, 'type');
  if (!type) errs.push(fieldErrors.required('spec.type', ''));
  else if (!TYPES.includes(type)) errs.push(fieldErrors.notSupported('spec.type', type, TYPES));

  const headless = str(spec, 'clusterIP') === 'None';
  if (list(spec, 'ports').length === 0 && !headless && type !== 'ExternalName') errs.push(fieldErrors.required('spec.ports', ''));
  errs.push(...validatePorts(spec, type));
  errs.push(...validateClusterIPs(spec, type));

  if (type === 'ExternalName') {
    const name = str(spec, 'externalName');
    if (!name) errs.push(fieldErrors.required('spec.externalName', ''));
    else for (const m of isDNSName(name)) errs.push(fieldErrors.invalid('spec.externalName', name, m));
  }

  const affinity = str(spec, 'sessionAffinity');
  if (!affinity) errs.push(fieldErrors.required('spec.sessionAffinity', ''));
  else if (affinity !== 'None' && affinity !== 'ClientIP') errs.push(fieldErrors.notSupported('spec.sessionAffinity', affinity, ['ClientIP', 'None']));
  const affinityConfig = obj(spec, 'sessionAffinityConfig');
  if (affinity === 'None' && affinityConfig) {
    errs.push(fieldErrors.invalid('spec.sessionAffinityConfig', affinityConfig, `must not be set when session affinity is ${affinity}`));
  }
  const timeout = obj(affinityConfig, 'clientIP')?.timeoutSeconds;
  if (typeof timeout === 'number' && (timeout <= 0 || timeout > MAX_AFFINITY_TIMEOUT)) {
    errs.push(fieldErrors.invalid('spec.sessionAffinityConfig.clientIP.timeoutSeconds', timeout, `must be greater than 0 and less than ${MAX_AFFINITY_TIMEOUT}`));
  }

  const external = str(spec, 'externalTrafficPolicy');
  if (external) {
    if (type !== 'NodePort' && type !== 'LoadBalancer' && list(spec, 'externalIPs').length === 0) {
      errs.push(fieldErrors.invalid('spec.externalTrafficPolicy', external, 'may only be set for externally-accessible services'));
    } else if (external !== 'Cluster' && external !== 'Local') {
      errs.push(fieldErrors.notSupported('spec.externalTrafficPolicy', external, ['Cluster', 'Local']));
    }
  }
  const internal = str(spec, 'internalTrafficPolicy');
  if (internal && internal !== 'Cluster' && internal !== 'Local') errs.push(fieldErrors.notSupported('spec.internalTrafficPolicy', internal, ['Cluster', 'Local']));
  const familyPolicy = str(spec, 'ipFamilyPolicy');
  if (familyPolicy && !['SingleStack', 'PreferDualStack', 'RequireDualStack'].includes(familyPolicy)) {
    errs.push(fieldErrors.notSupported('spec.ipFamilyPolicy', familyPolicy, ['PreferDualStack', 'RequireDualStack', 'SingleStack']));
  }
  const families = list(spec, 'ipFamilies');
  const seenFamilies = new Set<unknown>();
  families.forEach((f, i) => {
    if (f !== 'IPv4' && f !== 'IPv6') errs.push(fieldErrors.notSupported(fieldPath.index('spec.ipFamilies', i), f, ['IPv4', 'IPv6']));
    else if (seenFamilies.has(f)) errs.push(fieldErrors.duplicate(fieldPath.index('spec.ipFamilies', i), f));
    seenFamilies.add(f);
  });
  if (familyPolicy === 'SingleStack' && families.length > 1) {
    errs.push(fieldErrors.invalid('spec.ipFamilies', families, 'when spec.ipFamilyPolicy is SingleStack, at most one IP family may be specified'));
  }
  list(spec, 'externalIPs').forEach((ip, i) => {
    if (typeof ip === 'string') for (const m of isValidIP(ip)) errs.push(fieldErrors.invalid(fieldPath.index('spec.externalIPs', i), ip, m));
  });
  list(spec, 'loadBalancerSourceRanges').forEach((cidr, i) => {
    if (typeof cidr === 'string') for (const m of isValidCIDR(cidr.trim())) errs.push(fieldErrors.invalid(fieldPath.index('spec.loadBalancerSourceRanges', i), cidr, m));
  });
  if (typeof spec.allocateLoadBalancerNodePorts === 'boolean' && type !== 'LoadBalancer') {
    errs.push(fieldErrors.forbidden('spec.allocateLoadBalancerNodePorts', 'may only be used when `type` is \'LoadBalancer\''));
  }
  errs.push(...validateLabels(spec.selector, 'spec.selector'));

  const oldSpec = obj(old, 'spec');
  if (oldSpec) {
    const oldType = str(oldSpec, 'type');
    const oldIP = str(oldSpec, 'clusterIP');
    const newIP = str(spec, 'clusterIP');
    // The registry carries an unset clusterIP over from the old object; a different one is an error,
    // unless the service moves to or from ExternalName.
    if (oldIP && newIP && oldIP !== newIP && oldType !== 'ExternalName' && type !== 'ExternalName') {
      errs.push(fieldErrors.invalid('spec.clusterIPs[0]', newIP, 'may not change once set'));
    }
  }
  return errs;
};
