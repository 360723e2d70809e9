// internal/admission/policy/type-check owns checking a policy's validations against the
// schemas of the resources its matchConstraints name, as upstream's policy type checker does
// for status.typeChecking: for each group/version/resource the rules name explicitly (a
// wildcard names no particular schema: nothing is checked, as upstream), `object` and
// `oldObject` are typed from the kind's OpenAPI schema or the custom resource version's
// openAPIV3Schema (params too, from paramKind) and each validation's expression and
// messageExpression is checked; an error
// becomes an expressionWarning `<group/version, Kind=…>: <error>` on that field. Admission
// never uses these typed environments: evaluation stays on the dynamic one (compile.ts).
// For a MutatingAdmissionPolicy (which has no status upstream) the field names its
// `Object…{…}` constructions set are checked against the named resources' schemas, built-in or
// custom; the mutating plugin answers them as warnings when the policy is written.
// Imports: cel, cel/object-construction, authz/cel-authorizer, fieldmanager (type), schema
// (catalog types, openapi-index).

import { kubernetesCelEnvironment, type Environment } from '../../cel/cel.js';
import { registerAuthorizerLibrary } from '../../authz/cel-authorizer.js';
import type { ApiCatalog, ResourceInfo } from '../../schema/catalog.js';
import type { SchemaIndex, SchemaNode } from '../../schema/openapi-index.js';
import { constructedFields } from '../../cel/object-construction.js';
import type { SmdType } from '../../fieldmanager/index.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string') : []);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

export interface ExpressionWarning {
  fieldRef: string;
  warning: string;
}

/** CEL type names of schemas, registered in one environment (object types by name, the rest inline). */
class SchemaTypes {
  private readonly registered = new Set<string>();
  constructor(
    private readonly env: Environment,
    private readonly schemas: SchemaIndex,
  ) {}

  typeOf(node: SchemaNode, name: string): string {
    const ref = node.$ref ?? (node.allOf?.length === 1 ? node.allOf[0]!.$ref : undefined);
    let resolved = node;
    let typeName = name;
    if (ref) {
      resolved = this.schemas.resolve(node);
      typeName = `k8s.${ref.slice(ref.lastIndexOf('/') + 1)}`;
    }
    // An embedded resource's apiVersion, kind and metadata are implied, not declared: typing
    // it from its declared properties alone would warn of fields it has.
    if (resolved['x-kubernetes-int-or-string'] || resolved['x-kubernetes-preserve-unknown-fields'] || resolved['x-kubernetes-embedded-resource']) return 'dyn';
    switch (resolved.type) {
      case 'integer':
        return 'int';
      case 'number':
        return 'double';
      case 'boolean':
        return 'bool';
      case 'string':
        // Times and byte strings are typed otherwise upstream; a plain string here would warn wrongly.
        return resolved.format === 'date-time' || resolved.format === 'byte' ? 'dyn' : 'string';
      case 'array':
        return resolved.items ? `list<${this.typeOf(resolved.items, `${typeName}.@items`)}>` : 'list<dyn>';
      case 'object':
      case undefined: {
        if (resolved.properties) return this.register(typeName, resolved);
        if (isObj(resolved.additionalProperties)) return `map<string, ${this.typeOf(resolved.additionalProperties as SchemaNode, `${typeName}.@values`)}>`;
        return resolved.type === 'object' ? 'map<string, dyn>' : 'dyn';
      }
      default:
        return 'dyn';
    }
  }

  private register(typeName: string, node: SchemaNode): string {
    const safe = typeName.replace(/[^A-Za-z0-9_.]/g, '_');
    if (this.registered.has(safe)) return safe;
    this.registered.add(safe);
    const fields: Record<string, string> = {};
    for (const [k, v] of Object.entries(node.properties ?? {})) fields[k] = this.typeOf(v, `${safe}.${k}`);
    this.env.registerType({ name: safe, schema: fields });
    return safe;
  }
}

const OBJECT_META: SchemaNode = { $ref: '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta' };

/**
 * A custom resource version's openAPIV3Schema as a schema node: apiVersion, kind and metadata
 * are the server's (a CRD may only restrict metadata's name and generateName), as upstream's
 * structural schema for CEL adds them.
 */
function customResourceNode(schema: Record<string, unknown>): SchemaNode {
  const root = schema as SchemaNode;
  return { ...root, type: 'object', properties: { ...root.properties, apiVersion: { type: 'string' }, kind: { type: 'string' }, metadata: OBJECT_META } };
}

function typedEnvironment(schemas: SchemaIndex, object: ResourceInfo, params: ResourceInfo | undefined): Environment | undefined {
  const env = registerAuthorizerLibrary(kubernetesCelEnvironment({ request: 'map', namespaceObject: 'dyn', variables: 'map' }));
  const types = new SchemaTypes(env, schemas);
  const typeFor = (r: ResourceInfo): string | undefined => {
    if (r.custom) return r.custom.schema ? types.typeOf(customResourceNode(r.custom.schema), `crd.${r.group}.${r.version}.${r.kind}`) : undefined;
    if (!r.schemaName) return undefined;
    const node = schemas.get(r.schemaName);
    return node ? types.typeOf({ $ref: `#/components/schemas/${r.schemaName}` }, r.schemaName) : undefined;
  };
  const objectType = typeFor(object);
  if (!objectType) return undefined;
  env.registerVariable('object', objectType).registerVariable('oldObject', objectType);
  env.registerVariable('params', (params && typeFor(params)) ?? 'dyn');
  return env;
}

/** The explicitly named resources of a policy's resourceRules, built-in and custom (none when a wildcard is involved). */
function namedResources(catalog: ApiCatalog, matchConstraints: unknown): ResourceInfo[] {
  const out: ResourceInfo[] = [];
  const rules = isObj(matchConstraints) && Array.isArray(matchConstraints.resourceRules) ? matchConstraints.resourceRules.filter(isObj) : [];
  for (const rule of rules) {
    const groups = strings(rule.apiGroups);
    const versions = strings(rule.apiVersions);
    const resources = strings(rule.resources);
    if ([...groups, ...versions, ...resources].some((s) => s.includes('*'))) return [];
    for (const g of groups) for (const v of versions) for (const res of resources) {
      if (res.includes('/')) continue;
      const r = catalog.resource(g, v, res);
      if (r && !out.includes(r)) out.push(r);
    }
  }
  return out;
}

/** The expression warnings of a policy, field by field, for status.typeChecking. */
export function typeCheckPolicy(policy: Obj, catalog: ApiCatalog, schemas: SchemaIndex): ExpressionWarning[] {
  const spec = isObj(policy.spec) ? policy.spec : {};
  const targets = namedResources(catalog, spec.matchConstraints);
  if (targets.length === 0) return [];
  let params: ResourceInfo | undefined;
  if (isObj(spec.paramKind)) {
    const apiVersion = str(spec.paramKind.apiVersion);
    const slash = apiVersion.lastIndexOf('/');
    params = catalog.resourceForKind(slash < 0 ? '' : apiVersion.slice(0, slash), apiVersion.slice(slash + 1), str(spec.paramKind.kind));
  }
  const exprs: Array<{ fieldRef: string; source: string }> = [];
  (Array.isArray(spec.validations) ? spec.validations.filter(isObj) : []).forEach((v, i) => {
    if (str(v.expression)) exprs.push({ fieldRef: `spec.validations[${i}].expression`, source: str(v.expression) });
    if (str(v.messageExpression)) exprs.push({ fieldRef: `spec.validations[${i}].messageExpression`, source: str(v.messageExpression) });
  });
  const byField = new Map<string, string[]>();
  for (const target of targets) {
    const env = typedEnvironment(schemas, target, params);
    if (!env) continue;
    const gv = target.group ? `${target.group}/${target.version}` : target.version;
    for (const e of exprs) {
      let error: string | undefined;
      try {
        const checked = env.parse(e.source).check();
        if (!checked.valid) error = firstLine(checked.error);
      } catch (err) {
        error = firstLine(err);
      }
      if (error) byField.set(e.fieldRef, [...(byField.get(e.fieldRef) ?? []), `${gv}, Kind=${target.kind}: ${error}`]);
    }
  }
  return [...byField].map(([fieldRef, ws]) => ({ fieldRef, warning: ws.join('\n') }));
}

/**
 * The fields the `Object…{…}` constructions of a MutatingAdmissionPolicy's ApplyConfiguration
 * mutations set that the schema of a resource its resourceRules name explicitly (built-in or
 * custom; `typeOf` gives its structured-merge type) does not declare, as upstream's typed
 * environment would refuse them: one warning per expression, each line
 * `<group/version>, Kind=<kind>: undefined field '<f>' in <Object.path>`.
 */
export function typeCheckMutatingPolicy(policy: Obj, catalog: ApiCatalog, typeOf: (r: ResourceInfo) => SmdType): ExpressionWarning[] {
  const spec = isObj(policy.spec) ? policy.spec : {};
  const targets = namedResources(catalog, spec.matchConstraints);
  if (targets.length === 0) return [];
  const out: ExpressionWarning[] = [];
  (Array.isArray(spec.mutations) ? spec.mutations.filter(isObj) : []).forEach((m, i) => {
    const expression = isObj(m.applyConfiguration) ? str(m.applyConfiguration.expression) : '';
    if (m.patchType !== 'ApplyConfiguration' || !expression) return;
    const fields = constructedFields(expression);
    const lines: string[] = [];
    for (const target of targets) {
      const gv = target.group ? `${target.group}/${target.version}` : target.version;
      for (const { type, field } of fields) {
        const problem = undeclared(typeOf(target), type, field);
        const line = problem && `${gv}, Kind=${target.kind}: ${problem}`;
        if (line && !lines.includes(line)) lines.push(line);
      }
    }
    if (lines.length > 0) out.push({ fieldRef: `spec.mutations[${i}].applyConfiguration.expression`, warning: lines.join('\n') });
  });
  return out;
}

/** Why `<type>{<field>: …}` does not fit the schema `root` (undefined when it does). */
function undeclared(root: SmdType, type: string, field: string): string | undefined {
  const path = type.split('.');
  let t: SmdType = root;
  const fieldOf = (at: SmdType, name: string): SmdType | undefined => {
    let f = at.map?.field(name) ?? at.map?.element();
    // A list-typed field's construction names its items' type (`Object.spec.containers{…}`).
    while (f?.list) f = f.list.element();
    return f;
  };
  for (let i = 1; i < path.length; i++) {
    if (t.deduced) return undefined;
    const next = fieldOf(t, path[i]!);
    if (!next) return `undefined field '${path[i]}' in ${path.slice(0, i).join('.')}`;
    t = next;
  }
  if (t.deduced || fieldOf(t, field)) return undefined;
  return `undefined field '${field}' in ${type}`;
}

function firstLine(e: unknown): string {
  return (e instanceof Error ? e.message : String(e)).split('\n')[0]!;
}
