// The collector finalizers a delete sets (upstream's deletionFinalizersForGarbageCollection and
// the per-resource DefaultGarbageCollectionPolicy), as pure functions.
import { describe, expect, it } from 'vitest';
import { defaultGarbageCollectionPolicy, deletionFinalizers, type DeleteOptions, type GarbageCollectionPolicy } from './delete-options.js';

type Opts = Pick<DeleteOptions, 'orphanDependents' | 'propagationPolicy'>;

describe('deletionFinalizers', () => {
  it.each<[string, string[], Opts, GarbageCollectionPolicy, string[], boolean]>([
    ['no policy: nothing', [], {}, 'delete', [], false],
    ['Background: nothing', [], { propagationPolicy: 'Background' }, 'delete', [], false],
    ['Foreground', [], { propagationPolicy: 'Foreground' }, 'delete', ['foregroundDeletion'], true],
    ['Orphan', [], { propagationPolicy: 'Orphan' }, 'delete', ['orphan'], true],
    ['legacy orphanDependents=true', [], { orphanDependents: true }, 'delete', ['orphan'], true],
    ['legacy orphanDependents=false on an orphan-default kind', [], { orphanDependents: false }, 'orphan', [], false],
    ['orphan-default kind without a policy', [], {}, 'orphan', ['orphan'], true],
    ['orphan-default kind with Background', [], { propagationPolicy: 'Background' }, 'orphan', [], false],
    ['other finalizers are kept, in order', ['a', 'b'], { propagationPolicy: 'Foreground' }, 'delete', ['a', 'b', 'foregroundDeletion'], true],
    ['foreground switched to orphan', ['a', 'foregroundDeletion'], { propagationPolicy: 'Orphan' }, 'delete', ['a', 'orphan'], true],
    ['orphan switched to foreground', ['orphan', 'a'], { propagationPolicy: 'Foreground' }, 'delete', ['a', 'foregroundDeletion'], true],
    ['orphan dropped by Background', ['orphan'], { propagationPolicy: 'Background' }, 'delete', [], true],
    ['no policy keeps what is there', ['foregroundDeletion'], {}, 'orphan', ['foregroundDeletion'], false],
    ['same policy again: unchanged', ['orphan', 'x'], { propagationPolicy: 'Orphan' }, 'delete', ['orphan', 'x'], false],
    ['unsupported kind (events): never', [], { propagationPolicy: 'Foreground' }, 'unsupported', [], false],
  ])('%s', (_name, existing, options, policy, want, changed) => {
    expect(deletionFinalizers(existing, options, policy)).toEqual({ finalizers: want, changed });
  });
});

describe('defaultGarbageCollectionPolicy', () => {
  it.each<[string, string, string, GarbageCollectionPolicy]>([
    ['/replicationcontrollers', '', 'v1', 'orphan'],
    ['apps/deployments', 'apps', 'v1', 'delete'],
    ['apps/deployments', 'apps', 'v1beta1', 'orphan'],
    ['apps/deployments', 'extensions', 'v1beta1', 'orphan'],
    ['apps/replicasets', 'apps', 'v1beta2', 'orphan'],
    ['apps/replicasets', 'apps', 'v1beta1', 'delete'],
    ['apps/daemonsets', 'apps', 'v1beta2', 'orphan'],
    ['apps/statefulsets', 'apps', 'v1beta1', 'orphan'],
    ['apps/statefulsets', 'apps', 'v1', 'delete'],
    ['/configmaps', '', 'v1', 'delete'],
    ['/events', 'events.k8s.io', 'v1', 'unsupported'],
    ['/events', '', 'v1', 'unsupported'],
    ['example.com/gadgets', 'example.com', 'v1', 'delete'],
  ])('%s through %s/%s: %s', (storage, upstreamGroup, version, want) => {
    expect(defaultGarbageCollectionPolicy(storage, { upstreamGroup, version })).toBe(want);
  });
});
