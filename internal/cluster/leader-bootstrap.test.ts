import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger } from '../log/logger.js';
import { LevelRevisionStore } from '../store/revision-store.js';
import { BOOTSTRAP_KEY, LeaderBootstrap, type BootstrapRecord } from './leader-bootstrap.js';

// Replicas of one cluster see the same applied state: here they share one real store, and
// leadership is an event source each test moves by hand (the Raft replicator's onLeadership).
class Leadership {
  private readonly listeners = new Set<(leader: boolean) => void>();
  constructor(private leader = false) {}
  onLeadership(l: (leader: boolean) => void): () => void {
    this.listeners.add(l);
    l(this.leader);
    return () => this.listeners.delete(l);
  }
  set(leader: boolean): void {
    this.leader = leader;
    for (const l of this.listeners) l(leader);
  }
}

let dir: string;
let store: LevelRevisionStore;
const running: LeaderBootstrap[] = [];

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'clusterd-leader-bootstrap-'));
  store = await LevelRevisionStore.open({ storage: 'leveldb', path: join(dir, 'store') });
});
afterEach(async () => {
  for (const b of running.splice(0)) b.stop();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

function replica(name: string, leadership: Leadership, digest = 'd1', skewGraceMs = 60_000) {
  const reconciled: string[] = [];
  const b = new LeaderBootstrap({
    store,
    elector: leadership,
    name,
    digest,
    reconcile: async () => void reconciled.push(name),
    log: silentLogger,
    pollMs: 10,
    skewGraceMs,
  });
  running.push(b);
  return { b, reconciled };
}

const record = async (): Promise<BootstrapRecord | undefined> => {
  const kv = await store.get(BOOTSTRAP_KEY);
  return kv ? (JSON.parse(Buffer.from(kv.value).toString()) as BootstrapRecord) : undefined;
};

describe('LeaderBootstrap', () => {
  it('the leader reconciles and records its digest; a follower of the same build completes on the record without reconciling', async () => {
    const a = replica('a', new Leadership(true));
    const b = replica('b', new Leadership(false));
    const followerDone = b.b.start();
    await a.b.start();
    await followerDone;
    expect(a.reconciled).toEqual(['a']);
    expect(b.reconciled).toEqual([]);
    expect(await record()).toMatchObject({ digest: 'd1', by: 'a' });
    expect(b.b.runs).toEqual({ asLeader: 0, forSkew: 0 });
  });

  it('a follower waits while no leader has reconciled, and reconciles when leadership moves to it', async () => {
    const la = new Leadership(false);
    const b = replica('b', la);
    let done = false;
    const started = b.b.start().then(() => (done = true));
    await new Promise((r) => setTimeout(r, 100));
    expect(done).toBe(false);
    expect(b.reconciled).toEqual([]);
    la.set(true);
    await started;
    expect(b.reconciled).toEqual(['b']);
    expect(await record()).toMatchObject({ digest: 'd1', by: 'b' });
    // Every leadership gained reconciles again (a removed bootstrap object comes back).
    la.set(false);
    la.set(true);
    await new Promise((r) => setTimeout(r, 50));
    expect(b.reconciled).toEqual(['b', 'b']);
  });

  it('a follower of another build reconciles itself after the grace, and does not overwrite the leader\'s record', async () => {
    const a = replica('a', new Leadership(true), 'old');
    await a.b.start();
    const b = replica('b', new Leadership(false), 'new', 100);
    await b.b.start();
    expect(b.reconciled).toEqual(['b']);
    expect(b.b.runs).toEqual({ asLeader: 0, forSkew: 1 });
    expect(await record()).toMatchObject({ digest: 'old', by: 'a' });
  });

  it('a leader whose reconcile fails keeps the replica waiting (not done), and the next leader completes it', async () => {
    const la = new Leadership(true);
    let fail = true;
    const a = new LeaderBootstrap({
      store,
      elector: la,
      name: 'a',
      digest: 'd1',
      reconcile: async () => {
        if (fail) throw new Error('lost leadership');
      },
      log: silentLogger,
      pollMs: 10,
      skewGraceMs: 60_000,
    });
    running.push(a);
    let done = false;
    const started = a.start().then(() => (done = true));
    await new Promise((r) => setTimeout(r, 50));
    expect(done).toBe(false);
    expect(await record()).toBeUndefined();
    const c = replica('c', new Leadership(true));
    await c.b.start();
    fail = false;
    await started;
    expect(done).toBe(true);
    expect(await record()).toMatchObject({ by: 'c' });
  });
});
