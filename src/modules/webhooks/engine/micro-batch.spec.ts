import { MicroBatch } from './micro-batch';

describe('MicroBatch', () => {
  it('sends a full batch at once and answers each item with its own result', async () => {
    const batches: number[][] = [];
    const batch = new MicroBatch<number, number>(
      (items) => {
        batches.push(items);
        return Promise.resolve(items.map((n) => n * 10));
      },
      { maxItems: 3, maxWaitMs: 60_000 },
    );
    const results = await Promise.all([batch.add(1), batch.add(2), batch.add(3)]);
    expect(results).toEqual([10, 20, 30]);
    expect(batches).toEqual([[1, 2, 3]]);
  });

  it('sends a partial batch after the wait, and per-item promises settle on their own', async () => {
    const batches: string[][] = [];
    const batch = new MicroBatch<string, string>(
      (items) => {
        batches.push(items);
        return Promise.resolve(items.map((s) => (s === 'bad' ? Promise.reject(new Error(s)) : Promise.resolve(s.toUpperCase()))));
      },
      { maxItems: 100, maxWaitMs: 5 },
    );
    const good = batch.add('ok');
    const bad = batch.add('bad');
    await expect(good).resolves.toBe('OK');
    await expect(bad).rejects.toThrow('bad');
    expect(batches).toEqual([['ok', 'bad']]);
  });

  it('rejects every item of a batch whose handler fails', async () => {
    const batch = new MicroBatch<number, number>(() => Promise.reject(new Error('database down')), { maxItems: 2, maxWaitMs: 1 });
    await expect(Promise.all([batch.add(1), batch.add(2)])).rejects.toThrow('database down');
    await expect(batch.add(3)).rejects.toThrow('database down');
  });

  it('with maxInFlight, gathers what arrives while a batch runs into the next one, at most maxItems each', async () => {
    const batches: number[][] = [];
    const running: (() => void)[] = [];
    const batch = new MicroBatch<number, number>(
      (items) => {
        batches.push(items);
        return new Promise((resolve) => running.push(() => resolve(items)));
      },
      { maxItems: 3, maxWaitMs: 1, maxInFlight: 1 },
    );
    const first = batch.add(1);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(batches).toEqual([[1]]);
    // Due (full, and past the wait) while the first runs: they wait for it, none is lost.
    const rest = [2, 3, 4, 5, 6, 7, 8].map((n) => batch.add(n));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(batches).toEqual([[1]]);
    running.shift()!();
    await expect(first).resolves.toBe(1);
    expect(batches).toEqual([[1], [2, 3, 4]]);
    running.shift()!();
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(batches).toEqual([[1], [2, 3, 4], [5, 6, 7]]);
    running.shift()!();
    await new Promise((resolve) => setTimeout(resolve, 20));
    running.shift()!();
    await expect(Promise.all(rest)).resolves.toEqual([2, 3, 4, 5, 6, 7, 8]);
    expect(batches).toEqual([[1], [2, 3, 4], [5, 6, 7], [8]]);
  });

  it('without maxInFlight, runs batches side by side', async () => {
    const batches: number[][] = [];
    const release: (() => void)[] = [];
    const batch = new MicroBatch<number, number>(
      (items) => {
        batches.push(items);
        return new Promise((resolve) => release.push(() => resolve(items)));
      },
      { maxItems: 2, maxWaitMs: 1 },
    );
    const all = [1, 2, 3, 4].map((n) => batch.add(n));
    expect(batches).toEqual([
      [1, 2],
      [3, 4],
    ]);
    release.forEach((go) => go());
    await expect(Promise.all(all)).resolves.toEqual([1, 2, 3, 4]);
  });
});
