/**
 * `promise`, or a rejection once `ms` have passed without its answer; an answer that arrived in
 * time counts even when this process was too busy to see it in time. On a loaded machine the
 * process can miss its deadline by hundreds of milliseconds (not scheduled, a long task), and when
 * it runs again its timers come before the I/O that arrived meanwhile: the answer of a replica or
 * of Redis would be declared missing, and a healthy replica skipped or a read sent to the primary.
 * So the deadline looks once more after that I/O (setImmediate runs after it) before giving up.
 */
export function withinDeadline<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const settle = (finish: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      finish();
    };
    const timer = setTimeout(() => setImmediate(() => settle(() => reject(new Error(`timed out after ${ms} ms`)))), ms);
    // Like AbortSignal.timeout: a pending deadline never keeps the process alive.
    timer.unref();
    promise.then(
      (value) => settle(() => resolve(value)),
      (error: unknown) => settle(() => reject(error instanceof Error ? error : new Error(String(error)))),
    );
  });
}
