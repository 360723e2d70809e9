import protobuf from 'protobufjs';
import { describe, expect, it } from 'vitest';
import { StatusError } from '../../apierrors/status.js';
import { createNaming } from '../../naming/naming.js';
import { readDataFile } from '../../schema/data-files.js';
import { allSchemaNames, kindSchemaNames, sampleObject } from '../samples/sample-objects.js';
import { builtinSchemas, SchemaIndex } from '../../schema/openapi-index.js';
import { OMITTED_ZERO_SCALARS } from './message-plans.js';
import { defaultProtoSchema, frameWatchEvent, ProtobufCodec, WatchFrameDecoder } from './protobuf-codec.js';

const cluster = createNaming('cluster');
const codec = new ProtobufCodec(cluster);
const proto = defaultProtoSchema();

const root = protobuf.Root.fromJSON(JSON.parse(readDataFile('k8s-protos.json')) as protobuf.INamespace);
root.resolveAll();

const protoSchemas = allSchemaNames().filter((n) => codec.supports(n));

/** `value` (of schema `name`) as decoding gives it back: without the zeros of OMITTED_ZERO_SCALARS. */
function withoutOmittedZeros(value: unknown, name: string | undefined): unknown {
  const node = name ? builtinSchemas.get(name) : undefined;
  if (!node || typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    if ((v === 0 || v === false) && OMITTED_ZERO_SCALARS.has(`${name}.${k}`)) continue;
    const prop = node.properties?.[k];
    const ref = prop ? SchemaIndex.refName(prop) : undefined;
    const items = prop?.items ? SchemaIndex.refName(prop.items) : undefined;
    const values = prop?.additionalProperties && typeof prop.additionalProperties === 'object' ? SchemaIndex.refName(prop.additionalProperties) : undefined;
    if (ref) out[k] = withoutOmittedZeros(v, ref);
    else if (items && Array.isArray(v)) out[k] = v.map((x) => withoutOmittedZeros(x, items));
    else if (values && typeof v === 'object' && v !== null) out[k] = Object.fromEntries(Object.entries(v).map(([mk, mv]) => [mk, withoutOmittedZeros(mv, values)]));
    else out[k] = v;
  }
  return out;
}

describe('ProtobufCodec round trip', () => {
  it('has a message for every OpenAPI schema', () => {
    expect(protoSchemas.length).toBe(allSchemaNames().length);
    expect(protoSchemas.length).toBeGreaterThan(700);
  });

  it.each(['full', 'zeros'] as const)('round-trips a %s sample of every schema through the raw message', (variant) => {
    const failures: string[] = [];
    for (const name of protoSchemas) {
      for (const seed of [1, 2]) {
        const sample: unknown = sampleObject(name, { variant, seed, naming: cluster });
        // Custom-JSON types (Time, Quantity, …) have a string/array JSON form at the top level too.
        let body = sample;
        if (typeof sample === 'object' && sample !== null && !Array.isArray(sample)) {
          const { apiVersion: _a, kind: _k, ...rest } = sample as Record<string, unknown>;
          body = rest;
        }
        try {
          const raw = codec.encodeRaw(body, name);
          const back = codec.decodeRaw(raw, name);
          expect(back).toEqual(variant === 'zeros' ? withoutOmittedZeros(body, name) : body);
        } catch (e) {
          failures.push(`${name} (seed ${seed}): ${String(e).slice(0, 300)}`);
        }
      }
    }
    expect(failures).toEqual([]);
  });

  it('round-trips every kind through the envelope with served apiVersion and kind', () => {
    for (const name of kindSchemaNames()) {
      const sample = sampleObject(name, { naming: cluster });
      const bytes = codec.encode(sample, name);
      expect([...bytes.subarray(0, 4)]).toEqual([0x6b, 0x38, 0x73, 0x00]);
      // Without a schema name the decoder finds it from the envelope's apiVersion/kind.
      const decoded = codec.decode(bytes);
      expect(decoded).toEqual(sample);
      expect(Object.keys(decoded).slice(0, 2)).toEqual(['kind', 'apiVersion']);
    }
  });

  it('writes bytes an independent protobuf implementation reads and re-encodes identically', () => {
    // protobufjs decodes with the same descriptors and re-encodes in field-number order; equal
    // bytes show our output is canonical (field order, map order, lengths) for every message.
    const mismatches: string[] = [];
    for (const name of protoSchemas) {
      const sample: unknown = sampleObject(name, { naming: cluster });
      const raw = codec.encodeRaw(sample, name);
      const type = root.lookupType(proto.messageFor(name)!);
      const decoded = type.decode(raw);
      const again = Buffer.from(type.encode(decoded).finish());
      if (!again.equals(raw)) mismatches.push(name);
    }
    expect(mismatches).toEqual([]);
  });

  it('keeps explicit zeros of pointer fields; drops those of known non-pointer omitempty fields', () => {
    const deploy = { spec: { replicas: 0, paused: false, template: { spec: { automountServiceAccountToken: false, hostNetwork: false, containers: [] } } } };
    const back = codec.decodeRaw(codec.encodeRaw(deploy, 'io.k8s.api.apps.v1.Deployment'), 'io.k8s.api.apps.v1.Deployment');
    expect(back).toEqual({ spec: { replicas: 0, template: { spec: { automountServiceAccountToken: false, containers: [] } } } });
    const set = { spec: { paused: true, minReadySeconds: 5, template: { spec: { hostNetwork: true, containers: [] } } } };
    expect(codec.decodeRaw(codec.encodeRaw(set, 'io.k8s.api.apps.v1.Deployment'), 'io.k8s.api.apps.v1.Deployment')).toEqual(set);
  });

  it('lists only existing number and boolean properties as non-pointer omitempty', () => {
    const wrong = [...OMITTED_ZERO_SCALARS].filter((entry) => {
      const at = entry.lastIndexOf('.');
      const prop = builtinSchemas.get(entry.slice(0, at))?.properties?.[entry.slice(at + 1)];
      return prop?.type !== 'boolean' && prop?.type !== 'integer';
    });
    expect(wrong).toEqual([]);
  });

  it('accepts cached item encodings in place of list items', () => {
    const pod = (n: string) => ({ metadata: { name: n } });
    const cached = codec.encodeRaw(pod('b'), 'io.k8s.api.core.v1.Pod');
    const list = { apiVersion: 'v1', kind: 'PodList', metadata: { resourceVersion: '7' }, items: [pod('a'), cached] };
    const fromObjects = codec.encode({ ...list, items: [pod('a'), pod('b')] }, 'io.k8s.api.core.v1.PodList');
    expect(codec.encode(list, 'io.k8s.api.core.v1.PodList')).toEqual(fromObjects);
    expect(codec.decode(fromObjects).items).toEqual([pod('a'), pod('b')]);
  });

  it('refuses kinds without a message (Table) and reports unsupported schemas', () => {
    expect(codec.supports('io.k8s.apimachinery.pkg.apis.meta.v1.Table')).toBe(false);
    expect(codec.supports('com.example.v1.Widget')).toBe(false);
    expect(() => codec.encode({}, 'com.example.v1.Widget')).toThrow(StatusError);
    for (const n of ['APIGroupList', 'APIGroup', 'APIVersions', 'APIResourceList', 'Status', 'WatchEvent', 'DeleteOptions']) {
      expect(codec.supports(`io.k8s.apimachinery.pkg.apis.meta.v1.${n}`)).toBe(true);
    }
  });

  it('encodes and decodes discovery documents', () => {
    const groups = {
      kind: 'APIGroupList',
      apiVersion: 'v1',
      groups: [
        {
          name: 'apps',
          versions: [{ groupVersion: 'apps/v1', version: 'v1' }],
          preferredVersion: { groupVersion: 'apps/v1', version: 'v1' },
        },
      ],
    };
    expect(codec.decode(codec.encode(groups, 'io.k8s.apimachinery.pkg.apis.meta.v1.APIGroupList'))).toEqual(groups);
    const resources = {
      kind: 'APIResourceList',
      apiVersion: 'v1',
      groupVersion: 'apps.cluster.io/v1',
      resources: [{ name: 'deployments', singularName: 'deployment', namespaced: true, kind: 'Deployment', verbs: ['get', 'list'], shortNames: ['deploy'] }],
    };
    expect(codec.decode(codec.encode(resources, 'io.k8s.apimachinery.pkg.apis.meta.v1.APIResourceList'))).toEqual(resources);
  });

  it('resolves served names (cluster naming) to schemas', () => {
    expect(codec.schemaNameFor('apps/v1', 'Deployment')).toBe('io.k8s.api.apps.v1.Deployment');
    expect(codec.schemaNameFor('rbac.authorization.cluster.io/v1', 'Role')).toBe('io.k8s.api.rbac.v1.Role');
    expect(codec.schemaNameFor('rbac.authorization.k8s.io/v1', 'Role')).toBeUndefined();
    expect(codec.schemaNameFor('meta.cluster.io/v1', 'PartialObjectMetadataList')).toBe('io.k8s.apimachinery.pkg.apis.meta.v1.PartialObjectMetadataList');
    expect(codec.schemaNameFor('v1', 'APIVersions')).toBe('io.k8s.apimachinery.pkg.apis.meta.v1.APIVersions');
    const k8s = new ProtobufCodec(createNaming('kubernetes'));
    expect(k8s.schemaNameFor('rbac.authorization.k8s.io/v1', 'Role')).toBe('io.k8s.api.rbac.v1.Role');
  });
});

describe('decoding what Go writes', () => {
  // Go writes every non-pointer field, empty or not; upstream JSON then omits the empty ones.
  it('drops empty non-pointer strings and known non-pointer zeros, keeps other numbers, booleans, required and pointer strings', () => {
    const w = new protobuf.Writer();
    const ObjectMeta = root.lookupType('k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta');
    const meta = ObjectMeta.encode(
      ObjectMeta.fromObject({ name: 'x', generateName: '', namespace: '', selfLink: '', uid: '', resourceVersion: '', generation: 0, creationTimestamp: {} }),
    ).finish();
    const Spec = root.lookupType('k8s.io.api.core.v1.PersistentVolumeClaimSpec');
    const spec = Spec.encode(Spec.fromObject({ storageClassName: '', volumeName: '', volumeMode: '' })).finish();
    w.uint32(10).bytes(meta).uint32(18).bytes(spec);
    const pvc = codec.decodeRaw(w.finish(), 'io.k8s.api.core.v1.PersistentVolumeClaim');
    expect(pvc).toEqual({ metadata: { name: 'x' }, spec: { storageClassName: '' } });
    const Container = root.lookupType('k8s.io.api.core.v1.Container');
    const c = Container.encode(Container.fromObject({ name: '', image: '', stdin: false, tty: false, stdinOnce: false })).finish();
    expect(codec.decodeRaw(c, 'io.k8s.api.core.v1.Container')).toEqual({ name: '' });
    // A pointer boolean (SecurityContext.privileged) keeps its explicit false.
    const Sc = root.lookupType('k8s.io.api.core.v1.SecurityContext');
    expect(codec.decodeRaw(Sc.encode(Sc.fromObject({ privileged: false })).finish(), 'io.k8s.api.core.v1.SecurityContext')).toEqual({ privileged: false });
  });

  it('prints an empty Time as absent and a zero IntOrString as 0', () => {
    const hex = (s: string) => Buffer.from(s.replace(/ /g, ''), 'hex');
    // ObjectMeta{creationTimestamp: (empty)}: field 8, length 0.
    expect(codec.decodeRaw(hex('42 00'), 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta')).toEqual({});
    // RollingUpdateDeployment{maxUnavailable: {type 0, intVal 0, strVal ""}}.
    expect(codec.decodeRaw(hex('0a 06 08 00 10 00 1a 00'), 'io.k8s.api.apps.v1.RollingUpdateDeployment')).toEqual({ maxUnavailable: 0 });
    // A map entry without a value: Quantity zero is "0".
    expect(codec.decodeRaw(hex('0a 05 0a 03 63 70 75'), 'io.k8s.api.core.v1.ResourceRequirements')).toEqual({ limits: { cpu: '0' } });
  });

  it('accepts packed repeated numbers', () => {
    // PodPortForwardOptions.ports (field 1, repeated int32), packed: 0a 02 50 51.
    expect(codec.decodeRaw(Buffer.from('0a025051', 'hex'), 'io.k8s.api.core.v1.PodPortForwardOptions')).toEqual({ ports: [80, 81] });
    expect(codec.decodeRaw(Buffer.from('08500851', 'hex'), 'io.k8s.api.core.v1.PodPortForwardOptions')).toEqual({ ports: [80, 81] });
  });
});

describe('special types', () => {
  const roundTrip = (schema: string, obj: Record<string, unknown>) => codec.decodeRaw(codec.encodeRaw(obj, schema), schema);

  it.each([
    ['2024-01-02T03:04:05Z', '2024-01-02T03:04:05Z'],
    ['2024-01-02T03:04:05.999Z', '2024-01-02T03:04:05Z'],
    ['2024-01-02T05:04:05+02:00', '2024-01-02T03:04:05Z'],
    ['1969-12-31T23:59:59Z', '1969-12-31T23:59:59Z'],
    ['0001-01-01T00:00:01Z', '0001-01-01T00:00:01Z'],
    ['9999-12-31T23:59:59Z', '9999-12-31T23:59:59Z'],
  ])('Time %s → %s (second precision, UTC)', (input, output) => {
    expect(roundTrip('io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta', { creationTimestamp: input })).toEqual({ creationTimestamp: output });
  });

  it('drops Go zero time on the wire', () => {
    expect(codec.encodeRaw({ creationTimestamp: '0001-01-01T00:00:00Z' }, 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta').toString('hex')).toBe('4200');
  });

  it.each([
    ['2024-01-02T03:04:05.123456Z', '2024-01-02T03:04:05.123456Z'],
    ['2024-01-02T03:04:05Z', '2024-01-02T03:04:05.000000Z'],
    ['2024-01-02T03:04:05.123456789Z', '2024-01-02T03:04:05.123456Z'],
  ])('MicroTime %s → %s', (input, output) => {
    expect(roundTrip('io.k8s.api.coordination.v1.LeaseSpec', { renewTime: input })).toEqual({ renewTime: output });
  });

  it('IntOrString, Quantity, bytes, maps and JSON values', () => {
    expect(roundTrip('io.k8s.api.apps.v1.RollingUpdateDeployment', { maxSurge: '25%', maxUnavailable: 0 })).toEqual({ maxSurge: '25%', maxUnavailable: 0 });
    expect(roundTrip('io.k8s.api.core.v1.ResourceRequirements', { limits: { memory: '1Gi', cpu: 1 } })).toEqual({ limits: { cpu: '1', memory: '1Gi' } });
    const secret = { data: { 'a.txt': Buffer.from([0, 1, 2, 255]).toString('base64'), empty: '' }, stringData: { x: '' } };
    expect(roundTrip('io.k8s.api.core.v1.Secret', secret)).toEqual(secret);
    const crv = { data: { spec: { replicas: 3 }, list: [1, 'a', null] }, revision: 2 };
    expect(roundTrip('io.k8s.api.apps.v1.ControllerRevision', crv)).toEqual(crv);
  });

  it('JSONSchemaProps or-types, renamed x-kubernetes fields and $ref', () => {
    const schema = {
      type: 'object',
      'x-kubernetes-preserve-unknown-fields': true,
      'x-kubernetes-int-or-string': false,
      $ref: '#/x',
      additionalProperties: false,
      items: [{ type: 'string' }, { type: 'integer', format: 'int64', maximum: 2.5 }],
      dependencies: { a: ['b', 'c'], d: { type: 'object' } },
      properties: { spec: { type: 'object', additionalProperties: { type: 'string' }, default: { a: 1 }, enum: ['x', 2] } },
    };
    expect(roundTrip('io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps', schema)).toEqual(schema);
  });

  it('reports values of the wrong type as a 500 naming the field', () => {
    expect(() => codec.encodeRaw({ spec: { replicas: 'three' } }, 'io.k8s.api.apps.v1.Deployment')).toThrow(/DeploymentSpec\.replicas: expected int32, got string/);
    expect(() => codec.encodeRaw({ metadata: { creationTimestamp: 'yesterday' } }, 'io.k8s.api.core.v1.Pod')).toThrow(StatusError);
    try {
      codec.encodeRaw({ metadata: { labels: ['x'] } }, 'io.k8s.api.core.v1.Pod');
    } catch (e) {
      expect((e as StatusError).code).toBe(500);
    }
  });
});

describe('watch events', () => {
  it('frames a raw WatchEvent holding an enveloped object, as upstream stream serializer', () => {
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'a', resourceVersion: '5' } };
    const objectBytes = codec.encode(pod, 'io.k8s.api.core.v1.Pod');
    const event = codec.encodeWatchEvent('ADDED', objectBytes);
    // WatchEvent{type: "ADDED" (field 1), object: RawExtension{raw (field 1)}} — no magic prefix.
    expect(event.subarray(0, 7).toString('hex')).toBe('0a05' + Buffer.from('ADDED').toString('hex'));
    expect(event[7]).toBe(0x12);
    const frame = frameWatchEvent(event);
    expect(frame.readUInt32BE(0)).toBe(event.length);

    const reader = new WatchFrameDecoder();
    const both = Buffer.concat([frame, frameWatchEvent(codec.encodeWatchEvent('DELETED', pod, 'io.k8s.api.core.v1.Pod'))]);
    const frames = [...reader.push(both.subarray(0, 10)), ...reader.push(both.subarray(10))];
    expect(frames.map((f) => codec.decodeWatchEvent(f))).toEqual([
      { type: 'ADDED', object: pod },
      { type: 'DELETED', object: pod },
    ]);
    expect(reader.buffered).toBe(0);
  });

  it('rejects oversized frames before buffering them', () => {
    const reader = new WatchFrameDecoder(1024);
    expect(() => reader.push(Buffer.from([0x7f, 0xff, 0xff, 0xff]))).toThrow(StatusError);
  });
});
