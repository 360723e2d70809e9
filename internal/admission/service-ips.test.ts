// Tests for the service address allocator: reservations bridge concurrent creates, are given
// back when a write is not stored, and end on their own when the store never shows the service.
import { describe, expect, it } from 'vitest';
import type { AdmissionRequest, JsonObject } from './admission.js';
import { serviceAllocator, type ServiceAllocations } from './service-ips.js';
import type { ResourceInfo } from '../schema/catalog.js';
import type { UserInfo } from '../auth/user.js';

const SERVICES = { group: '', resource: 'services' } as unknown as ResourceInfo;
const USER: UserInfo = { username: 'admin', groups: [] } as unknown as UserInfo;

function create(name: string, spec: JsonObject = {}): AdmissionRequest {
  return { operation: 'CREATE', resource: SERVICES, subresource: '', namespace: 'default', name, object: { metadata: { name }, spec }, oldObject: undefined, user: USER, dryRun: false };
}

describe('service address allocator', () => {
  it('two creates before either is stored get different addresses; a released one is free again', async () => {
    const stored: ServiceAllocations = { clusterIPs: new Set(), nodePorts: new Set() };
    const plugin = serviceAllocator(() => stored);
    const a = create('a', { clusterIP: '10.96.0.50' });
    await plugin.admit!(a);
    expect(() => plugin.admit!(create('b', { clusterIP: '10.96.0.50' }))).toThrow(/already allocated/);
    plugin.release!(a);
    await plugin.admit!(create('c', { clusterIP: '10.96.0.50' }));
  });

  it('a reservation whose service the store never shows (deleted at once) ends after a minute', async () => {
    const stored: ServiceAllocations = { clusterIPs: new Set(), nodePorts: new Set() };
    let clock = 1_000_000;
    const plugin = serviceAllocator(() => stored, () => clock);
    await plugin.admit!(create('a', { type: 'NodePort', clusterIP: '10.96.0.60', ports: [{ port: 80, nodePort: 30100 }] }));
    clock += 30_000;
    expect(() => plugin.admit!(create('b', { clusterIP: '10.96.0.60' }))).toThrow(/already allocated/);
    clock += 31_000;
    const again = create('c', { type: 'NodePort', clusterIP: '10.96.0.60', ports: [{ port: 80, nodePort: 30100 }] });
    await plugin.admit!(again);
    expect((again.object!.spec as JsonObject).clusterIP).toBe('10.96.0.60');
  });
});
