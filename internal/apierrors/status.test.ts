import { describe, it, expect } from 'vitest';
import { errors } from './status.js';
import { fieldErrors, formatFieldError } from './field-errors.js';

describe('Status errors', () => {
  it.each([
    [errors.notFound({ group: 'apps', name: 'deployments' }, 'web'), 404, 'NotFound', 'deployments.apps "web" not found'],
    [errors.notFound({ group: '', name: 'pods' }, 'p'), 404, 'NotFound', 'pods "p" not found'],
    [errors.alreadyExists({ group: '', name: 'configmaps' }, 'c'), 409, 'AlreadyExists', 'configmaps "c" already exists'],
    [
      errors.notAcceptable(['application/json', 'application/yaml', 'application/vnd.kubernetes.protobuf']),
      406,
      'NotAcceptable',
      'only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf',
    ],
    [
      errors.conflict({ group: '', name: 'pods' }, 'p', 'the object has been modified'),
      409,
      'Conflict',
      'Operation cannot be fulfilled on pods "p": the object has been modified',
    ],
    [errors.requestEntityTooLarge(3145728), 413, 'RequestEntityTooLarge', 'Request entity too large: limit is 3145728'],
  ])('%#: code %i reason %s', (err, code, reason, message) => {
    expect(err.status).toMatchObject({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason, message });
  });

  it('lists one cause per field for Invalid', () => {
    const e = errors.invalid({ group: 'apps', name: 'Deployment' }, 'web', [
      fieldErrors.required('spec.selector'),
      fieldErrors.invalid('metadata.name', 'Web', 'must be lowercase'),
    ]);
    expect(e.status.code).toBe(422);
    expect(e.status.message).toBe(
      'Deployment.apps "web" is invalid: [spec.selector: Required value, metadata.name: Invalid value: "Web": must be lowercase]',
    );
    expect(e.status.details).toEqual({
      name: 'web',
      group: 'apps',
      kind: 'Deployment',
      causes: [
        { reason: 'FieldValueRequired', message: 'Required value', field: 'spec.selector' },
        { reason: 'FieldValueInvalid', message: 'Invalid value: "Web": must be lowercase', field: 'metadata.name' },
      ],
    });
  });

  it('formats field errors as upstream prints them', () => {
    expect(formatFieldError(fieldErrors.notSupported('spec.type', 'X', ['A', 'B']))).toBe(
      'spec.type: Unsupported value: "X": supported values: "A", "B"',
    );
    expect(formatFieldError(fieldErrors.invalid('spec.replicas', -1, 'must be greater than or equal to 0'))).toBe(
      'spec.replicas: Invalid value: -1: must be greater than or equal to 0',
    );
  });
});
