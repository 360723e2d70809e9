// internal/openapi/openapi-v2-proto owns the protobuf form of the Swagger 2.0 document
// (`application/com.github.proto-openapi.spec.v2.v1.0+protobuf`): the JSON document's content
// as the gnostic OpenAPI v2 `Document` message declared in proto/openapiv2.proto, encoded with
// protobufjs. client-go's OpenAPISchema() (kubectl explain --output=plaintext-openapiv2,
// kubectl apply's client-side validation) reads only this form.
// protobufjs is required on first use (only clients asking for this form need it), not at
// import. Imports: schema/data-files, lazy.

import type * as Protobuf from 'protobufjs';
import { lazyRequire } from '../lazy/lazy-require.js';
import { readDataFile } from '../schema/data-files.js';

const protobuf = lazyRequire<typeof Protobuf>('protobufjs');

/**
 * The media type the protobuf form is served as. Clients ask for it either so or in the older
 * spelling with `@` (client-go's), which is answered with this one as upstream's kube-openapi
 * does: `@` is not a token character, and Go's mime parser refuses it in a Content-Type.
 */
export const OPENAPI_V2_PROTOBUF = 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf';
export const OPENAPI_V2_PROTOBUF_LEGACY = 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf';

type Json = Record<string, unknown>;
type Message = Record<string, unknown>;

let documentType: Protobuf.Type | undefined;
function documentMessage(): Protobuf.Type {
  documentType ??= protobuf().parse(readDataFile('openapiv2.proto'), { keepCase: true }).root.lookupType('openapi.v2.Document');
  return documentType;
}

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A JSON value as gnostic's Any: YAML text, and JSON text is YAML. */
const anyOf = (v: unknown): Message => ({ yaml: `${JSON.stringify(v)}\n` });

const extensionsOf = (o: Json): Message[] =>
  Object.entries(o)
    .filter(([k]) => k.startsWith('x-'))
    .map(([name, v]) => ({ name, value: anyOf(v) }));

const STRING_FIELDS: Record<string, string> = { format: 'format', title: 'title', description: 'description', pattern: 'pattern', discriminator: 'discriminator' };
const NUMBER_FIELDS: Record<string, string> = {
  multipleOf: 'multiple_of',
  maximum: 'maximum',
  minimum: 'minimum',
  maxLength: 'max_length',
  minLength: 'min_length',
  maxItems: 'max_items',
  minItems: 'min_items',
  maxProperties: 'max_properties',
  minProperties: 'min_properties',
};
const BOOL_FIELDS: Record<string, string> = { exclusiveMaximum: 'exclusive_maximum', exclusiveMinimum: 'exclusive_minimum', uniqueItems: 'unique_items', readOnly: 'read_only' };

/** One JSON Schema object as the Schema message; keywords Swagger 2.0 lacks are left out. */
export function schemaMessage(s: Json): Message {
  const m: Message = {};
  for (const [k, v] of Object.entries(s)) {
    if (k === '$ref' && typeof v === 'string') m._ref = v;
    else if (STRING_FIELDS[k] && typeof v === 'string') m[STRING_FIELDS[k]] = v;
    else if (NUMBER_FIELDS[k] && typeof v === 'number') m[NUMBER_FIELDS[k]] = v;
    else if (BOOL_FIELDS[k] && typeof v === 'boolean') m[BOOL_FIELDS[k]] = v;
    else if (k === 'default') m.default = anyOf(v);
    else if (k === 'example') m.example = anyOf(v);
    else if (k === 'enum' && Array.isArray(v)) m.enum = v.map(anyOf);
    else if (k === 'required' && Array.isArray(v)) m.required = v.filter((x): x is string => typeof x === 'string');
    else if (k === 'type') m.type = { value: Array.isArray(v) ? v : [v] };
    else if (k === 'items') m.items = { schema: (Array.isArray(v) ? v : [v]).filter(isObject).map(schemaMessage) };
    else if (k === 'allOf' && Array.isArray(v)) m.all_of = v.filter(isObject).map(schemaMessage);
    else if (k === 'properties' && isObject(v)) m.properties = { additional_properties: Object.entries(v).filter(([, p]) => isObject(p)).map(([name, p]) => ({ name, value: schemaMessage(p as Json) })) };
    else if (k === 'additionalProperties') {
      if (typeof v === 'boolean') m.additional_properties = { boolean: v };
      else if (isObject(v)) m.additional_properties = { schema: schemaMessage(v) };
    }
  }
  // The component schemas wrap a described reference as `allOf: [{$ref}]` (OpenAPI 3 allows no
  // siblings to $ref); Swagger 2.0 documents, and the clients reading them, have the $ref itself.
  const all = m.all_of as Message[] | undefined;
  if (!m._ref && all?.length === 1 && typeof all[0]!._ref === 'string' && Object.keys(all[0]!).length === 1) {
    m._ref = all[0]!._ref;
    delete m.all_of;
  }
  const ext = extensionsOf(s);
  if (ext.length) m.vendor_extension = ext;
  return m;
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

function operationMessage(op: Json): Message {
  const m: Message = {};
  if (typeof op.description === 'string') m.description = op.description;
  if (typeof op.operationId === 'string') m.operation_id = op.operationId;
  const params = Array.isArray(op.parameters) ? op.parameters.filter(isObject) : [];
  m.parameters = params
    .filter((p) => p.in === 'query')
    .map((p) => {
      // Parameters carry their type directly in Swagger 2.0, or under `schema` as OpenAPI 3 has it.
      const type = typeof p.type === 'string' ? p.type : isObject(p.schema) && typeof p.schema.type === 'string' ? p.schema.type : '';
      const q: Message = { in: 'query', name: String(p.name ?? ''), type };
      if (p.required === true) q.required = true;
      if (p.uniqueItems === true) q.unique_items = true;
      if (typeof p.description === 'string') q.description = p.description;
      return { parameter: { non_body_parameter: { query_parameter_sub_schema: q } } };
    });
  const responses = isObject(op.responses) ? op.responses : {};
  m.responses = {
    response_code: Object.entries(responses)
      .filter(([, r]) => isObject(r))
      .map(([name, r]) => {
        const resp = r as Json;
        const out: Message = { description: typeof resp.description === 'string' ? resp.description : '' };
        if (isObject(resp.schema)) out.schema = { schema: schemaMessage(resp.schema) };
        return { name, value: { response: out } };
      }),
  };
  const ext = extensionsOf(op);
  if (ext.length) m.vendor_extension = ext;
  return m;
}

/** The Swagger 2.0 JSON document as the gnostic Document message, encoded. */
export function encodeOpenApiV2(doc: Json): Buffer {
  const info = isObject(doc.info) ? doc.info : {};
  const paths = isObject(doc.paths) ? doc.paths : {};
  const definitions = isObject(doc.definitions) ? doc.definitions : {};
  const message: Message = {
    swagger: String(doc.swagger ?? '2.0'),
    info: { title: String(info.title ?? ''), version: String(info.version ?? '') },
    paths: {
      path: Object.entries(paths)
        .filter(([, item]) => isObject(item))
        .map(([name, item]) => {
          const value: Message = {};
          for (const method of METHODS) {
            const op = (item as Json)[method];
            if (isObject(op)) value[method] = operationMessage(op);
          }
          return { name, value };
        }),
    },
    definitions: { additional_properties: Object.entries(definitions).filter(([, s]) => isObject(s)).map(([name, s]) => ({ name, value: schemaMessage(s as Json) })) },
  };
  const type = documentMessage();
  return Buffer.from(type.encode(type.fromObject(message)).finish());
}

/** Decodes an encoded Document back into a plain object (snake_case fields), for tests and tools. */
export function decodeOpenApiV2(bytes: Uint8Array): Message {
  const type = documentMessage();
  return type.toObject(type.decode(bytes), { defaults: false, longs: Number, oneofs: false }) as Message;
}
