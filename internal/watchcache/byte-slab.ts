// internal/watchcache/byte-slab owns where the serving bytes of the objects loaded at start
// live: packed into large shared buffers instead of one allocation each. One allocation per
// object costs an ArrayBuffer and a native backing store besides the bytes, and interleaves the
// cache's long-lived bytes with the load's short-lived reads in malloc's arenas, which then
// cannot give the freed reads back: with 10,000 pods that slack was several times the live data.
// A slab is large enough to be mapped on its own (above malloc's mmap threshold). The price: a
// slab stays while any object in it is unchanged, so at most the memory of the state loaded at
// start stays pinned, never more. Changes applied later get exact-size buffers of their own.
// Imports: nothing from the project.

/** 1 MiB: far above glibc's default mmap threshold (128 KiB), small enough to pin little. */
const SLAB_BYTES = 1 << 20;
/** Larger objects get buffers of their own: a slab's unused tail stays under this. */
const LARGEST_PACKED = SLAB_BYTES >> 4;

export class ByteSlabs {
  private slab: Buffer | undefined;
  private used = 0;

  /** `n` bytes (uninitialised) for a buffer that lives as long as a cache entry. */
  readonly alloc = (n: number): Buffer => {
    if (n > LARGEST_PACKED) return Buffer.allocUnsafeSlow(n);
    if (this.slab === undefined || this.used + n > SLAB_BYTES) {
      this.slab = Buffer.allocUnsafeSlow(SLAB_BYTES);
      this.used = 0;
    }
    const out = this.slab.subarray(this.used, this.used + n);
    this.used += n;
    return out;
  };
}
