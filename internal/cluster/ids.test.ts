import { describe, expect, it } from 'vitest';
import { memberCommonName } from '../../raft/transport/cluster-ca.js';
import { nodeIdOf, peerCommonNameOf, REPLICA_NAME } from './ids.js';

describe('replica ids', () => {
  it('derives stable, distinct, non-zero safe-integer ids from names', () => {
    const names = ['a', 'b', 'c', 'clusterd-0', 'clusterd-1', 'clusterd-2', 'default'];
    const ids = names.map(nodeIdOf);
    expect(new Set(ids).size).toBe(names.length);
    for (const id of ids) expect(Number.isSafeInteger(id) && id > 0).toBe(true);
    expect(nodeIdOf('a')).toBe(nodeIdOf('a'));
  });
  it('names peer certificates as the Raft transport checks them', () => {
    expect(peerCommonNameOf('clusterd-1')).toBe(memberCommonName(nodeIdOf('clusterd-1')));
  });
  it.each([
    ['a', true],
    ['clusterd-0', true],
    ['-a', false],
    ['A', false],
    ['a_b', false],
    ['x'.repeat(64), false],
  ])('name %s valid: %s', (name, ok) => expect(REPLICA_NAME.test(name)).toBe(ok));
});
