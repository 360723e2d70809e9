// raft/core/describe.ts owns the one-line text forms of entries, messages, hard states and
// snapshots used by the core's log lines and by the scenario transcripts. Stable wording
// matters: the golden files under raft/testdata are diffs of this output.

import { type Entry, EntryType, type HardState, type Message, MessageType, type Snapshot } from '../types.js';
import { decodeConfChange, describeConfChange } from './conf-change.js';

function describeData(data: Uint8Array): string {
  let printable = true;
  for (const b of data) if (b < 0x20 || b > 0x7e) printable = false;
  if (printable) return JSON.stringify(String.fromCharCode(...data));
  return `0x${Array.from(data, (b) => b.toString(16).padStart(2, '0')).join('')}`;
}

export function describeEntry(e: Entry): string {
  if (e.type === EntryType.ConfChange) {
    let cc: string;
    try {
      cc = describeConfChange(decodeConfChange(e.data));
    } catch {
      cc = `<malformed ${describeData(e.data)}>`;
    }
    return `${e.term}/${e.index} EntryConfChange ${cc}`;
  }
  return e.data.byteLength === 0 ? `${e.term}/${e.index} EntryNormal ""` : `${e.term}/${e.index} EntryNormal ${describeData(e.data)}`;
}

export function describeEntries(ents: readonly Entry[]): string {
  return ents.map(describeEntry).join(', ');
}

export function describeHardState(hs: HardState): string {
  return `Term:${hs.term} Vote:${hs.vote} Commit:${hs.commit}`;
}

export function describeSnapshot(s: Snapshot): string {
  const cs = s.metadata.confState;
  let conf = `Voters:[${cs.voters.join(' ')}]`;
  if (cs.votersOutgoing.length > 0) conf += ` VotersOutgoing:[${cs.votersOutgoing.join(' ')}]`;
  if (cs.learners.length > 0) conf += ` Learners:[${cs.learners.join(' ')}]`;
  if (cs.learnersNext.length > 0) conf += ` LearnersNext:[${cs.learnersNext.join(' ')}]`;
  if (cs.autoLeave) conf += ' AutoLeave';
  return `Index:${s.metadata.index} Term:${s.metadata.term} ConfState:{${conf}}`;
}

export function describeMessage(m: Message): string {
  let s = `${m.from}->${m.to} Msg${m.type} Term:${m.term}`;
  if (m.type === MessageType.VoteResp || m.type === MessageType.PreVoteResp) {
    // A rejection carries the voter's commit index and that entry's term.
    if (m.reject) s += ` Rejected Commit:${m.commit} (term ${m.logTerm})`;
    return s;
  }
  if (m.type === MessageType.ReadIndexResp) {
    s += ` Index:${m.index} Context:${describeData(m.context)}`;
    return s;
  }
  const logged = m.type === MessageType.App || m.type === MessageType.Vote || m.type === MessageType.PreVote || m.type === MessageType.AppResp;
  if (logged || m.logTerm !== 0 || m.index !== 0) s += ` Log:${m.logTerm}/${m.index}`;
  if (m.reject) s += ` Rejected (Hint: ${m.rejectHint})`;
  if (m.commit !== 0) s += ` Commit:${m.commit}`;
  if (m.entries.length > 0) s += ` Entries:[${describeEntries(m.entries)}]`;
  if (m.context.byteLength > 0) s += ` Context:${describeData(m.context)}`;
  if (m.snapshot && m.snapshot.metadata.index > 0) s += ` Snapshot: ${describeSnapshot(m.snapshot)}`;
  return s;
}
