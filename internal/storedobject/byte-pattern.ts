// internal/storedobject/byte-pattern owns finding a short JSON token (`"volumes":`,
// `"metadata":{`) in an object's bytes, as Buffer.indexOf finds it, at a fraction of the cost.
// Node's search (as V8's) compares from the pattern's first byte and gives up on that for a
// Boyer-Moore-Horspool search, whose tables it builds on every call, once too many candidates
// have matched its first bytes. A JSON member name starts with a quote, the commonest byte of
// JSON, so every search of one through a pod's 2 KB built those tables: with 50,000 stored
// pods the start's scans for a member the pods do not have were about 4 % of its CPU. A
// BytePattern searches from its rarest byte instead (for JSON text: an upper-case letter, else
// the least common lower-case one) and checks the bytes before it on each hit.
// Imports: nothing from the project.

/** Lower-case letters from the commonest to the rarest in English text; JSON is alike. */
const LETTERS_BY_FREQUENCY = 'etaoinsrhldcumfpgwybvkxjqz';

export class BytePattern {
  readonly bytes: Buffer;
  /** Where in the pattern the search starts: its rarest byte. */
  private readonly anchor: number;
  /** The pattern from the anchor on: what Buffer.indexOf looks for. */
  private readonly tail: Buffer;

  constructor(text: string) {
    this.bytes = Buffer.from(text, 'utf8');
    if (this.bytes.length === 0) throw new Error('BytePattern: empty pattern');
    this.anchor = rarestByte(this.bytes);
    this.tail = this.bytes.subarray(this.anchor);
  }

  get length(): number {
    return this.bytes.length;
  }

  /** The first index at or after `from` where the pattern starts, or -1: what bytes.indexOf(pattern, from) gives. */
  indexIn(bytes: Uint8Array, from = 0): number {
    const b = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const anchor = this.anchor;
    const head = this.bytes;
    // Every occurrence of the tail in order: the first whose head matches is the first match.
    for (let i = b.indexOf(this.tail, Math.max(from, 0) + anchor); i >= 0; i = b.indexOf(this.tail, i + 1)) {
      const start = i - anchor;
      let k = 0;
      while (k < anchor && b[start + k] === head[k]) k++;
      if (k === anchor) return start;
    }
    return -1;
  }

  /** Whether the pattern occurs in `bytes`. */
  in(bytes: Uint8Array): boolean {
    return this.indexIn(bytes) >= 0;
  }
}

/** The index of the pattern's rarest byte in JSON text (the first of equals). */
function rarestByte(p: Buffer): number {
  let best = 0;
  let bestScore = -1;
  for (let i = 0; i < p.length; i++) {
    const c = p[i]!;
    // Upper-case letters are rare in JSON (a few in names and values); anything not a letter
    // (quotes, colons, braces, digits) is common; lower-case letters as they are in text.
    const score = c >= 0x41 && c <= 0x5a ? 100 : c >= 0x61 && c <= 0x7a ? LETTERS_BY_FREQUENCY.indexOf(String.fromCharCode(c)) + 1 : 0;
    if (score > bestScore) {
      best = i;
      bestScore = score;
    }
  }
  return best;
}
