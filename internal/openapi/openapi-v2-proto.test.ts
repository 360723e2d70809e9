import { describe, expect, it } from 'vitest';
import { decodeOpenApiV2, encodeOpenApiV2, schemaMessage } from './openapi-v2-proto.js';

describe('Swagger 2.0 schema as the gnostic Schema message', () => {
  it.each([
    ['a reference', { $ref: '#/definitions/A' }, { _ref: '#/definitions/A' }],
    ['a described reference wrapped in allOf', { allOf: [{ $ref: '#/definitions/A' }], description: 'd' }, { _ref: '#/definitions/A', description: 'd' }],
    ['allOf of more than a bare reference stays allOf', { allOf: [{ $ref: '#/definitions/A', description: 'x' }] }, { all_of: [{ _ref: '#/definitions/A', description: 'x' }] }],
    ['type, format and bounds', { type: 'integer', format: 'int32', minimum: 0, maximum: 10, exclusiveMaximum: true }, { type: { value: ['integer'] }, format: 'int32', minimum: 0, maximum: 10, exclusive_maximum: true }],
    ['enum and default as YAML (JSON text)', { type: 'string', enum: ['A', 'B'], default: 'A' }, { type: { value: ['string'] }, enum: [{ yaml: '"A"\n' }, { yaml: '"B"\n' }], default: { yaml: '"A"\n' } }],
    ['items and required', { type: 'array', items: { type: 'string' }, required: ['x'] }, { type: { value: ['array'] }, items: { schema: [{ type: { value: ['string'] } }] }, required: ['x'] }],
    ['additionalProperties false is kept', { type: 'object', additionalProperties: false }, { type: { value: ['object'] }, additional_properties: { boolean: false } }],
    ['additionalProperties schema', { additionalProperties: { type: 'string' } }, { additional_properties: { schema: { type: { value: ['string'] } } } }],
    ['vendor extensions in order', { 'x-kubernetes-list-type': 'atomic', 'x-kubernetes-group-version-kind': [{ group: '', kind: 'Pod', version: 'v1' }] }, { vendor_extension: [{ name: 'x-kubernetes-list-type', value: { yaml: '"atomic"\n' } }, { name: 'x-kubernetes-group-version-kind', value: { yaml: '[{"group":"","kind":"Pod","version":"v1"}]\n' } }] }],
    ['OpenAPI 3 keywords Swagger 2.0 lacks are left out', { type: 'string', nullable: true, oneOf: [{ type: 'string' }] }, { type: { value: ['string'] } }],
  ])('%s', (_name, schema, expected) => {
    expect(schemaMessage(schema)).toEqual(expected);
  });

  it('round-trips a document through the wire form: properties in order, operations with their query parameters', () => {
    const doc = {
      swagger: '2.0',
      info: { title: 't', version: 'v1.35.0' },
      paths: { '/api/v1/pods': { get: { operationId: 'listPod', parameters: [{ name: 'limit', in: 'query', schema: { type: 'integer' }, uniqueItems: true }], responses: { '200': { description: 'OK', schema: { $ref: '#/definitions/PodList' } } }, 'x-kubernetes-action': 'list' } } },
      definitions: { Pod: { type: 'object', properties: { b: { type: 'string' }, a: { type: 'integer', format: 'int64', maxLength: 5 } } } },
    };
    const back = decodeOpenApiV2(encodeOpenApiV2(doc));
    expect(back).toEqual({
      swagger: '2.0',
      info: { title: 't', version: 'v1.35.0' },
      paths: {
        path: [
          {
            name: '/api/v1/pods',
            value: {
              get: {
                operation_id: 'listPod',
                parameters: [{ parameter: { non_body_parameter: { query_parameter_sub_schema: { in: 'query', name: 'limit', type: 'integer', unique_items: true } } } }],
                responses: { response_code: [{ name: '200', value: { response: { description: 'OK', schema: { schema: { _ref: '#/definitions/PodList' } } } } }] },
                vendor_extension: [{ name: 'x-kubernetes-action', value: { yaml: '"list"\n' } }],
              },
            },
          },
        ],
      },
      definitions: { additional_properties: [{ name: 'Pod', value: { type: { value: ['object'] }, properties: { additional_properties: [{ name: 'b', value: { type: { value: ['string'] } } }, { name: 'a', value: { type: { value: ['integer'] }, format: 'int64', max_length: 5 } }] } } }] },
    });
  });
});
