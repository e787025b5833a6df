/** An attempt's deadline: its signal, and `clear` to call once the attempt is over. */
export interface Deadline {
  signal: AbortSignal;
  /**
   * Cancels the deadline of an attempt that finished in time. Without it every attempt's timer
   * stays armed for the whole timeout and then aborts a signal nobody listens to any more (a
   * DOMException with its stack each time): about 2 % of a delivering worker's CPU in a burst.
   */
  clear(): void;
}

/**
 * A deadline that aborts its signal with a TimeoutError `ms` from now, as AbortSignal.timeout
 * does, but decides only after the I/O that arrived by then has been read: the abort waits for
 * one more turn of the event loop (setImmediate runs after the poll phase). A process stalled past
 * the deadline (a long GC, a busy CPU) runs its due timers before it reads its sockets; with a
 * plain timeout an answer already waiting in the socket would be called a timeout, and a webhook
 * sent again because of it would reach a healthy receiver twice.
 */
export function deadline(ms: number): Deadline {
  const controller = new AbortController();
  let immediate: NodeJS.Immediate | undefined;
  const abort = () => controller.abort(new DOMException(`The operation timed out after ${ms} ms`, 'TimeoutError'));
  // Unreferenced, like AbortSignal.timeout's own timer: a pending deadline never keeps the process alive.
  const timer = setTimeout(() => (immediate = setImmediate(abort)), ms).unref();
  return {
    signal: controller.signal,
    clear: () => {
      clearTimeout(timer);
      if (immediate !== undefined) clearImmediate(immediate);
    },
  };
}
