/**
 * Gathers items handed in one at a time into batches, so that per-item work that costs a
 * database round trip is paid once per batch: a batch goes when it holds `maxItems`, or
 * `maxWaitMs` after its first item, whichever comes first. Each caller gets its own item's
 * result; if the handler throws, every item of that batch rejects with the error.
 *
 * `maxInFlight` (unbounded unless given) caps the batches running side by side: a batch that is
 * due while that many run waits for one of them to finish, gathering more items meanwhile (up to
 * `maxItems`; the rest go in the next batch). Under load the batches then grow with the time a
 * batch takes, as a group commit does, instead of shrinking when the work is split between
 * several processes; when idle, a batch still goes after `maxWaitMs`.
 */
export class MicroBatch<T, R> {
  private items: T[] = [];
  private waiters: { resolve: (value: R) => void; reject: (error: unknown) => void }[] = [];
  private timer: NodeJS.Timeout | null = null;
  private running = 0;
  /** A batch came due while `maxInFlight` batches ran: it goes when one of them ends. */
  private due = false;

  constructor(
    private readonly handler: (items: T[]) => Promise<(R | Promise<R>)[]>,
    private readonly options: { maxItems: number; maxWaitMs: number; maxInFlight?: number },
  ) {}

  add(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.items.push(item);
      this.waiters.push({ resolve, reject });
      if (this.items.length >= this.options.maxItems) this.flush();
      else if (this.timer === null && !this.due) this.timer = setTimeout(() => this.flush(), this.options.maxWaitMs);
    });
  }

  /** Sends what has gathered now (or as soon as a batch in flight ends, at the cap). */
  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.items.length === 0) return;
    if (this.options.maxInFlight !== undefined && this.running >= this.options.maxInFlight) {
      this.due = true;
      return;
    }
    this.due = false;
    const items = this.items.splice(0, this.options.maxItems);
    const waiters = this.waiters.splice(0, items.length);
    this.running += 1;
    this.handler(items)
      .then(
        (results) =>
          waiters.forEach((w, i) => {
            Promise.resolve(results[i]).then(w.resolve, w.reject);
          }),
        (error: unknown) => waiters.forEach((w) => w.reject(error)),
      )
      .finally(() => {
        this.running -= 1;
        if (this.due || this.items.length >= this.options.maxItems) this.flush();
        else if (this.items.length > 0 && this.timer === null) this.timer = setTimeout(() => this.flush(), this.options.maxWaitMs);
      });
  }
}
