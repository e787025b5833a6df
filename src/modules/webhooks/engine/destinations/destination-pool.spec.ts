import type { DeliveryTarget } from '../../../webhook-endpoints/delivery-target.reader';
import type { Destination } from './destination';
import { DestinationPool } from './destination-pool';

/** A destination that only records whether it was closed (the pool's bookkeeping is what is tested here). */
class Recorded implements Destination {
  closed = false;
  constructor(readonly fingerprint: string) {}
  send(): never {
    throw new Error('not sent in this spec');
  }
  close(): Promise<void> {
    this.closed = true;
    return Promise.resolve();
  }
}

const target = (endpointId: string, fingerprint: string) =>
  ({
    endpointId,
    tls: null,
    destination: {
      settings: { type: 'nats', url: 'nats://127.0.0.1:4222', subject: 's', stream: 'S' },
      connectUrl: 'nats://127.0.0.1:4222',
      fingerprint,
    },
  }) as unknown as DeliveryTarget & { destination: NonNullable<DeliveryTarget['destination']> };

describe('DestinationPool', () => {
  const opened: Recorded[] = [];
  const open = (endpoint: { destination: { fingerprint: string } }) => {
    const destination = new Recorded(endpoint.destination.fingerprint);
    opened.push(destination);
    return destination;
  };
  let pool: DestinationPool;
  beforeEach(() => {
    opened.length = 0;
    pool = new DestinationPool(
      { policy: { allowPrivateNetworks: true, allowedHosts: [] }, timeoutMs: 1000 },
      {
        rabbitmq: open,
        nats: open,
        mqtt: open,
      },
    );
  });
  afterEach(() => pool.close());

  it('keeps one destination per endpoint while its destination stays the same', () => {
    const first = pool.destinationFor(target('e1', 'a'));
    expect(pool.destinationFor(target('e1', 'a'))).toBe(first);
    pool.destinationFor(target('e2', 'a'));
    expect(opened).toHaveLength(2);
    expect(pool.size).toBe(2);
  });

  it('closes the old connection when the destination changes, and when told the endpoint changed or went', () => {
    const first = pool.destinationFor(target('e1', 'a')) as Recorded;
    const second = pool.destinationFor(target('e1', 'b')) as Recorded;
    expect(second).not.toBe(first);
    expect(first.closed).toBe(true);
    expect(pool.size).toBe(1);
    pool.drop('e1');
    expect(second.closed).toBe(true);
    expect(pool.size).toBe(0);
    pool.drop('unknown');
  });

  it('closes a connection left unused past its idle time, and only that one', async () => {
    const idle = new DestinationPool(
      { policy: { allowPrivateNetworks: true, allowedHosts: [] }, timeoutMs: 1000 },
      { rabbitmq: open, nats: open, mqtt: open },
      50,
    );
    try {
      const unused = idle.destinationFor(target('e1', 'a')) as Recorded;
      const used = idle.destinationFor(target('e2', 'a')) as Recorded;
      // e2 is used every 10 ms; e1 is left alone until it is closed.
      while (!unused.closed) {
        await new Promise((resolve) => setTimeout(resolve, 10));
        expect(idle.destinationFor(target('e2', 'a'))).toBe(used);
      }
      expect(used.closed).toBe(false);
      expect(idle.size).toBe(1);
    } finally {
      await idle.close();
    }
  });

  it('closes everything it holds when the process stops', async () => {
    const a = pool.destinationFor(target('e1', 'a')) as Recorded;
    const b = pool.destinationFor(target('e2', 'a')) as Recorded;
    await pool.close();
    expect([a.closed, b.closed]).toEqual([true, true]);
  });
});
