// internal/http/chunk-pool owns the buffers streamed list bodies are written from: 64 KiB
// chunks taken from a small free list and given back once the write that carried one has
// completed (its callback ran), instead of a new buffer per 64 KiB. Every new buffer is an
// ArrayBuffer with a native backing store that V8 counts against its old generation, so a
// 20 MB list written from fresh chunks started a full (mark-compact) collection about once a
// list on a server with a small heap. A chunk is reused only after its write's callback, so
// nothing a socket, TLS or gzip still holds is overwritten; a chunk whose write never completes
// (a closed connection) is simply left to the collector. Imports: nothing from the project.

/** The size of the chunks a streamed body is written in. */
export const CHUNK_BYTES = 64 * 1024;

export class ChunkPool {
  private readonly free: Buffer[] = [];
  /** The chunks handed out and not given back, by their memory (views of a chunk find it). */
  private readonly lent = new WeakMap<ArrayBufferLike, Buffer>();
  /** Chunks allocated over the pool's life (for tests and figures). */
  allocated = 0;

  constructor(private readonly keep = 16) {}

  /** A chunk of CHUNK_BYTES, its contents undefined; give it back with give() once written. */
  readonly take = (): Buffer => {
    let chunk = this.free.pop();
    if (chunk === undefined) {
      // Its own ArrayBuffer (not Node's shared pool), so that a view finds it by its memory.
      chunk = Buffer.allocUnsafeSlow(CHUNK_BYTES);
      this.allocated++;
    }
    this.lent.set(chunk.buffer, chunk);
    return chunk;
  };

  /** Whether `view` is (part of) a chunk taken and not given back. */
  owns(view: Uint8Array): boolean {
    return this.lent.has(view.buffer);
  }

  /** Gives back the chunk `view` is part of; anything else is ignored. */
  give(view: Uint8Array): void {
    const chunk = this.lent.get(view.buffer);
    if (chunk === undefined) return;
    this.lent.delete(view.buffer);
    if (this.free.length < this.keep) this.free.push(chunk);
  }
}

/** The process's pool: streamed lists of every server in it share it. */
export const listChunkPool = new ChunkPool();
