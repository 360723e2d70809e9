// Golden protobuf bytes worked out by hand from the field numbers in proto/k8s-protos.json.
// A tag byte is (field number << 3) | wire type: wire type 0 = varint, 2 = length-delimited.
import { describe, expect, it } from 'vitest';
import { createNaming } from '../../naming/naming.js';
import { ProtobufCodec } from './protobuf-codec.js';

const codec = new ProtobufCodec(createNaming('kubernetes'));
const hex = (s: string) => s.replace(/\s+|#[^\n]*/g, '');
const ascii = (s: string) => Buffer.from(s).toString('hex');

describe('golden protobuf bytes', () => {
  it('ConfigMap with a sorted map, in its envelope', () => {
    const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm', namespace: 'ns' }, data: { b: '2', a: '1' } };
    const expected = hex(`
      6b387300                      # magic "k8s\\0"
      0a 0f                         # Unknown.typeMeta (1, LEN) 15 bytes
        0a 02 ${ascii('v1')}        #   TypeMeta.apiVersion (1)
        12 09 ${ascii('ConfigMap')} #   TypeMeta.kind (2)
      12 1a                         # Unknown.raw (2, LEN) 26 bytes = ConfigMap
        0a 08                       #   ConfigMap.metadata (1) 8 bytes
          0a 02 ${ascii('cm')}      #     ObjectMeta.name (1)
          1a 02 ${ascii('ns')}      #     ObjectMeta.namespace (3)
        12 06 0a 01 61 12 01 31     #   ConfigMap.data (2) entry {key (1) "a", value (2) "1"}: keys sorted
        12 06 0a 01 62 12 01 32     #   entry {"b", "2"}
      1a 00                         # Unknown.contentEncoding (3) "", written by Go
      22 00                         # Unknown.contentType (4) ""
    `);
    const bytes = codec.encode(cm, 'io.k8s.api.core.v1.ConfigMap');
    expect(bytes.toString('hex')).toBe(expected);
    expect(codec.decode(bytes)).toEqual({ kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'cm', namespace: 'ns' }, data: { a: '1', b: '2' } });
  });

  it('Deployment with replicas 0 (a set pointer) and IntOrString values', () => {
    const d = { spec: { replicas: 0, strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: '25%' } } } };
    const expected = hex(`
      12 28                           # Deployment.spec (2) 2 + 38 = 40 bytes
        08 00                         #   DeploymentSpec.replicas (1, varint) 0: present, so written
        22 24                         #   DeploymentSpec.strategy (4) 15 + 21 = 36 bytes
          0a 0d ${ascii('RollingUpdate')} # DeploymentStrategy.type (1) 2 + 13 bytes
          12 13                       #     rollingUpdate (2) 8 + 11 = 19 bytes
            0a 06 08 00 10 01 1a 00   #       maxUnavailable (1): IntOrString{type 0, intVal 1, strVal ""}
            12 09 08 01 10 00 1a 03 ${ascii('25%')} # maxSurge (2) 9 bytes: {type 1, intVal 0, strVal "25%"}
    `);
    const bytes = codec.encodeRaw(d, 'io.k8s.api.apps.v1.Deployment');
    expect(bytes.toString('hex')).toBe(expected);
    expect(codec.decodeRaw(bytes, 'io.k8s.api.apps.v1.Deployment')).toEqual(d);
  });

  it('Lease with a MicroTime and a Time', () => {
    const lease = { spec: { holderIdentity: 'h', renewTime: '1970-01-01T00:00:01.000002Z' }, metadata: { creationTimestamp: '1970-01-01T00:02:08Z' } };
    const expected = hex(`
      0a 07                 # Lease.metadata (1) 7 bytes
        42 05 08 80 01 10 00 # ObjectMeta.creationTimestamp (8) 5 bytes: {seconds (1) 128 = 80 01, nanos (2) 0, written by Go}
      12 0a                 # Lease.spec (2) 10 bytes
        0a 01 68            #   LeaseSpec.holderIdentity (1) "h"
        22 05 08 01 10 d0 0f #  LeaseSpec.renewTime (4): {seconds 1, nanos 2000 = d0 0f}
    `);
    const bytes = codec.encodeRaw(lease, 'io.k8s.api.coordination.v1.Lease');
    expect(bytes.toString('hex')).toBe(expected);
    expect(codec.decodeRaw(bytes, 'io.k8s.api.coordination.v1.Lease')).toEqual(lease);
  });

  it('negative int32 as a ten-byte varint, nested containers', () => {
    const spec = { containers: [{ name: 'c', ports: [{ containerPort: 80 }] }], priority: -1 };
    const expected = hex(`
      12 07                 # PodSpec.containers (2) 7 bytes
        0a 01 63            #   Container.name (1) "c"
        32 02 18 50         #   Container.ports (6): ContainerPort{containerPort (3) 80}
      c8 01                 # PodSpec.priority (25, varint): tag 25<<3 = 200 = c8 01
        ff ff ff ff ff ff ff ff ff 01 # -1 sign-extended to 64 bits
    `);
    const bytes = codec.encodeRaw(spec, 'io.k8s.api.core.v1.PodSpec');
    expect(bytes.toString('hex')).toBe(expected);
    expect(codec.decodeRaw(bytes, 'io.k8s.api.core.v1.PodSpec')).toEqual(spec);
  });

  it('a length of 128 bytes or more takes two varint bytes', () => {
    const name = 'n'.repeat(200);
    // ObjectMeta{name: 200 bytes} = 0a c8 01 + 200 bytes = 203 bytes; ConfigMap.metadata = 0a cb 01 + that.
    const bytes = codec.encodeRaw({ metadata: { name } }, 'io.k8s.api.core.v1.ConfigMap');
    expect(bytes.subarray(0, 6).toString('hex')).toBe('0acb010ac801');
    expect(bytes.length).toBe(3 + 3 + 200);
  });
});
