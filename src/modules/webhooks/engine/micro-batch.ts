/**
 * Gathers items handed in one at a time into batches, so that per-item work that costs a
 * database round trip is paid once per batch: a batch goes when it holds `maxItems`, or
 * `maxWaitMs` after its first item, whichever comes first. Each caller gets its own item's
 * result; if the handler throws, every item of that batch rejects with the error. Batches run
 * side by side: a slow batch never holds the next one back.
 */
export class MicroBatch<T, R> {
  private items: T[] = [];
  private waiters: { resolve: (value: R) => void; reject: (error: unknown) => void }[] = [];
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly handler: (items: T[]) => Promise<(R | Promise<R>)[]>,
    private readonly options: { maxItems: number; maxWaitMs: number },
  ) {}

  add(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.items.push(item);
      this.waiters.push({ resolve, reject });
      if (this.items.length >= this.options.maxItems) this.flush();
      else if (this.timer === null) this.timer = setTimeout(() => this.flush(), this.options.maxWaitMs);
    });
  }

  /** Sends what has gathered now. */
  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const items = this.items;
    const waiters = this.waiters;
    this.items = [];
    this.waiters = [];
    if (items.length === 0) return;
    this.handler(items).then(
      (results) =>
        waiters.forEach((w, i) => {
          Promise.resolve(results[i]).then(w.resolve, w.reject);
        }),
      (error: unknown) => waiters.forEach((w) => w.reject(error)),
    );
  }
}
