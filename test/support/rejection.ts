/** What `work` rejects (or throws) with; fails the test when it succeeds. */
export async function rejection(work: Promise<unknown> | (() => Promise<unknown>)): Promise<unknown> {
  try {
    await (typeof work === 'function' ? work() : work);
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}
