// Mutating/ValidatingWebhookConfiguration rules through the registry's validation entry, on
// defaulted objects, with upstream's messages.
import { describe, expect, it } from 'vitest';
import { formatFieldError } from '../../apierrors/field-errors.js';
import { applyDefaults } from '../../defaults/defaults.js';
import { createNaming } from '../../naming/naming.js';
import { ApiCatalog } from '../../schema/catalog.js';
import { cloneJson, type JsonObject } from '../plain-json.js';
import { validateObject } from '../validate-object.js';

const naming = createNaming('kubernetes');
const catalog = new ApiCatalog(naming);

function check(kind: 'MutatingWebhookConfiguration' | 'ValidatingWebhookConfiguration', hooks: JsonObject[], oldHooks?: JsonObject[]): string[] {
  const resource = catalog.resourceForKind('admissionregistration.k8s.io', 'v1', kind)!;
  const obj = applyDefaults(resource, { apiVersion: 'admissionregistration.k8s.io/v1', kind, metadata: { name: 'cfg' }, webhooks: cloneJson(hooks) }, naming);
  const old = oldHooks ? applyDefaults(resource, { apiVersion: 'admissionregistration.k8s.io/v1', kind, metadata: { name: 'cfg' }, webhooks: cloneJson(oldHooks) }, naming) : undefined;
  return validateObject(resource, obj, { old, naming }).map(formatFieldError);
}

const good = (extra: JsonObject = {}): JsonObject => ({
  name: 'hook.example.com',
  clientConfig: { service: { namespace: 'ns', name: 'svc', path: '/x' } },
  rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods', 'pods/status'] }],
  sideEffects: 'None',
  admissionReviewVersions: ['v1'],
  ...extra,
});

describe('webhook configuration validation', () => {
  it('accepts a well-formed configuration of each kind', () => {
    expect(check('MutatingWebhookConfiguration', [good({ reinvocationPolicy: 'IfNeeded', matchConditions: [{ name: 'not-system', expression: "!request.userInfo.username.startsWith('system:')" }] })])).toEqual([]);
    expect(check('ValidatingWebhookConfiguration', [good({ clientConfig: { url: 'https://hooks.example.com/v' } })])).toEqual([]);
  });

  it.each<[string, JsonObject[], string]>([
    ['a short name', [good({ name: 'hook' })], 'webhooks[0].name: Invalid value: "hook": should be a domain with at least three segments separated by dots'],
    ['a duplicate name', [good(), good()], 'webhooks[1].name: Duplicate value: "hook.example.com"'],
    ['no sideEffects', [good({ sideEffects: undefined })], 'webhooks[0].sideEffects: Required value'],
    ['sideEffects Some', [good({ sideEffects: 'Some' })], 'webhooks[0].sideEffects: Unsupported value: "Some": supported values: "None", "NoneOnDryRun"'],
    ['a timeout over 30s', [good({ timeoutSeconds: 31 })], 'webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds'],
    ['no review versions', [good({ admissionReviewVersions: [] })], 'webhooks[0].admissionReviewVersions: Required value: must specify one of v1, v1beta1'],
    ['only unknown review versions', [good({ admissionReviewVersions: ['v2'] })], 'webhooks[0].admissionReviewVersions: Invalid value: ["v2"]: must include at least one of v1, v1beta1'],
    ['an http URL', [good({ clientConfig: { url: 'http://x.example.com/' } })], `webhooks[0].clientConfig.url: Invalid value: "http://x.example.com/": 'https' is the only allowed URL scheme`],
    ['url and service', [good({ clientConfig: { url: 'https://x.example.com/', service: { namespace: 'a', name: 'b' } } })], 'webhooks[0].clientConfig: Required value: exactly one of url or service is required'],
    ['a bad operation', [good({ rules: [{ operations: ['GET'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }] })], 'webhooks[0].rules[0].operations[0]: Unsupported value: "GET"'],
    ['*/* with others', [good({ rules: [{ operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*/*', 'pods'] }] })], "webhooks[0].rules[0].resources: Invalid value: [\"*/*\",\"pods\"]: if '*/*' is present, must not specify other resources"],
    ['a bad failurePolicy', [good({ failurePolicy: 'Maybe' })], 'webhooks[0].failurePolicy: Unsupported value: "Maybe"'],
    ['65 match conditions', [good({ matchConditions: Array.from({ length: 65 }, (_, i) => ({ name: `c${i}`, expression: 'true' })) })], 'webhooks[0].matchConditions: Too many: 65: must have at most 64 items'],
    ['a match condition that does not compile', [good({ matchConditions: [{ name: 'c', expression: 'object.metadata.name +' }] })], 'webhooks[0].matchConditions[0].expression: Invalid value: "object.metadata.name +": compilation failed: '],
    ['a match condition that is not a bool', [good({ matchConditions: [{ name: 'c', expression: "'x'" }] })], 'must evaluate to one of bool, not string'],
    ['a bad namespace selector', [good({ namespaceSelector: { matchExpressions: [{ key: 'a', operator: 'Near' }] } })], 'webhooks[0].namespaceSelector.matchExpressions[0].operator: Invalid value: "Near": not a valid selector operator'],
  ])('refuses %s', (_what, hooks, message) => {
    expect(check('ValidatingWebhookConfiguration', hooks).join('\n')).toContain(message);
  });

  it('refuses a bad reinvocationPolicy on mutating webhooks; keeps accepting side effects an object already had', () => {
    expect(check('MutatingWebhookConfiguration', [good({ reinvocationPolicy: 'Always' })]).join('\n')).toContain('webhooks[0].reinvocationPolicy: Unsupported value: "Always"');
    expect(check('ValidatingWebhookConfiguration', [good({ sideEffects: 'Unknown', timeoutSeconds: 5 })], [good({ sideEffects: 'Unknown' })])).toEqual([]);
  });
});
