import { deadlineSignal } from './deadline-signal';

/** Blocks the event loop, as a long GC or a starved CPU does. */
function stall(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    // busy
  }
}

describe('deadlineSignal', () => {
  it('aborts with a TimeoutError once the time has passed', async () => {
    const signal = deadlineSignal(10);
    await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
    expect(signal.aborted).toBe(true);
    expect((signal.reason as DOMException).name).toBe('TimeoutError');
  });

  it('lets I/O that arrived before the deadline be read first when the process was stalled past it', async () => {
    const { createServer } = await import('node:net');
    const { connect } = await import('node:net');
    const server = createServer((socket) => socket.end('answer'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    try {
      const events: string[] = [];
      const socket = connect(port, '127.0.0.1');
      await new Promise((resolve) => socket.once('connect', resolve));
      const signal = deadlineSignal(20);
      signal.addEventListener('abort', () => events.push('timeout'));
      socket.on('data', () => events.push('answer'));
      // The answer arrives while the process is stalled; the deadline passes during the stall too.
      stall(200);
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(events).toEqual(['answer', 'timeout']);
      socket.destroy();
    } finally {
      server.close();
    }
  });
});
