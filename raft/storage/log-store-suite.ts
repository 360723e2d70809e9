// raft/storage/log-store-suite.ts owns the conformance suite every DurableLogStore backend must
// pass (one suite, many backends). A backend supplies a harness whose stores all see the same
// underlying data, so that "close then open a new store" is a restart.

import { describe, expect, it } from 'vitest';
import { EntryType, type ConfState, type Entry, type Snapshot } from '../types.js';
import { isLogStoreError, type DurableLogStore, type LogSaveBatch } from './log-store.js';

export interface LogStoreHarness {
  /** A new store over the harness's data (not yet opened). */
  store(): DurableLogStore;
  /** Removes the data; called once per test. */
  cleanup(): Promise<void>;
  /**
   * Optional: leaves the data as a crash of the machine would (the current store is abandoned,
   * not closed), for the model test to check that nothing acknowledged is lost.
   */
  crash?(): Promise<void>;
}

const CONF: ConfState = { voters: [1, 2, 3], learners: [], votersOutgoing: [], learnersNext: [], autoLeave: false };

export function ent(index: number, term: number, data = `${index}@${term}`): Entry {
  return { index, term, type: EntryType.Normal, data: new TextEncoder().encode(data) };
}

export function snap(index: number, term: number, data = `image@${index}`): Snapshot {
  return { metadata: { index, term, confState: CONF }, data: new TextEncoder().encode(data) };
}

function range(lo: number, hi: number, term: number): Entry[] {
  const out: Entry[] = [];
  for (let i = lo; i <= hi; i++) out.push(ent(i, term));
  return out;
}

export function runLogStoreSuite(name: string, makeHarness: () => Promise<LogStoreHarness>): void {
  describe(`DurableLogStore conformance: ${name}`, () => {
    async function withStore(fn: (s: DurableLogStore, restart: (crash?: boolean) => Promise<DurableLogStore>) => Promise<void>): Promise<void> {
      const h = await makeHarness();
      let s = h.store();
      await s.open();
      /** With `crash` (and a harness that can): the store is abandoned instead of closed. */
      const restart = async (crash = false): Promise<DurableLogStore> => {
        if (crash && h.crash) await h.crash();
        else await s.close();
        s = h.store();
        return s;
      };
      try {
        await fn(s, restart);
      } finally {
        await s.close();
        await h.cleanup();
      }
    }

    const expectCode = async (p: Promise<unknown>, code: string): Promise<void> => {
      const err = await p.then(
        () => null,
        (e: unknown) => e,
      );
      expect(isLogStoreError(err), `expected ${code}, got ${String(err)}`).toBe(true);
      expect((err as { code: string }).code).toBe(code);
    };

    it('starts empty', async () => {
      await withStore(async (_s, restart) => {
        const state = await (await restart()).open();
        expect(state).toEqual({ hardState: { term: 0, vote: 0, commit: 0 }, snapshot: null, entries: [] });
      });
    });

    it('persists entries and hard state across a restart', async () => {
      await withStore(async (s, restart) => {
        await s.save({ entries: range(1, 3, 1), hardState: { term: 1, vote: 2, commit: 2 } });
        await s.save({ entries: range(4, 5, 1), hardState: { term: 1, vote: 2, commit: 5 } });
        const state = await (await restart()).open();
        expect(state.entries).toEqual(range(1, 5, 1));
        expect(state.hardState).toEqual({ term: 1, vote: 2, commit: 5 });
      });
    });

    it('overwrites a conflicting suffix and discards what follows it', async () => {
      await withStore(async (s, restart) => {
        await s.save({ entries: range(1, 6, 1), hardState: { term: 1, vote: 1, commit: 2 } });
        await s.save({ entries: range(3, 4, 2), hardState: { term: 2, vote: 0, commit: 2 } });
        const s2 = await restart();
        const state = await s2.open();
        expect(state.entries).toEqual([...range(1, 2, 1), ...range(3, 4, 2)]);
        // Appending after the truncation point continues the log.
        await s2.save({ entries: [ent(5, 2)] });
        expect((await (await restart()).open()).entries.map((e) => e.index)).toEqual([1, 2, 3, 4, 5]);
      });
    });

    it('rejects a gap, decreasing terms and a commit beyond the end, writing nothing', async () => {
      await withStore(async (s, restart) => {
        await s.save({ entries: range(1, 2, 2) });
        await expectCode(s.save({ entries: [ent(4, 2)] }), 'LOG_INVARIANT');
        await expectCode(s.save({ entries: [ent(3, 1)] }), 'LOG_INVARIANT');
        await expectCode(s.save({ entries: [ent(3, 2), ent(5, 2)] }), 'LOG_INVARIANT');
        await expectCode(s.save({ entries: [ent(3, 2)], hardState: { term: 2, vote: 0, commit: 4 } }), 'LOG_INVARIANT');
        // A committed entry is never overwritten.
        await s.save({ entries: [], hardState: { term: 2, vote: 0, commit: 2 } });
        await expectCode(s.save({ entries: [ent(2, 3)] }), 'LOG_INVARIANT');
        const state = await (await restart()).open();
        expect(state.entries).toEqual(range(1, 2, 2));
        expect(state.hardState.commit).toBe(2);
      });
    });

    it('installs a snapshot that matches the log and keeps the entries after it (Raft §7)', async () => {
      await withStore(async (s, restart) => {
        await s.save({ entries: range(1, 10, 1), hardState: { term: 1, vote: 1, commit: 8 } });
        await s.save({ entries: [], snapshot: snap(6, 1) });
        const s2 = await restart();
        const state = await s2.open();
        expect(state.snapshot).toEqual(snap(6, 1));
        expect(state.entries).toEqual(range(7, 10, 1));
        // Entries up to the snapshot are still on disk until compacted; compaction keeps the rest.
        await s2.compact(6);
        expect((await (await restart()).open()).entries).toEqual(range(7, 10, 1));
      });
    });

    it('a snapshot that does not match the log replaces the whole log', async () => {
      await withStore(async (s, restart) => {
        await s.save({ entries: range(1, 4, 1), hardState: { term: 1, vote: 1, commit: 2 } });
        await s.save({ snapshot: snap(20, 3), entries: [ent(21, 3)], hardState: { term: 3, vote: 0, commit: 20 } });
        const state = await (await restart()).open();
        expect(state.snapshot?.metadata.index).toBe(20);
        expect(state.entries).toEqual([ent(21, 3)]);
        expect(state.hardState).toEqual({ term: 3, vote: 0, commit: 20 });
      });
    });

    it('compacts a long log while saves go on, leaving a contiguous log after the snapshot', async () => {
      await withStore(async (s, restart) => {
        await s.save({ entries: range(1, 2000, 1), hardState: { term: 1, vote: 1, commit: 2000 } });
        await s.save({ entries: [], snapshot: snap(1800, 1) });
        // The driver keeps persisting Readies while a compaction runs.
        const compaction = s.compact(1700);
        const saves = [s.save({ entries: range(2001, 2002, 1) }), s.save({ entries: [ent(2003, 2)], hardState: { term: 2, vote: 0, commit: 2003 } })];
        await Promise.all([compaction, ...saves]);
        const state = await (await restart()).open();
        expect(state.snapshot?.metadata.index).toBe(1800);
        expect(state.entries.map((e) => e.index)).toEqual(range(1801, 2003, 1).map((e) => e.index));
        expect(state.hardState).toEqual({ term: 2, vote: 0, commit: 2003 });
      });
    });

    it('refuses an older snapshot and compaction past the snapshot', async () => {
      await withStore(async (s) => {
        await s.save({ snapshot: snap(10, 2), entries: [], hardState: { term: 2, vote: 0, commit: 10 } });
        await expectCode(s.save({ snapshot: snap(9, 2), entries: [] }), 'LOG_INVARIANT');
        await s.save({ entries: range(11, 12, 2) });
        await expectCode(s.compact(11), 'LOG_INVARIANT');
        await s.compact(10);
      });
    });

    it('drops entries the snapshot already covers', async () => {
      await withStore(async (s, restart) => {
        await s.save({ snapshot: snap(5, 1), entries: range(4, 7, 1) });
        expect((await (await restart()).open()).entries).toEqual(range(6, 7, 1));
      });
    });

    it('runs saves in call order', async () => {
      await withStore(async (s, restart) => {
        const pending: Promise<void>[] = [];
        for (let i = 1; i <= 50; i++) pending.push(s.save({ entries: [ent(i, 1)], hardState: { term: 1, vote: 1, commit: i - 1 } }));
        await Promise.all(pending);
        const state = await (await restart()).open();
        expect(state.entries.length).toBe(50);
        expect(state.hardState.commit).toBe(49);
      });
    });

    it('rejects use after close with LOG_CLOSED', async () => {
      const h = await makeHarness();
      const s = h.store();
      await s.open();
      await s.close();
      await s.close();
      await expectCode(s.save({ entries: [ent(1, 1)] }), 'LOG_CLOSED');
      await h.cleanup();
    });

    it('matches a naive model under random operations and restarts', async () => {
      await withStore(async (first, restart) => {
        let s = first;
        let x = 12345;
        const rand = (n: number): number => {
          x = (x * 1103515245 + 12345) % 2147483648;
          return x % n;
        };
        // The model: a snapshot (index, term) and the entries after it.
        let model = { snapIndex: 0, snapTerm: 0, entries: [] as Entry[], commit: 0, term: 1 };
        const lastIndex = (): number => model.snapIndex + model.entries.length;
        const termOf = (i: number): number => (i === model.snapIndex ? model.snapTerm : model.entries[i - model.snapIndex - 1]!.term);
        for (let step = 0; step < 150; step++) {
          const op = rand(10);
          let batch: LogSaveBatch;
          if (op < 6) {
            // Append, possibly overwriting an uncommitted suffix with a higher term.
            const from = Math.max(model.commit + 1, lastIndex() + 1 - rand(3));
            if (from <= lastIndex()) model.term += 1;
            const n = 1 + rand(4);
            const entries = range(from, from + n - 1, model.term);
            model.entries = [...model.entries.slice(0, from - model.snapIndex - 1), ...entries];
            model.commit = Math.min(lastIndex(), model.commit + rand(3));
            batch = { entries, hardState: { term: model.term, vote: 1, commit: model.commit } };
          } else if (op < 8 && model.commit > model.snapIndex) {
            // A local snapshot at the commit index (matches the log, keeps what follows).
            const at = model.commit;
            const t = termOf(at);
            model.entries = model.entries.slice(at - model.snapIndex);
            model = { ...model, snapIndex: at, snapTerm: t };
            batch = { entries: [], snapshot: snap(at, t) };
          } else if (op === 8) {
            // A leader's snapshot ahead of the log: replaces it.
            model.term += 1;
            const at = lastIndex() + 1 + rand(5);
            model = { ...model, snapIndex: at, snapTerm: model.term, entries: [], commit: at };
            batch = { entries: [], snapshot: snap(at, model.term), hardState: { term: model.term, vote: 0, commit: at } };
          } else {
            await s.compact(model.snapIndex);
            continue;
          }
          await s.save(batch);
          if (rand(5) === 0) {
            s = await restart(rand(2) === 0);
            const state = await s.open();
            expect(state.entries).toEqual(model.entries);
            expect(state.snapshot?.metadata.index ?? 0).toBe(model.snapIndex);
            expect(state.hardState.commit).toBe(model.commit);
          }
        }
      });
    });
  });
}
