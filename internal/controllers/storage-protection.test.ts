// The pvc-protection controller's filter of pod bytes (mayUseClaims): never false for a pod
// whose volumes name a claim (claimsOf would find it), false for pods without claim volumes,
// including pods whose bytes mention a claim member only outside (before) their volumes.
import { describe, expect, it } from 'vitest';
import { claimsOf, mayUseClaims } from './storage-protection.js';
import type { Obj } from './objects.js';

const pod = (metadata: Obj, spec: Obj): Obj => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'ns', ...metadata }, spec });
const container = { name: 'c', image: 'i' };

const cases: { name: string; pod: Obj; may: boolean }[] = [
  { name: 'no volumes', pod: pod({}, { containers: [container] }), may: false },
  { name: 'volumes without claims', pod: pod({}, { containers: [container], volumes: [{ name: 'v', emptyDir: {} }] }), may: false },
  { name: 'a persistentVolumeClaim volume', pod: pod({}, { containers: [container], volumes: [{ name: 'v', persistentVolumeClaim: { claimName: 'c1' } }] }), may: true },
  { name: 'an ephemeral volume', pod: pod({}, { containers: [container], volumes: [{ name: 'v', ephemeral: { volumeClaimTemplate: { spec: {} } } }] }), may: true },
  { name: 'claim members only in an annotation before the volumes', pod: pod({ annotations: { x: '"persistentVolumeClaim":', '"ephemeral":': 'y' }, labels: { persistentVolumeClaim: 'z' } }, { containers: [container], volumes: [{ name: 'v', emptyDir: {} }] }), may: false },
  { name: 'claim members only in an annotation, no volumes', pod: pod({ annotations: { persistentVolumeClaim: 'x', ephemeral: 'y' } }, { containers: [container] }), may: false },
  { name: '"volumes": mentioned before the real volumes', pod: pod({ annotations: { volumes: 'x' } }, { containers: [container], volumes: [{ name: 'v', persistentVolumeClaim: { claimName: 'c1' } }] }), may: true },
  { name: 'volumes before containers', pod: pod({}, { volumes: [{ name: 'v', ephemeral: {} }], containers: [container] }), may: true },
];

describe('mayUseClaims', () => {
  it.each(cases)('$name', ({ pod: p, may }) => {
    const bytes = Buffer.from(JSON.stringify(p), 'utf8');
    expect(mayUseClaims({ bytes })).toBe(may);
    // Never false where claimsOf finds a claim (the filter only spares parses).
    if (claimsOf(p).length > 0) expect(mayUseClaims({ bytes })).toBe(true);
  });
});
