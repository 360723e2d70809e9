// internal/aggregator/apiservice-validation owns the rules an APIService must meet beyond its
// schema and metadata, as upstream's kube-aggregator validates them: the name is
// `<version>.<group>`, group and version are DNS names, the priorities are in range, and a local
// APIService (no spec.service) carries no TLS settings.
// Imports: apierrors (FieldError), validation (name rules, kinds/common).

import { fieldErrors, type FieldError } from '../apierrors/field-errors.js';
import { isDNS1035Label, isDNS1123Subdomain, isValidPortNum } from '../validation/name-rules.js';
import type { KindValidator } from '../validation/kinds/common.js';

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

export const validateAPIService: KindValidator = (apiService) => {
  const errs: FieldError[] = [];
  const spec = obj(apiService.spec);
  const group = str(spec.group);
  const version = str(spec.version);
  const name = str(obj(apiService.metadata).name);
  const requiredName = `${version}.${group}`;
  if (name !== requiredName) errs.push(fieldErrors.invalid('metadata.name', name, `must be \`spec.version+"."+spec.group\`: "${requiredName}"`));
  if (group === '' && version !== 'v1') errs.push(fieldErrors.required('spec.group', 'only v1 may have an empty group and it better be legacy kube'));
  if (group !== '') for (const m of isDNS1123Subdomain(group)) errs.push(fieldErrors.invalid('spec.group', group, m));
  for (const m of isDNS1035Label(version)) errs.push(fieldErrors.invalid('spec.version', version, m));
  const groupPriority = typeof spec.groupPriorityMinimum === 'number' ? spec.groupPriorityMinimum : 0;
  if (groupPriority <= 0 || groupPriority > 20000) errs.push(fieldErrors.invalid('spec.groupPriorityMinimum', groupPriority, 'must be positive and less than 20000'));
  const versionPriority = typeof spec.versionPriority === 'number' ? spec.versionPriority : 0;
  if (versionPriority <= 0 || versionPriority > 1000) errs.push(fieldErrors.invalid('spec.versionPriority', versionPriority, 'must be positive and less than 1000'));
  const caBundle = str(spec.caBundle);
  const insecure = spec.insecureSkipTLSVerify === true;
  if (spec.service === undefined || spec.service === null) {
    if (caBundle.length > 0) errs.push(fieldErrors.invalid('spec.caBundle', `${Buffer.from(caBundle, 'base64').length} bytes`, 'local APIServices may not have a caBundle'));
    if (insecure) errs.push(fieldErrors.invalid('spec.insecureSkipTLSVerify', true, 'local APIServices may not have insecureSkipTLSVerify'));
    return errs;
  }
  const service = obj(spec.service);
  if (str(service.namespace) === '') errs.push(fieldErrors.required('spec.service.namespace', ''));
  if (str(service.name) === '') errs.push(fieldErrors.required('spec.service.name', ''));
  if (typeof service.port === 'number') for (const m of isValidPortNum(service.port)) errs.push(fieldErrors.invalid('spec.service.port', service.port, m));
  if (insecure && caBundle.length > 0) errs.push(fieldErrors.invalid('spec.insecureSkipTLSVerify', true, 'may not be true if caBundle is present'));
  return errs;
};
