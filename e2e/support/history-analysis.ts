// e2e/support/history-analysis owns judging what the cluster e2e tests recorded: the load
// processes' operations (load-protocol's OpRecord), the watchers' streams (retrying-watcher) and
// the final state every replica lists. It answers:
//   - lost writes: an acknowledged write whose key ends at an older version, or that a watcher
//     covering its version never delivered;
//   - writes reported as certainly failed (503, 429, refused) whose value was seen anyway;
//   - one write seen with two resourceVersions (replicas disagreeing on a write's version);
//   - linearizability per key (raft/linearizability's checker with rv-register-model), where
//     a write of unknown outcome is resolved by what was observed: its value was seen (by a
//     read, a watch, the final lists, or as the version an acknowledged update named), so it was
//     applied before the first such observation returned; or its value was never seen by any
//     watcher, which see every change, so it was not applied. This only narrows what the
//     checker may assume, so a history linearizable after it is linearizable without it;
//   - each watcher: resourceVersions strictly increasing over all its streams (in order, no
//     event twice, no time travel across resumes), ADDED/MODIFIED/DELETED consistent with the
//     state, every known write in its range delivered, its final state the replicas' final
//     state, no 410 and no relist. Test-only.

import { checkOperations, type CheckResult } from '../../raft/linearizability/index.js';
import type { OpRecord } from './load-protocol.js';
import type { WatchLog } from './retrying-watcher.js';
import { rvRegisterModel, type RegisterInput, type RegisterOperation, type RegisterOutput } from './rv-register-model.js';

export interface FinalObject {
  value: string;
  rv: string;
  uid: string;
}

export interface FinalList {
  replica: string;
  call: number;
  ret: number;
  rv: string;
  items: Map<string, FinalObject>;
}

export interface HistoryCounts {
  operations: number;
  reads: number;
  writes: number;
  acknowledged: number;
  conflicts: number;
  alreadyExists: number;
  failedCertainly: number;
  /** Creates answered 404 for their namespace (not 503) while no leader could confirm it. */
  refused404: number;
  unknown: number;
  unknownApplied: number;
  unknownNotApplied: number;
  readsFailed: number;
  lost: number;
}

export interface HistoryAnalysis {
  counts: HistoryCounts;
  problems: string[];
  linearizability: CheckResult<RegisterInput, RegisterOutput>['result'];
  checkerSteps: number;
  /** For an illegal history: the failed key's operations, described. */
  illegalDetail?: string;
  /** Status codes and reasons of writes that were not acknowledged, for the report. */
  outcomes: Record<string, number>;
}

const num = (rv: string | undefined): number => Number(rv ?? NaN);

export function analyzeHistory(records: OpRecord[], finals: FinalList[], watchers: WatchLog[]): HistoryAnalysis {
  const problems: string[] = [];
  const writes = records.filter((r) => r.op !== 'get');
  const reads = records.filter((r) => r.op === 'get');
  const outcomes: Record<string, number> = {};
  for (const w of writes) {
    if (w.out === 'ok') continue;
    const k = `${w.op} ${w.out} ${w.status ?? w.why ?? ''}${w.status ? ` ${(w.why ?? '').split(' ')[0]}` : ''}`;
    outcomes[k] = (outcomes[k] ?? 0) + 1;
  }

  // value → version, and the first time anyone saw the value.
  const versionOf = new Map<string, string>();
  const firstSeen = new Map<string, number>();
  const keyOf = new Map<string, string>();
  const see = (key: string, value: string, rv: string | undefined, t: number, where: string): void => {
    if (!value || rv === undefined) return;
    const known = versionOf.get(value);
    if (known === undefined) versionOf.set(value, rv);
    else if (known !== rv) problems.push(`write ${value} of ${key} seen at resourceVersion ${known} and at ${rv} (${where})`);
    const k = keyOf.get(value);
    if (k === undefined) keyOf.set(value, key);
    else if (k !== key) problems.push(`value ${value} seen under ${k} and ${key}`);
    const f = firstSeen.get(value);
    if (f === undefined || t < f) firstSeen.set(value, t);
  };
  for (const r of reads) if (r.out === 'ok') see(r.key, r.value ?? '', r.rv, r.ret, `read from ${r.replica}`);
  for (const w of writes) {
    if (w.out !== 'ok') continue;
    if (w.value !== w.v) problems.push(`write ${w.v} of ${w.key} acknowledged with data ${String(w.value)}`);
    see(w.key, w.v!, w.rv, w.ret, `acknowledged by ${w.replica}`);
  }
  for (const wt of watchers) for (const e of wt.events) if (e.type !== 'DELETED') see(e.name, e.value, e.rv, e.t, `watcher ${wt.id} via ${e.replica}`);
  for (const f of finals) for (const [key, o] of f.items) see(key, o.value, o.rv, f.ret, `final list of ${f.replica}`);
  // An acknowledged update names the version it replaced: that write was applied before it returned.
  const valueAt = new Map<string, string>();
  for (const [v, rv] of versionOf) valueAt.set(`${keyOf.get(v)}@${rv}`, v);
  for (const w of writes) {
    if (w.op !== 'update' || (w.out !== 'ok' && w.out !== 'unknown')) continue;
    const prior = valueAt.get(`${w.key}@${w.e}`);
    if (prior === undefined) problems.push(`update ${w.v} of ${w.key} named resourceVersion ${String(w.e)} that no one saw`);
    else if (w.out === 'ok' && (firstSeen.get(prior) ?? Infinity) > w.ret) firstSeen.set(prior, w.ret);
  }

  for (const w of writes) {
    if ((w.out === 'failed' || w.out === 'refused') && versionOf.has(w.v!)) {
      problems.push(`write ${w.v} of ${w.key} answered ${w.status ?? w.why} (certainly not applied) but seen at resourceVersion ${versionOf.get(w.v!)}`);
    }
  }

  const ops: RegisterOperation[] = [];
  let unknownApplied = 0;
  let unknownNotApplied = 0;
  for (const r of reads) {
    if (r.out === 'ok') ops.push({ clientId: r.c, input: { op: 'get', key: r.key }, call: r.call, output: { kind: 'ok', value: r.value ?? '', rv: r.rv }, return: r.ret });
    else if (r.out === 'notfound') ops.push({ clientId: r.c, input: { op: 'get', key: r.key }, call: r.call, output: { kind: 'notfound' }, return: r.ret });
  }
  for (const w of writes) {
    const input: RegisterInput = w.op === 'create' ? { op: 'create', key: w.key, value: w.v! } : { op: 'update', key: w.key, value: w.v!, expectedRv: w.e! };
    switch (w.out) {
      case 'ok':
        ops.push({ clientId: w.c, input, call: w.call, output: { kind: 'ok', rv: w.rv }, return: w.ret });
        break;
      case 'exists':
        ops.push({ clientId: w.c, input, call: w.call, output: { kind: 'exists' }, return: w.ret });
        break;
      case 'conflict':
        ops.push({ clientId: w.c, input, call: w.call, output: { kind: 'conflict' }, return: w.ret });
        break;
      case 'notfound':
        ops.push({ clientId: w.c, input, call: w.call, output: { kind: 'notfound' }, return: w.ret });
        break;
      case 'unknown': {
        const seen = firstSeen.get(w.v!);
        if (seen === undefined) {
          unknownNotApplied++;
          break;
        }
        unknownApplied++;
        if (seen < w.call) problems.push(`write ${w.v} of ${w.key} seen at ${seen.toFixed(1)} before it was sent at ${w.call.toFixed(1)}`);
        ops.push({ clientId: w.c, input, call: w.call, output: { kind: 'ok', rv: versionOf.get(w.v!) }, return: Math.max(w.call, seen) });
        break;
      }
      default:
        break; // failed, refused: no effect (checked above)
    }
  }
  for (const f of finals) {
    const keys = new Set([...ops.map((o) => o.input.key)]);
    for (const key of keys) {
      const o = f.items.get(key);
      ops.push({
        clientId: 0,
        input: { op: 'get', key },
        call: f.call,
        output: o ? { kind: 'ok', value: o.value, rv: o.rv } : { kind: 'notfound' },
        return: f.ret,
      });
    }
  }
  const verdict = checkOperations(rvRegisterModel, ops, { maxSteps: 50_000_000 });
  let illegalDetail: string | undefined;
  if (verdict.result === 'illegal') {
    const part = [...(verdict.failedPartition ?? [])].sort((a, b) => a.call - b.call);
    const longest = (verdict.longestLinearization ?? []).map((o) => rvRegisterModel.describe!(o));
    illegalDetail = `key ${part[0]?.input.key}: ${part.length} operations; longest linearizable prefix:\n  ${longest.slice(-30).join('\n  ')}\noperations by call time:\n  ${part
      .slice(0, 400)
      .map((o) => rvRegisterModel.describe!(o))
      .join('\n  ')}`;
    problems.push(`history of ${part[0]?.input.key} is not linearizable`);
  }

  // Lost acknowledged writes: the key must end at this write's version or a later one.
  const final = finals[0];
  let lost = 0;
  if (final) {
    for (const w of writes) {
      if (w.out !== 'ok') continue;
      const end = final.items.get(w.key);
      const ok = end !== undefined && (num(end.rv) > num(w.rv) || (end.rv === w.rv && end.value === w.v));
      if (!ok) {
        lost++;
        problems.push(`acknowledged write ${w.v} of ${w.key} at ${String(w.rv)} lost: final ${end ? `${end.value}@${end.rv}` : 'absent'}`);
      }
    }
    for (const f of finals.slice(1)) {
      const a = [...final.items].map(([k, o]) => `${k}=${o.value}@${o.rv}/${o.uid}`).sort().join(',');
      const b = [...f.items].map(([k, o]) => `${k}=${o.value}@${o.rv}/${o.uid}`).sort().join(',');
      if (a !== b) problems.push(`replicas ${final.replica} and ${f.replica} list different final states:\n  ${a}\n  ${b}`);
    }
  }

  // Every write anyone knows of, by version, for the watchers' completeness.
  const known = new Map<number, { key: string; value: string }>();
  for (const [value, rv] of versionOf) known.set(num(rv), { key: keyOf.get(value)!, value });
  for (const wt of watchers) {
    problems.push(...validateWatcher(wt.id, wt, known, final?.items));
  }

  const counts: HistoryCounts = {
    operations: records.length,
    reads: reads.length,
    writes: writes.length,
    acknowledged: writes.filter((w) => w.out === 'ok').length,
    conflicts: writes.filter((w) => w.out === 'conflict').length,
    alreadyExists: writes.filter((w) => w.out === 'exists').length,
    failedCertainly: writes.filter((w) => w.out === 'failed').length,
    refused404: writes.filter((w) => w.out === 'refused').length,
    unknown: writes.filter((w) => w.out === 'unknown').length,
    unknownApplied,
    unknownNotApplied,
    readsFailed: reads.filter((r) => r.out === 'failed').length,
    lost,
  };
  return { counts, problems, linearizability: verdict.result, checkerSteps: verdict.steps, ...(illegalDetail ? { illegalDetail } : {}), outcomes };
}

/** The checks on one watcher's streams (see the module header). */
export function validateWatcher(
  id: string,
  w: WatchLog,
  known: Map<number, { key: string; value: string }>,
  final: Map<string, FinalObject> | undefined,
): string[] {
  const out: string[] = [];
  const state = new Map([...w.initialState].map(([k, v]) => [k, { ...v }]));
  let last = num(w.startRv);
  const seen = new Set<number>();
  for (const e of w.events) {
    const rv = num(e.rv);
    const from = w.streamFrom[e.stream];
    if (seen.has(rv)) out.push(`watcher ${id}: event ${e.name}@${e.rv} delivered twice (stream ${e.stream} via ${e.replica} from ${from?.from})`);
    else if (rv <= last) out.push(`watcher ${id}: event ${e.name}@${e.rv} after ${last}: out of order / time travel (stream ${e.stream} via ${e.replica} from ${from?.from})`);
    if (from && rv <= num(from.from)) out.push(`watcher ${id}: stream ${e.stream} via ${e.replica} resumed from ${from.from} delivered the older ${e.name}@${e.rv}`);
    seen.add(rv);
    last = Math.max(last, rv);
    const had = state.has(e.name);
    if (e.type === 'ADDED' && had) out.push(`watcher ${id}: ADDED ${e.name}@${e.rv} while it existed`);
    if (e.type === 'MODIFIED' && !had) out.push(`watcher ${id}: MODIFIED ${e.name}@${e.rv} while it did not exist`);
    if (e.type === 'DELETED') state.delete(e.name);
    else state.set(e.name, { value: e.value, rv: e.rv });
    const k = known.get(rv);
    if (k && (k.key !== e.name || (e.type !== 'DELETED' && k.value !== e.value))) out.push(`watcher ${id}: event ${e.name}=${e.value}@${e.rv} but that version is ${k.key}=${k.value}`);
  }
  const end = num(w.lastRv);
  const missing: string[] = [];
  for (const [rv, k] of known) if (rv > num(w.startRv) && rv <= end && !seen.has(rv)) missing.push(`${k.key}=${k.value}@${rv}`);
  if (missing.length) out.push(`watcher ${id}: ${missing.length} writes in (${w.startRv}, ${w.lastRv}] never delivered: ${missing.slice(0, 10).join(', ')}`);
  if (final) {
    const a = [...final].map(([k, o]) => `${k}=${o.value}@${o.rv}`).sort().join(',');
    const b = [...state].map(([k, o]) => `${k}=${o.value}@${o.rv}`).sort().join(',');
    if (a !== b) out.push(`watcher ${id}: final state differs from the replicas':\n  replicas ${a}\n  watcher  ${b}`);
  }
  if (w.expired > 0) out.push(`watcher ${id}: ${w.expired} watches answered 410 Gone`);
  if (w.relists > 0) out.push(`watcher ${id}: relisted ${w.relists} times`);
  return out;
}

/** True when the watcher's state equals the final state (it has caught up). */
export function watcherCaughtUp(w: WatchLog, final: Map<string, FinalObject>): boolean {
  if (w.state.size !== final.size) return false;
  for (const [k, o] of final) {
    const s = w.state.get(k);
    if (!s || s.rv !== o.rv || s.value !== o.value) return false;
  }
  return true;
}
