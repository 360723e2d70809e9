// internal/validation/kinds/crd owns the CustomResourceDefinition rules: the object name is
// `<plural>.<group>`, group and names syntax, scope, versions (unique DNS-1035 names, at least
// one served, exactly one storage), a schema per version, conversion strategy, immutable group
// and scope. The structural-schema check is deliberately minimal: an object root and a `type` on
// every property and array item that does not opt out (int-or-string, preserve-unknown-fields);
// patterns must compile as RE2 (Go's regexp); CEL validation rules, their estimated costs,
// defaults and uniqueItems are checked by validation/crd-cel; other value validations are not.
// Selectable fields are checked as upstream's ValidateCustomResourceSelectableFields does: each
// jsonPath a simple dotted path (no array notation) that the schema declares, ending at a string,
// boolean or integer, outside metadata, unique, at most 8.
// Imports: apierrors (FieldError), validation helpers, kinds/common.

import { fieldErrors, fieldPath, type FieldError } from '../../apierrors/field-errors.js';
import { isDNS1035Label, isDNS1123Subdomain } from '../name-rules.js';
import { isObject, jsonEqual, type JsonObject } from '../plain-json.js';
import { compileCrdRules } from '../crd-cel.js';
import { compilePattern } from '../value-rules.js';
import { immutable, list, obj, str, type KindValidator } from './common.js';

/** The ConversionReview versions this server speaks (sorted, as upstream lists them). */
const CONVERSION_REVIEW_VERSIONS = ['v1', 'v1beta1'];

/** As upstream: at least one, no duplicates, DNS-1035 labels, and one the server speaks. */
function conversionReviewVersionsErrors(versions: unknown[], path: string): FieldError[] {
  if (versions.length === 0) return [fieldErrors.required(path, '')];
  const errs: FieldError[] = [];
  const seen = new Set<unknown>();
  versions.forEach((v, i) => {
    if (seen.has(v)) {
      errs.push(fieldErrors.invalid(`${path}[${i}]`, v, 'duplicate version'));
      return;
    }
    seen.add(v);
    for (const m of isDNS1035Label(typeof v === 'string' ? v : '')) errs.push(fieldErrors.invalid(`${path}[${i}]`, v, m));
  });
  if (!versions.some((v) => typeof v === 'string' && CONVERSION_REVIEW_VERSIONS.includes(v))) {
    errs.push(fieldErrors.invalid(path, versions, `must include at least one of ${CONVERSION_REVIEW_VERSIONS.join(', ')}`));
  }
  return errs;
}

/** A webhook client config as upstream checks it: exactly one of an https URL or a service reference. */
function clientConfigErrors(cc: JsonObject, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const url = cc.url;
  const service = obj(cc, 'service');
  if ((url === undefined) === (service === undefined)) return [fieldErrors.required(path, 'exactly one of url or service is required')];
  if (url !== undefined) {
    const p = `${path}.url`;
    let u: URL | undefined;
    try {
      u = new URL(String(url));
    } catch {
      errs.push(fieldErrors.invalid(p, url, 'host must be specified'));
    }
    if (u) {
      if (u.protocol !== 'https:') errs.push(fieldErrors.invalid(p, url, "'https' is the only allowed URL scheme"));
      if (u.hostname === '') errs.push(fieldErrors.invalid(p, url, 'host must be specified'));
      if (u.username !== '' || u.password !== '') errs.push(fieldErrors.invalid(p, url, 'user information is not permitted in the URL'));
      if (u.hash !== '' || String(url).includes('#')) errs.push(fieldErrors.invalid(p, url, 'fragments are not permitted in the URL'));
      if (u.search !== '' || String(url).includes('?')) errs.push(fieldErrors.invalid(p, url, 'query parameters are not permitted in the URL'));
    }
  }
  if (service) {
    const p = `${path}.service`;
    if (!str(service, 'name')) errs.push(fieldErrors.required(`${p}.name`, 'service name is required'));
    if (!str(service, 'namespace')) errs.push(fieldErrors.required(`${p}.namespace`, 'service namespace is required'));
    const port = service.port;
    if (port !== undefined && (typeof port !== 'number' || !Number.isInteger(port) || port < 1 || port > 65535)) {
      errs.push(fieldErrors.invalid(`${p}.port`, port, 'port is not valid: must be between 1 and 65535, inclusive'));
    }
    const sp = service.path;
    if (sp !== undefined && sp !== null) {
      if (typeof sp !== 'string' || !sp.startsWith('/')) errs.push(fieldErrors.invalid(`${p}.path`, sp, "must start with a '/'"));
      else if (sp.length > 1) {
        sp.slice(1).split('/').forEach((seg, i) => {
          if (seg === '') errs.push(fieldErrors.invalid(`${p}.path`, sp, `segment[${i}] may not be empty`));
        });
      }
    }
  }
  return errs;
}

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

/**
 * Every `pattern` in a schema must compile as a Go (RE2) regular expression, with Go's error
 * text: lookarounds, backreferences and the like are refused as upstream refuses them. Walks
 * properties, items, additionalProperties and the allOf/anyOf/oneOf/not junctors.
 */
function patternErrors(schema: JsonObject, path: string, errs: FieldError[]): void {
  if (typeof schema.pattern === 'string' && schema.pattern !== '') {
    const compiled = compilePattern(schema.pattern);
    if (compiled instanceof Error) {
      errs.push(fieldErrors.invalid(`${path}.pattern`, schema.pattern, `must be a valid regular expression, but isn't: ${compiled.message}`));
    }
  }
  for (const [name, sub] of Object.entries(obj(schema, 'properties') ?? {})) {
    if (isObject(sub)) patternErrors(sub, `${path}.properties[${name}]`, errs);
  }
  if (isObject(schema.items)) patternErrors(schema.items, `${path}.items`, errs);
  if (isObject(schema.additionalProperties)) patternErrors(schema.additionalProperties, `${path}.additionalProperties`, errs);
  for (const junctor of ['allOf', 'anyOf', 'oneOf']) {
    list(schema, junctor).forEach((sub, i) => {
      if (isObject(sub)) patternErrors(sub, fieldPath.index(`${path}.${junctor}`, i), errs);
    });
  }
  if (isObject(schema.not)) patternErrors(schema.not, `${path}.not`, errs);
}

/** Upstream's MaxSelectableFields. */
const MAX_SELECTABLE_FIELDS = 8;

/** One step of a resolved selectable-field path: a declared property, or a key of a map. */
interface PathStep {
  readonly name: string;
  readonly property: boolean;
}

/**
 * The tokens of a JSON path as upstream's field-path scanner cuts them: each of `.`, `[`, `]` on
 * its own, a single-quoted string (up to the next quote not preceded by a backslash) whole, and
 * any other run of characters up to the next delimiter.
 */
function pathTokens(path: string): string[] {
  const tokens: string[] = [];
  const isDelimiter = (c: string | undefined): boolean => c === '.' || c === '[' || c === ']';
  let i = 0;
  while (i < path.length) {
    if (path[i] === "'") {
      let j = i + 1;
      while (j < path.length && !(path[j] === "'" && path[j - 1] !== '\\')) j++;
      const end = Math.min(j + 1, path.length);
      tokens.push(path.slice(i, end));
      i = end;
    } else if (isDelimiter(path[i])) {
      tokens.push(path[i]!);
      i++;
    } else {
      let j = i;
      while (j < path.length && !isDelimiter(path[j])) j++;
      tokens.push(path.slice(i, j));
      i = j;
    }
  }
  return tokens;
}

/**
 * Resolves a selectable field's jsonPath against a version's schema the way upstream's
 * cel.ValidFieldPath does with array notation disallowed: `.name` steps into a declared property,
 * or into the value schema of a map (additionalProperties). Returns the steps and the schema the
 * path ends at (undefined when a map's additionalProperties is a boolean), or upstream's reason.
 */
function resolveSelectablePath(
  jsonPath: string,
  root: JsonObject,
): { steps: PathStep[]; schema: JsonObject | undefined } | { reason: string } {
  const tokens = pathTokens(jsonPath);
  const steps: PathStep[] = [];
  let schema: JsonObject | undefined = root;
  for (let k = 0; k < tokens.length; k++) {
    const tok = tokens[k]!;
    if (tok === '[') return { reason: 'array notation is not allowed' };
    if (tok !== '.') return { reason: `expected [ or . but got: ${tok}` };
    const name = tokens[++k];
    if (name === undefined) return { reason: 'unexpected end of JSON path' };
    // Upstream dereferences a missing value schema here (it would crash on `.labels.a.b` under
    // `additionalProperties: true`); there is no field to find, so it is reported as such.
    if (!schema) return { reason: 'does not refer to a valid field' };
    const props: unknown = schema.properties;
    const additional: unknown = schema.additionalProperties;
    if (isObject(props)) {
      const sub: unknown = Object.prototype.hasOwnProperty.call(props, name) ? props[name] : undefined;
      if (!isObject(sub)) return { reason: 'does not refer to a valid field' };
      steps.push({ name, property: true });
      schema = sub;
    } else if (additional !== undefined && additional !== null) {
      steps.push({ name, property: false });
      schema = isObject(additional) ? additional : undefined;
    } else {
      return { reason: 'does not refer to a valid field' };
    }
  }
  return { steps, schema };
}

/** A resolved path as upstream's field.Path prints it (`spec.labels[team]`): its uniqueness key. */
const stepsString = (steps: readonly PathStep[]): string =>
  steps.map((s, i) => (s.property ? (i === 0 ? s.name : `.${s.name}`) : `[${s.name}]`)).join('');

/** Upstream's ValidateCustomResourceSelectableFields for one list of selectable fields. */
function selectableFieldsErrors(fields: readonly unknown[], schema: JsonObject, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const unique = new Set<string>();
  fields.forEach((f, i) => {
    // Items and jsonPaths of the wrong type are the schema validation's to report.
    if (!isObject(f)) return;
    const p = `${fieldPath.index(path, i)}.jsonPath`;
    const jsonPath = f.jsonPath;
    if (jsonPath === undefined || jsonPath === null || jsonPath === '') {
      errs.push(fieldErrors.required(p, ''));
      return;
    }
    if (typeof jsonPath !== 'string') return;
    const resolved = resolveSelectablePath(jsonPath, schema);
    if ('reason' in resolved) {
      errs.push(fieldErrors.invalid(p, jsonPath, `is an invalid path: ${resolved.reason}`));
      return;
    }
    const first = resolved.steps[0];
    if (first?.property && first.name === 'metadata') errs.push(fieldErrors.invalid(p, jsonPath, 'must not point to fields in metadata'));
    const type = resolved.schema?.type;
    if (type !== 'string' && type !== 'boolean' && type !== 'integer') {
      errs.push(
        fieldErrors.invalid(p, jsonPath, 'must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed.'),
      );
    }
    const key = stepsString(resolved.steps);
    if (unique.has(key)) errs.push(fieldErrors.duplicate(p, jsonPath));
    unique.add(key);
  });
  // Upstream counts the distinct paths that resolved, whatever else was wrong with them.
  if (unique.size > MAX_SELECTABLE_FIELDS) errs.push(fieldErrors.tooMany(path, unique.size, MAX_SELECTABLE_FIELDS));
  return errs;
}

/**
 * Selectable fields of every version, reported where upstream reports them. Upstream validates
 * its internal form, into which a v1 request is converted by moving what is identical in every
 * version (so always, with one version) to the top of the spec: when the fields and the schemas
 * are the same everywhere, errors are at `spec.selectableFields`. Otherwise each version's fields
 * are checked against its own schema. Upstream 1.32 moves the fields and the schema independently
 * and so refuses valid definitions whose versions share one but not the other
 * (kubernetes/kubernetes#140689, fixed upstream since); those are accepted here.
 */
function versionSelectableFieldsErrors(versions: readonly JsonObject[]): FieldError[] {
  const first = versions[0];
  if (!first) return [];
  const openAPISchema = (v: JsonObject): JsonObject | undefined => obj(obj(v, 'schema'), 'openAPIV3Schema');
  const shared =
    versions.every((v) => jsonEqual(v.schema, first.schema)) && versions.every((v) => jsonEqual(v.selectableFields, first.selectableFields));
  if (shared) {
    const fields = list(first, 'selectableFields');
    if (fields.length === 0) return [];
    const schema = openAPISchema(first);
    if (!schema) return [fieldErrors.invalid('spec.selectableFields', '', 'selectableFields may only be set when validations.schema is included')];
    return selectableFieldsErrors(fields, schema, 'spec.selectableFields');
  }
  const errs: FieldError[] = [];
  versions.forEach((v, i) => {
    const fields = list(v, 'selectableFields');
    if (fields.length === 0) return;
    const path = `${fieldPath.index('spec.versions', i)}.selectableFields`;
    const schema = openAPISchema(v);
    // The wording is upstream's, "not included" and all.
    if (!schema) errs.push(fieldErrors.invalid(path, '', 'selectableFields may only be set when version.schema.openAPIV3Schema is not included'));
    else errs.push(...selectableFieldsErrors(fields, schema, path));
  });
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

  // v1 has no whole-object switch-off of pruning (a v1beta1 leftover): refused on create, and
  // on an update that turns it on; an object that already had it may keep it, as upstream.
  if (spec.preserveUnknownFields === true && obj(old, 'spec')?.preserveUnknownFields !== true) {
    errs.push(fieldErrors.invalid('spec.preserveUnknownFields', true, 'cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead'));
  }
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
    else {
      errs.push(...structuralErrors(schema, `${p}.schema.openAPIV3Schema`, ext, true, ''));
      patternErrors(schema, `${p}.schema.openAPIV3Schema`, errs);
      errs.push(...compileCrdRules(schema, ctx.naming, `${p}.schema.openAPIV3Schema`).errors);
    }
  });
  if (versions.length > 0 && storage !== 1) {
    errs.push(fieldErrors.invalid('spec.versions', versions, 'must have exactly one version marked as storage version'));
  }
  if (versions.length > 0 && served === 0) errs.push(fieldErrors.invalid('spec.versions', versions, 'must have at least one version marked as served'));
  errs.push(...versionSelectableFieldsErrors(versions.map((v) => (isObject(v) ? v : {}))));

  const conversion = obj(spec, 'conversion');
  const strategy = str(conversion, 'strategy');
  if (strategy && strategy !== 'None' && strategy !== 'Webhook') errs.push(fieldErrors.notSupported('spec.conversion.strategy', strategy, ['None', 'Webhook']));
  if (strategy === 'Webhook') {
    const webhook = obj(conversion, 'webhook');
    const clientConfig = obj(webhook, 'clientConfig');
    if (!clientConfig) errs.push(fieldErrors.required('spec.conversion.webhook.clientConfig', 'required when strategy is set to Webhook'));
    else errs.push(...clientConfigErrors(clientConfig, 'spec.conversion.webhook.clientConfig'));
    errs.push(...conversionReviewVersionsErrors(list(webhook, 'conversionReviewVersions'), 'spec.conversion.webhook.conversionReviewVersions'));
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
