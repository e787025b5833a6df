import { METRICS_CACHE_MS, MetricsText } from './metrics-text';

describe('MetricsText', () => {
  it('collects at most once per 2 s, and concurrent scrapes share one collection', async () => {
    let clock = 1_000_000;
    let collections = 0;
    const text = new MetricsText(
      () => Promise.resolve(`collection ${(collections += 1)}`),
      () => clock,
    );
    expect(METRICS_CACHE_MS).toBe(2000);
    expect(await Promise.all([text.get(), text.get(), text.get()])).toEqual(['collection 1', 'collection 1', 'collection 1']);
    clock += 1999;
    expect(await text.get()).toBe('collection 1');
    clock += 1;
    expect(await text.get()).toBe('collection 2');
    expect(collections).toBe(2);
  });

  it('does not keep serving a failed collection', async () => {
    let fail = true;
    const text = new MetricsText(
      () => (fail ? Promise.reject(new Error('redis down')) : Promise.resolve('ok')),
      () => 0,
    );
    await expect(text.get()).rejects.toThrow('redis down');
    fail = false;
    expect(await text.get()).toBe('ok');
  });
});
