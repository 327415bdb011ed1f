/**
 * Text encoded to UTF-8 as it is added, into buffers of about CHUNK_BYTES. A page of the export is
 * thousands of short strings: joined with `+=` they make one deep rope that the stream must flatten
 * and encode whole, which was the slowest step of an export (about half a second for 100 MB).
 * Encoding each string into a buffer as it comes costs about a third of that, and the stream
 * writes the buffers as they are.
 */
const CHUNK_BYTES = 1 << 20;
/** A UTF-16 code unit takes at most 3 bytes in UTF-8 (a surrogate pair, two units, takes 4). */
const MAX_BYTES_PER_UNIT = 3;

export class Utf8Chunks {
  private readonly full: Buffer[] = [];
  private current: Buffer | null = null;
  private used = 0;

  add(text: string): void {
    const most = text.length * MAX_BYTES_PER_UNIT;
    if (this.current === null || this.used + most > this.current.length) {
      this.seal();
      this.current = Buffer.allocUnsafe(Math.max(CHUNK_BYTES, most));
    }
    this.used += this.current.write(text, this.used, 'utf8');
  }

  /** The bytes added so far, in order, as whole buffers; the next `add` starts a new one. */
  take(): Buffer[] {
    this.seal();
    return this.full.splice(0);
  }

  private seal(): void {
    if (this.current !== null && this.used > 0) this.full.push(this.current.subarray(0, this.used));
    this.current = null;
    this.used = 0;
  }
}
