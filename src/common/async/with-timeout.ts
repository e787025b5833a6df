/**
 * `promise`, or a rejection with `message` once `ms` have passed, whichever comes first. The
 * promise itself is not cancelled (pass the same kind of signal to it where it takes one); the
 * timer is AbortSignal.timeout's, which never keeps the process alive.
 */
export function withTimeout<T>(promise: Promise<T>, ms: number, message = `timed out after ${ms} ms`): Promise<T> {
  const signal = AbortSignal.timeout(ms);
  return new Promise<T>((resolve, reject) => {
    const onTimeout = () => reject(new Error(message));
    signal.addEventListener('abort', onTimeout, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onTimeout);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onTimeout);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}
