import { randomBytes } from 'node:crypto';

/**
 * Random bytes from the system's CSPRNG, cut from a pool refilled 8 KiB at a time (as Node's
 * own randomUUID does): each call of `randomBytes` or `crypto.getRandomValues` is a system call,
 * about 4 µs here, whatever its size, while a slice of the pool costs almost nothing. Each refill
 * is a new buffer and each slice is handed out once, so no two callers share bytes. The slice is
 * a view of the pool: its caller may keep it, or zero it (as newDataKeyBytes does), but never
 * reads or writes past it.
 *
 * Used for the cipher's initialisation vectors, the random part of event ids (UUIDv7) and new
 * data keys: the per-event and per-user uses.
 */
const POOL_BYTES = 8192;
let pool = Buffer.alloc(0);
let offset = 0;

export function pooledRandomBytes(size: number): Buffer {
  if (size > POOL_BYTES) return randomBytes(size);
  if (offset + size > pool.length) {
    pool = randomBytes(POOL_BYTES);
    offset = 0;
  }
  offset += size;
  return pool.subarray(offset - size, offset);
}

/**
 * A new data key's 32 bytes (AES-256), moved out of the pool into memory of their own: the key
 * is kept, zeroed or collected apart from the bytes handed to others, and its bytes in the pool
 * are zeroed at once, so erasing the key leaves no copy of it there.
 */
export function newDataKeyBytes(): Buffer {
  const key = Buffer.alloc(32); // never from Node's shared buffer pool, unlike Buffer.from
  const slice = pooledRandomBytes(32);
  slice.copy(key);
  slice.fill(0);
  return key;
}
