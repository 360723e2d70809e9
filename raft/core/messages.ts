// raft/core/messages.ts owns how messages are built and classified: which types are local
// (never cross the network), which are responses, and the marker a leadership transfer puts in
// a vote request's context so the recipient ignores its leader lease.

import { type Message, MessageType, NONE } from '../types.js';

const EMPTY = new Uint8Array(0);

/** A message with every field defaulted; callers set what they mean. */
export function makeMessage(fields: Partial<Message> & { type: MessageType }): Message {
  return {
    from: NONE,
    to: NONE,
    term: 0,
    logTerm: 0,
    index: 0,
    entries: [],
    commit: 0,
    reject: false,
    rejectHint: 0,
    context: EMPTY,
    ...fields,
  };
}

const LOCAL = new Set<MessageType>([
  MessageType.Hup,
  MessageType.Beat,
  MessageType.Unreachable,
  MessageType.SnapStatus,
  MessageType.CheckQuorum,
]);

/** Local messages are generated inside one node; one arriving from the network is ignored. */
export function isLocalMessage(t: MessageType): boolean {
  return LOCAL.has(t);
}

const RESPONSES = new Set<MessageType>([
  MessageType.AppResp,
  MessageType.VoteResp,
  MessageType.HeartbeatResp,
  MessageType.PreVoteResp,
  MessageType.Unreachable,
  MessageType.ReadIndexResp,
]);

export function isResponseMessage(t: MessageType): boolean {
  return RESPONSES.has(t);
}

export function voteResponseType(t: MessageType): MessageType {
  if (t === MessageType.Vote) return MessageType.VoteResp;
  if (t === MessageType.PreVote) return MessageType.PreVoteResp;
  throw new Error(`not a vote message: ${t}`);
}

/** Context of a Vote sent because of TimeoutNow: lets voters skip the leader-lease check. */
export const CAMPAIGN_TRANSFER = new Uint8Array([0x43, 0x54]); // "CT"

/**
 * Context of an empty MsgApp a leader sends only to announce a new commit index to a follower
 * it replicates to and has sent everything: the follower takes the commit index and does not
 * answer when the append matches its log (the answer would tell the leader nothing new, and
 * cost it a message per follower per commit). A mismatch is answered as usual; probes and
 * every other append carry no context and are always answered.
 */
export const COMMIT_ONLY = new Uint8Array([0x43, 0x4f]); // "CO"

export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.byteLength !== b.byteLength) return false;
  for (let i = 0; i < a.byteLength; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** A string key for byte contexts (ReadIndex request ids), usable in Maps. */
export function bytesKey(b: Uint8Array): string {
  let s = '';
  for (let i = 0; i < b.byteLength; i++) s += String.fromCharCode(b[i]);
  return s;
}
