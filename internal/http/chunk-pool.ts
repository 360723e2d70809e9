// internal/http/chunk-pool owns the buffers streamed list bodies are written from: 64 KiB
// chunks taken from a small free list and given back once the write that carried one has
// completed (its callback ran), instead of a new buffer per 64 KiB. Every new buffer is an
// ArrayBuffer with a native backing store that V8 counts against its old generation, so a
// 20 MB list written from fresh chunks started a full (mark-compact) collection about once a
// list on a server with a small heap. A chunk is reused only after its write's callback, so
// nothing a socket, TLS or gzip still holds is overwritten; a chunk whose write never completes
// (a closed connection) is simply left to the collector. It also tells whether a streamed body
// is being written (streaming), which background work waits for. Imports: nothing from the project.

/** The size of the chunks a streamed body is written in. */
export const CHUNK_BYTES = 64 * 1024;
/** A body whose chunks have neither been taken nor given back for this long is taken for stalled or abandoned. */
const STREAMING_QUIET_MS = 1000;

export class ChunkPool {
  private readonly free: Buffer[] = [];
  /** The chunks handed out and not given back, by their memory (views of a chunk find it). */
  private readonly lent = new WeakMap<ArrayBufferLike, Buffer>();
  /** Chunks allocated over the pool's life (for tests and figures). */
  allocated = 0;
  /** Chunks taken and not given back, and the clock (ms) when one last was either. */
  private outstanding = 0;
  private lastActivity = 0;

  constructor(
    private readonly keep = 16,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** A chunk of CHUNK_BYTES, its contents undefined; give it back with give() once written. */
  readonly take = (): Buffer => {
    let chunk = this.free.pop();
    if (chunk === undefined) {
      // Its own ArrayBuffer (not Node's shared pool), so that a view finds it by its memory.
      chunk = Buffer.allocUnsafeSlow(CHUNK_BYTES);
      this.allocated++;
    }
    this.lent.set(chunk.buffer, chunk);
    this.outstanding++;
    this.lastActivity = this.now();
    return chunk;
  };

  /**
   * Whether a streamed body is being written: chunks are out and one was taken or given back
   * within STREAMING_QUIET_MS (a chunk of a closed connection is never given back, so chunks
   * out alone do not say it). Background work waits for this (see AheadEncoding).
   */
  get streaming(): boolean {
    return this.outstanding > 0 && this.now() - this.lastActivity < STREAMING_QUIET_MS;
  }

  /** Whether `view` is (part of) a chunk taken and not given back. */
  owns(view: Uint8Array): boolean {
    return this.lent.has(view.buffer);
  }

  /** Gives back the chunk `view` is part of; anything else is ignored. */
  give(view: Uint8Array): void {
    const chunk = this.lent.get(view.buffer);
    if (chunk === undefined) return;
    this.lent.delete(view.buffer);
    this.outstanding--;
    this.lastActivity = this.now();
    if (this.free.length < this.keep) this.free.push(chunk);
  }
}

/** The process's pool: streamed lists of every server in it share it. */
export const listChunkPool = new ChunkPool();
