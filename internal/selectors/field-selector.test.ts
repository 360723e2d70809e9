import { describe, expect, it } from 'vitest';
import { isStatusError } from '../apierrors/status.js';
import { escapeFieldValue, FieldSelector, matchesFields, parseFieldSelector, tryParseFieldSelector } from './field-selector.js';
import {
  customFieldValue,
  fieldsetFor,
  parseFieldSelectorFor,
  selectableFieldName,
  selectableFields,
  validateFieldSelector,
  type FieldSelectableResource,
} from './field-sets.js';

describe('field selector parsing', () => {
  // [input, canonical string, requirements]
  const cases: Array<[string, string, Array<[string, string, string]>]> = [
    ['', '', []],
    [',', '', []],
    ['a=b', 'a=b', [['a', '=', 'b']]],
    ['a==b', 'a=b', [['a', '=', 'b']]],
    ['a!=b', 'a!=b', [['a', '!=', 'b']]],
    ['a=', 'a=', [['a', '=', '']]],
    ['a!=', 'a!=', [['a', '!=', '']]],
    ['=b', '=b', [['', '=', 'b']]],
    ['z=1,a=2', 'a=2,z=1', [['a', '=', '2'], ['z', '=', '1']]],
    ['a=b,,c=d', 'a=b,c=d', [['a', '=', 'b'], ['c', '=', 'd']]],
    ['a=b\\,c', 'a=b\\,c', [['a', '=', 'b,c']]],
    ['a=b\\=c', 'a=b\\=c', [['a', '=', 'b=c']]],
    ['a=b\\\\c', 'a=b\\\\c', [['a', '=', 'b\\c']]],
    ['a=b\\\\,c=d', 'a=b\\\\,c=d', [['a', '=', 'b\\'], ['c', '=', 'd']]],
    [' a = b ', ' a = b ', [[' a ', '=', ' b ']]],
    ['a=b c', 'a=b c', [['a', '=', 'b c']]],
  ];
  it.each(cases)('%j → %j', (input, canonical, reqs) => {
    const sel = parseFieldSelector(input);
    expect(sel.toString()).toBe(canonical);
    expect(sel.requirements.map((r) => [r.field, r.operator, r.value])).toEqual(reqs);
  });

  const errorCases: Array<[string, string]> = [
    ['a', "invalid selector: 'a'; can't understand 'a'"],
    ['x=1,b', "invalid selector: 'x=1,b'; can't understand 'b'"],
    ['a=b=c', 'invalid field selector: unescaped character in value: 61'],
    ['a==b=c', 'invalid field selector: unescaped character in value: 61'],
    ['a!==b', 'invalid field selector: unescaped character in value: 61'],
    ['a=b\\', 'invalid field selector: invalid escape sequence: \\'],
    ['a=b\\x', 'invalid field selector: invalid escape sequence: \\x'],
  ];
  it.each(errorCases)('rejects %j', (input, message) => {
    expect(tryParseFieldSelector(input)).toEqual({ error: message });
  });

  it('throws a 400 StatusError', () => {
    try {
      parseFieldSelector('nonsense');
      expect.unreachable();
    } catch (e) {
      expect(isStatusError(e) && e.code === 400 && e.reason === 'BadRequest').toBe(true);
    }
  });

  it('escapes values in the canonical form', () => {
    expect(escapeFieldValue('a\\b,c=d')).toBe('a\\\\b\\,c\\=d');
  });
});

describe('field selector matching', () => {
  const fields = { 'metadata.name': 'web', 'status.phase': 'Running', empty: '' };
  const cases: Array<[string, boolean]> = [
    ['', true],
    ['metadata.name=web', true],
    ['metadata.name==web', true],
    ['metadata.name=db', false],
    ['metadata.name!=db', true],
    ['metadata.name!=web', false],
    ['missing=', true],
    ['missing=x', false],
    ['missing!=x', true],
    ['empty=', true],
    ['metadata.name=web,status.phase=Running', true],
    ['metadata.name=web,status.phase!=Running', false],
  ];
  it.each(cases)('%j → %s', (sel, expected) => {
    expect(matchesFields(parseFieldSelector(sel), fields)).toBe(expected);
  });

  it('reports exact matches and emptiness', () => {
    const sel = parseFieldSelector('spec.nodeName=n1,status.phase!=Failed');
    expect(sel.requiresExactMatch('spec.nodeName')).toBe('n1');
    expect(sel.requiresExactMatch('status.phase')).toBeUndefined();
    expect(sel.isEmpty()).toBe(false);
    expect(FieldSelector.everything().isEmpty()).toBe(true);
  });
});

const res = (upstreamGroup: string, resource: string, kind: string, namespaced = true, version = 'v1'): FieldSelectableResource => ({
  group: upstreamGroup,
  upstreamGroup,
  version,
  resource,
  kind,
  namespaced,
});

const pods = res('', 'pods', 'Pod');
const nodes = res('', 'nodes', 'Node', false);
const events = res('', 'events', 'Event');
const eventsV1 = res('events.k8s.io', 'events', 'Event');
const secrets = res('', 'secrets', 'Secret');
const namespaces = res('', 'namespaces', 'Namespace', false);
const services = res('', 'services', 'Service');
const rcs = res('', 'replicationcontrollers', 'ReplicationController');
const rss = res('apps', 'replicasets', 'ReplicaSet');
const jobs = res('batch', 'jobs', 'Job');
const csrs = res('certificates.k8s.io', 'certificatesigningrequests', 'CertificateSigningRequest', false);
const slices = res('resource.k8s.io', 'resourceslices', 'ResourceSlice', false);
const ingresses = res('networking.k8s.io', 'ingresses', 'Ingress');
const crbs = res('rbac.authorization.k8s.io', 'clusterrolebindings', 'ClusterRoleBinding', false);

describe('per-kind supported fields', () => {
  // [resource, selector, error message or undefined when accepted]
  const cases: Array<[string, FieldSelectableResource, string, string | undefined]> = [
    ['pods', pods, 'spec.nodeName=n', undefined],
    ['pods', pods, 'spec.restartPolicy=Always,spec.schedulerName=s,spec.serviceAccountName=sa', undefined],
    ['pods', pods, 'spec.hostNetwork=true,status.phase=Running,status.podIP=1.2.3.4', undefined],
    ['pods', pods, 'status.podIPs=x,status.nominatedNodeName=n', undefined],
    ['pods', pods, 'metadata.name=a,metadata.namespace=b', undefined],
    ['pods', pods, 'spec.host=n', undefined],
    ['pods', pods, 'spec.containers=x', 'field label not supported: spec.containers'],
    ['nodes', nodes, 'spec.unschedulable=true,metadata.name=n', undefined],
    ['nodes', nodes, 'metadata.namespace=x', 'field label not supported: metadata.namespace'],
    ['events', events, 'involvedObject.kind=Pod,involvedObject.namespace=a,involvedObject.name=b,involvedObject.uid=u', undefined],
    ['events', events, 'involvedObject.apiVersion=v1,involvedObject.resourceVersion=1,involvedObject.fieldPath=f', undefined],
    ['events', events, 'reason=r,reportingComponent=c,source=s,type=Normal', undefined],
    ['events', events, 'message=whatever', 'field label not supported: message'],
    ['events.k8s.io', eventsV1, 'regarding.kind=Pod,reportingController=c,type=Normal', undefined],
    ['events.k8s.io', eventsV1, 'involvedObject.kind=Pod', 'field label not supported: involvedObject.kind'],
    ['secrets', secrets, 'type=Opaque', undefined],
    ['secrets', secrets, 'data=x', 'field label not supported: data'],
    ['namespaces', namespaces, 'status.phase=Active', undefined],
    ['namespaces', namespaces, 'metadata.namespace=x', 'field label not supported: metadata.namespace'],
    ['services', services, 'spec.clusterIP=None,spec.type=ClusterIP', undefined],
    ['replicationcontrollers', rcs, 'status.replicas=1', undefined],
    [
      'replicasets (apps/v1 has no conversion function)',
      rss,
      'status.replicas=1',
      '"status.replicas" is not a known field selector: only "metadata.name", "metadata.namespace"',
    ],
    ['jobs', jobs, 'status.successful=1', undefined],
    ['jobs', jobs, 'status.succeeded=1', 'field label "status.succeeded" not supported for batchv1.Job'],
    ['certificatesigningrequests', csrs, 'spec.signerName=x', undefined],
    ['resourceslices', slices, 'spec.nodeName=n,spec.driver=d', undefined],
    ['resourceslices', slices, 'spec.pool=p', 'field label not supported for resource.k8s.io/v1, Kind=ResourceSlice: spec.pool'],
    ['ingresses', ingresses, 'foo.bar=baz', '"foo.bar" is not a known field selector: only "metadata.name", "metadata.namespace"'],
    ['cluster-scoped default still accepts metadata.namespace', crbs, 'metadata.namespace=x', undefined],
  ];
  it.each(cases)('%s: %j', (_name, r, sel, message) => {
    if (message === undefined) {
      expect(() => parseFieldSelectorFor(r, sel)).not.toThrow();
      return;
    }
    try {
      parseFieldSelectorFor(r, sel);
      expect.unreachable();
    } catch (e) {
      expect(isStatusError(e)).toBe(true);
      if (isStatusError(e)) {
        expect(e.code).toBe(400);
        expect(e.status.message).toBe(message);
      }
    }
  });

  it('renames legacy and events.k8s.io labels to the field-set names', () => {
    expect(parseFieldSelectorFor(pods, 'spec.host=n1').toString()).toBe('spec.nodeName=n1');
    expect(parseFieldSelectorFor(eventsV1, 'regarding.name=p,reportingController=k').toString()).toBe(
      'involvedObject.name=p,reportingComponent=k',
    );
    expect(validateFieldSelector(pods, FieldSelector.everything()).isEmpty()).toBe(true);
  });

  it('lists the selectable fields', () => {
    expect(selectableFields(secrets)).toEqual(['metadata.name', 'metadata.namespace', 'type']);
    expect(selectableFields(ingresses)).toEqual(['metadata.name', 'metadata.namespace']);
  });
});

describe('field sets', () => {
  it('pods', () => {
    const pod = {
      metadata: { name: 'p', namespace: 'ns' },
      spec: { nodeName: 'n1', restartPolicy: 'Always', schedulerName: 'default-scheduler', serviceAccountName: 'sa', hostNetwork: true },
      status: { phase: 'Running', podIP: 'ignored', podIPs: [{ ip: '10.0.0.1' }, { ip: 'fd00::1' }], nominatedNodeName: 'n2' },
    };
    expect(fieldsetFor(pods, pod)).toEqual({
      'metadata.name': 'p',
      'metadata.namespace': 'ns',
      'spec.nodeName': 'n1',
      'spec.restartPolicy': 'Always',
      'spec.schedulerName': 'default-scheduler',
      'spec.serviceAccountName': 'sa',
      'spec.hostNetwork': 'true',
      'status.phase': 'Running',
      'status.podIP': '10.0.0.1',
      'status.nominatedNodeName': 'n2',
    });
    expect(fieldsetFor(pods, { status: { podIP: '10.9.9.9' } })['status.podIP']).toBe('10.9.9.9');
    const empty = fieldsetFor(pods, { metadata: { name: 'q' } });
    expect(empty['spec.hostNetwork']).toBe('false');
    expect(empty['status.podIP']).toBe('');
    expect(matchesFields(parseFieldSelectorFor(pods, 'spec.host=n1,status.phase!=Failed'), fieldsetFor(pods, pod))).toBe(true);
    expect(matchesFields(parseFieldSelectorFor(pods, 'status.podIPs=10.0.0.1'), fieldsetFor(pods, pod))).toBe(false);
  });

  it('cluster-scoped kinds have no metadata.namespace field', () => {
    expect(fieldsetFor(nodes, { metadata: { name: 'n' }, spec: { unschedulable: true } })).toEqual({
      'metadata.name': 'n',
      'spec.unschedulable': 'true',
    });
    const crb = fieldsetFor(crbs, { metadata: { name: 'x' } });
    expect(matchesFields(parseFieldSelectorFor(crbs, 'metadata.namespace='), crb)).toBe(true);
    expect(matchesFields(parseFieldSelectorFor(crbs, 'metadata.namespace=default'), crb)).toBe(false);
  });

  it('events in both versions share the core field names', () => {
    const core = {
      metadata: { name: 'e', namespace: 'ns' },
      involvedObject: { kind: 'Pod', name: 'p', namespace: 'ns', uid: 'u', apiVersion: 'v1', resourceVersion: '5', fieldPath: 'spec' },
      reason: 'Started',
      type: 'Normal',
      source: { component: 'kubelet' },
      reportingComponent: 'rc',
    };
    expect(fieldsetFor(events, core)).toEqual({
      'metadata.name': 'e',
      'metadata.namespace': 'ns',
      'involvedObject.kind': 'Pod',
      'involvedObject.namespace': 'ns',
      'involvedObject.name': 'p',
      'involvedObject.uid': 'u',
      'involvedObject.apiVersion': 'v1',
      'involvedObject.resourceVersion': '5',
      'involvedObject.fieldPath': 'spec',
      reason: 'Started',
      reportingComponent: 'rc',
      source: 'kubelet',
      type: 'Normal',
    });
    const v1 = { metadata: { name: 'e' }, regarding: { kind: 'Node', name: 'n' }, reportingController: 'ctl', type: 'Warning' };
    const set = fieldsetFor(eventsV1, v1);
    expect(set.source).toBe('ctl');
    expect(set.reportingComponent).toBe('ctl');
    // Stored events are core-shaped: the reporting controller is reportingComponent there, and
    // upstream's source falls back to it.
    const stored = fieldsetFor(events, { metadata: { name: 'e' }, involvedObject: { kind: 'Node' }, source: {}, reportingComponent: 'ctl' });
    expect([stored.reportingComponent, stored.source]).toEqual(['ctl', 'ctl']);
    expect(matchesFields(parseFieldSelectorFor(eventsV1, 'reportingController=ctl,source=ctl'), stored)).toBe(true);
    expect(matchesFields(parseFieldSelectorFor(eventsV1, 'regarding.kind=Node,reportingController=ctl'), set)).toBe(true);
  });

  it.each([
    [secrets, { type: 'Opaque' }, 'type', 'Opaque'],
    [namespaces, { status: { phase: 'Terminating' } }, 'status.phase', 'Terminating'],
    [services, { spec: { clusterIP: '10.0.0.1', type: 'NodePort' } }, 'spec.type', 'NodePort'],
    [rcs, { status: { replicas: 3 } }, 'status.replicas', '3'],
    [rcs, {}, 'status.replicas', '0'],
    [jobs, { status: { succeeded: 2 } }, 'status.successful', '2'],
    [csrs, { spec: { signerName: 'example.com/x' } }, 'spec.signerName', 'example.com/x'],
    [slices, { spec: { nodeName: 'n', driver: 'd' } }, 'spec.driver', 'd'],
  ] as Array<[FieldSelectableResource, object, string, string]>)('%#: %s', (r, obj, field, value) => {
    expect(fieldsetFor(r, obj)[field]).toBe(value);
  });

  it('never throws on malformed objects', () => {
    for (const bad of [undefined, null, 5, 'x', [], { metadata: 7, spec: 'x', status: { podIPs: 'nope' } }]) {
      expect(() => fieldsetFor(pods, bad)).not.toThrow();
      expect(() => fieldsetFor(events, bad)).not.toThrow();
    }
  });
});

describe('custom resource selectable fields (CRD spec.versions[].selectableFields)', () => {
  const cr = (namespaced: boolean, selectable: string[], stored: string[] = selectable): FieldSelectableResource => ({
    ...res('example.com', 'widgets', 'Widget', namespaced),
    custom: { selectableFields: selectable, storedSelectableFields: stored },
  });
  const widgets = cr(true, ['.spec.color', '.spec.size', '.spec.enabled']);
  const gadgets = cr(false, ['.spec.tier']);
  // A version declaring none, while another version of the same definition declares some.
  const widgetsV2 = cr(true, [], ['.spec.color', '.spec.size', '.spec.enabled']);

  // [name, resource, selector, error message or undefined when accepted]
  const cases: Array<[string, FieldSelectableResource, string, string | undefined]> = [
    ['declared fields', widgets, 'spec.color=red,spec.size=3,spec.enabled=true', undefined],
    ['metadata fields', widgets, 'metadata.name=a,metadata.namespace=b', undefined],
    ['undeclared field', widgets, 'spec.other=x', 'field label not supported: spec.other'],
    ['the JSON path itself is not the name', widgets, '.spec.color=red', 'field label not supported: .spec.color'],
    ['other version declares it', widgetsV2, 'spec.color=red', 'field label not supported: spec.color'],
    ['cluster-scoped: declared field', gadgets, 'spec.tier=gold', undefined],
    ['cluster-scoped: no metadata.namespace', gadgets, 'metadata.namespace=', 'field label not supported: metadata.namespace'],
    ['no selectable fields', cr(true, []), 'spec.color=x', 'field label not supported: spec.color'],
  ];
  it.each(cases)('%s: %j', (_name, r, sel, message) => {
    if (message === undefined) {
      expect(() => parseFieldSelectorFor(r, sel)).not.toThrow();
      return;
    }
    try {
      parseFieldSelectorFor(r, sel);
      expect.unreachable();
    } catch (e) {
      expect(isStatusError(e) && e.code === 400 && e.status.message === message).toBe(true);
    }
  });

  // [object, field, value in the field set]
  const values: Array<[object, string, string]> = [
    [{ spec: { color: 'red' } }, 'spec.color', 'red'],
    [{ spec: { size: 10 } }, 'spec.size', '10'],
    [{ spec: { enabled: true } }, 'spec.enabled', 'true'],
    [{ spec: { enabled: false } }, 'spec.enabled', 'false'],
    [{ spec: {} }, 'spec.color', ''],
    [{ spec: { color: null } }, 'spec.color', ''],
    [{}, 'spec.size', ''],
    [{ spec: 'x' }, 'spec.color', ''],
  ];
  it.each(values)('field set of %j has %s=%j', (obj, field, value) => {
    const set = fieldsetFor(widgets, { metadata: { name: 'w', namespace: 'ns' }, ...obj });
    expect(set[field]).toBe(value);
    expect(set['metadata.namespace']).toBe('ns');
  });

  it('stores every version’s fields, and matches them', () => {
    const set = fieldsetFor(widgetsV2, { metadata: { name: 'w', namespace: 'ns' }, spec: { color: 'red', size: 3 } });
    expect(set).toEqual({ 'metadata.name': 'w', 'metadata.namespace': 'ns', 'spec.color': 'red', 'spec.size': '3', 'spec.enabled': '' });
    expect(matchesFields(parseFieldSelectorFor(widgets, 'spec.color=red,spec.size!=4'), set)).toBe(true);
    expect(matchesFields(parseFieldSelectorFor(widgets, 'spec.enabled=true'), set)).toBe(false);
    expect(fieldsetFor(gadgets, { metadata: { name: 'g' }, spec: { tier: 'gold' } })).toEqual({ 'metadata.name': 'g', 'spec.tier': 'gold' });
  });

  it('bracketed path segments', () => {
    expect(customFieldValue({ spec: { 'a.b': 'x' } }, ".spec['a.b']")).toBe('x');
    expect(selectableFieldName('.spec.color')).toBe('spec.color');
  });
});
