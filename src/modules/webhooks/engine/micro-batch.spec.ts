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
});
