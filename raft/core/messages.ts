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

/**
 * Context of a proposal a follower forwards to its leader: "FT" and the follower's term. The
 * leader appends it only in that same term and drops it otherwise. So a forwarded proposal can
 * only ever be appended in the term its proposer sent it in, and once the proposer applies an
 * entry of a later term without having seen it, it knows the proposal is lost for good (the
 * committed log's terms never decrease) and may propose again without risk of a duplicate.
 * Without the fence, a proposal delayed in a peer connection, or forwarded on by a member
 * that stopped leading, could reach a leader of a later term and commit after all.
 */
const PROPOSAL_TERM_TAG = [0x46, 0x54]; // "FT"

export function proposalTermContext(term: number): Uint8Array {
  const ctx = new Uint8Array(10);
  ctx[0] = PROPOSAL_TERM_TAG[0]!;
  ctx[1] = PROPOSAL_TERM_TAG[1]!;
  new DataView(ctx.buffer).setFloat64(2, term);
  return ctx;
}

/** The term a forwarded proposal was sent in; undefined when it carries none (an older member). */
export function proposalContextTerm(ctx: Uint8Array): number | undefined {
  if (ctx.byteLength !== 10 || ctx[0] !== PROPOSAL_TERM_TAG[0] || ctx[1] !== PROPOSAL_TERM_TAG[1]) return undefined;
  return new DataView(ctx.buffer, ctx.byteOffset, ctx.byteLength).getFloat64(2);
}

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
