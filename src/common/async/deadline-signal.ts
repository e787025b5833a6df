/**
 * An AbortSignal that aborts with a TimeoutError `ms` from now, as AbortSignal.timeout does, but
 * decides only after the I/O that arrived by then has been read: the abort waits for one more turn
 * of the event loop (setImmediate runs after the poll phase). A process stalled past the deadline
 * (a long GC, a busy CPU) runs its due timers before it reads its sockets; with a plain timeout an
 * answer already waiting in the socket would be called a timeout, and a webhook sent again because
 * of it would reach a healthy receiver twice.
 */
export function deadlineSignal(ms: number): AbortSignal {
  const controller = new AbortController();
  const abort = () => controller.abort(new DOMException(`The operation timed out after ${ms} ms`, 'TimeoutError'));
  // Unreferenced, like AbortSignal.timeout's own timer: a pending deadline never keeps the process alive.
  setTimeout(() => setImmediate(abort), ms).unref();
  return controller.signal;
}
