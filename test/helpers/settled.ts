/**
 * @module test/helpers/settled
 * Whether a promise has settled once the callbacks already queued in this
 * turn have run: for asserting that something is still waiting.
 */
export async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  promise.then(
    () => (done = true),
    () => (done = true),
  );
  await new Promise((resolve) => setImmediate(resolve));
  return done;
}
