// internal/validation/kinds/crd owns the CustomResourceDefinition rules: the object name is
// `<plural>.<group>`, group and names syntax, scope, versions (unique DNS-1035 names, at least
// one served, exactly one storage), a schema per version, conversion strategy, immutable group
// and scope. The structural-schema check is deliberately minimal: an object root and a `type` on
// every property and array item that does not opt out (int-or-string, preserve-unknown-fields);
// value validations, defaults and CEL rules inside schemas are not checked here.
// Imports: apierrors (FieldError), validation helpers, kinds/common.

import { fieldErrors, fieldPath, type FieldError } from '../../apierrors/field-errors.js';
import { isDNS1035Label, isDNS1123Subdomain } from '../name-rules.js';
import { isObject, type JsonObject } from '../plain-json.js';
import { immutable, list, obj, str, type KindValidator } from './common.js';

function structuralErrors(schema: JsonObject, path: string, ext: string, root: boolean, what: string): FieldError[] {
  const errs: FieldError[] = [];
  const type = schema.type;
  const optedOut = schema[`${ext}int-or-string`] === true || schema[`${ext}preserve-unknown-fields`] === true;
  if (root) {
    if (type === undefined || type === '') errs.push(fieldErrors.required(`${path}.type`, 'must not be empty at the root'));
    else if (type !== 'object') errs.push(fieldErrors.invalid(`${path}.type`, type, 'must be object at the root'));
  } else if ((type === undefined || type === '') && !optedOut) {
    errs.push(fieldErrors.required(`${path}.type`, `must not be empty for specified ${what}`));
  }
  const props = obj(schema, 'properties');
  for (const [name, sub] of Object.entries(props ?? {})) {
    if (isObject(sub)) errs.push(...structuralErrors(sub, `${path}.properties[${name}]`, ext, false, 'object fields'));
  }
  const items = schema.items;
  if (isObject(items)) errs.push(...structuralErrors(items, `${path}.items`, ext, false, 'array items'));
  const additional = schema.additionalProperties;
  if (isObject(additional)) errs.push(...structuralErrors(additional, `${path}.additionalProperties`, ext, false, 'object fields'));
  if (props && isObject(additional)) {
    errs.push(fieldErrors.forbidden(`${path}.additionalProperties`, 'additionalProperties and properties are mutual exclusive'));
  }
  return errs;
}

function dns1035(value: string, path: string): FieldError[] {
  return isDNS1035Label(value).map((m) => fieldErrors.invalid(path, value, m));
}

export const validateCustomResourceDefinition: KindValidator = (crd, old, ctx) => {
  const spec = obj(crd, 'spec');
  if (!spec) return [fieldErrors.required('spec', '')];
  const errs: FieldError[] = [];
  const group = str(spec, 'group');
  const names = obj(spec, 'names');
  const plural = str(names, 'plural');
  const name = str(obj(crd, 'metadata'), 'name');
  if (name !== `${plural}.${group}`) errs.push(fieldErrors.invalid('metadata.name', name, 'must be spec.names.plural+"."+spec.group'));

  if (!group) errs.push(fieldErrors.required('spec.group', ''));
  else {
    for (const m of isDNS1123Subdomain(group)) errs.push(fieldErrors.invalid('spec.group', group, m));
    if (!group.includes('.')) errs.push(fieldErrors.invalid('spec.group', group, 'should be a domain with at least one dot'));
  }
  const scope = str(spec, 'scope');
  if (!scope) errs.push(fieldErrors.required('spec.scope', ''));
  else if (scope !== 'Cluster' && scope !== 'Namespaced') errs.push(fieldErrors.notSupported('spec.scope', scope, ['Cluster', 'Namespaced']));

  if (!plural) errs.push(fieldErrors.required('spec.names.plural', ''));
  else {
    errs.push(...dns1035(plural, 'spec.names.plural'));
    if (plural !== plural.toLowerCase()) errs.push(fieldErrors.invalid('spec.names.plural', plural, 'must be all lowercase'));
  }
  const singular = str(names, 'singular');
  if (singular) errs.push(...dns1035(singular, 'spec.names.singular'));
  for (const key of ['kind', 'listKind']) {
    const v = str(names, key);
    if (!v) errs.push(fieldErrors.required(`spec.names.${key}`, ''));
    else errs.push(...isDNS1035Label(v.toLowerCase()).map((m) => fieldErrors.invalid(`spec.names.${key}`, v, m)));
  }
  if (str(names, 'kind') && str(names, 'kind') === str(names, 'listKind')) {
    errs.push(fieldErrors.invalid('spec.names.listKind', str(names, 'listKind'), 'kind and listKind may not be the same'));
  }
  list(names, 'shortNames').forEach((s, i) => {
    if (typeof s === 'string') errs.push(...dns1035(s, fieldPath.index('spec.names.shortNames', i)));
  });
  list(names, 'categories').forEach((s, i) => {
    if (typeof s === 'string') errs.push(...dns1035(s, fieldPath.index('spec.names.categories', i)));
  });

  const versions = list(spec, 'versions');
  if (versions.length === 0) errs.push(fieldErrors.required('spec.versions', 'must have exactly one version marked as storage version'));
  const seen = new Set<string>();
  let storage = 0;
  let served = 0;
  const ext = ctx.naming.extensionPrefix;
  versions.forEach((v, i) => {
    if (!isObject(v)) return;
    const p = fieldPath.index('spec.versions', i);
    const vname = str(v, 'name');
    if (!vname) errs.push(fieldErrors.required(`${p}.name`, ''));
    else {
      errs.push(...dns1035(vname, `${p}.name`));
      if (seen.has(vname)) errs.push(fieldErrors.duplicate(`${p}.name`, vname));
      seen.add(vname);
    }
    if (v.storage === true) storage++;
    if (v.served === true) served++;
    const schema = obj(obj(v, 'schema'), 'openAPIV3Schema');
    if (!schema) errs.push(fieldErrors.required(`${p}.schema.openAPIV3Schema`, 'schemas are required'));
    else errs.push(...structuralErrors(schema, `${p}.schema.openAPIV3Schema`, ext, true, ''));
  });
  if (versions.length > 0 && storage !== 1) {
    errs.push(fieldErrors.invalid('spec.versions', versions, 'must have exactly one version marked as storage version'));
  }
  if (versions.length > 0 && served === 0) errs.push(fieldErrors.invalid('spec.versions', versions, 'must have at least one version marked as served'));

  const conversion = obj(spec, 'conversion');
  const strategy = str(conversion, 'strategy');
  if (strategy && strategy !== 'None' && strategy !== 'Webhook') errs.push(fieldErrors.notSupported('spec.conversion.strategy', strategy, ['None', 'Webhook']));
  if (strategy === 'Webhook') {
    const webhook = obj(conversion, 'webhook');
    if (!obj(webhook, 'clientConfig')) errs.push(fieldErrors.required('spec.conversion.webhook.clientConfig', 'required when strategy is set to Webhook'));
    if (list(webhook, 'conversionReviewVersions').length === 0) {
      errs.push(fieldErrors.required('spec.conversion.webhook.conversionReviewVersions', 'must contain at least one version'));
    }
  } else if (obj(conversion, 'webhook')) {
    errs.push(fieldErrors.forbidden('spec.conversion.webhook', 'should not be set when strategy is not set to Webhook'));
  }

  const oldSpec = obj(old, 'spec');
  if (oldSpec) {
    errs.push(...immutable(spec.group, oldSpec.group, 'spec.group'));
    errs.push(...immutable(obj(spec, 'names')?.plural, obj(oldSpec, 'names')?.plural, 'spec.names.plural'));
    errs.push(...immutable(spec.scope, oldSpec.scope, 'spec.scope'));
  }
  return errs;
};
