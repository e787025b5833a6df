import { deadline } from './deadline-signal';

/** Blocks the event loop, as a long GC or a starved CPU does. */
function stall(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    // busy
  }
}

describe('deadline', () => {
  it('aborts with a TimeoutError once the time has passed', async () => {
    const { signal } = deadline(10);
    await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
    expect(signal.aborted).toBe(true);
    expect((signal.reason as DOMException).name).toBe('TimeoutError');
  });

  it('lets I/O that arrived before the deadline be read first when the process was stalled past it', async () => {
    const { createServer } = await import('node:net');
    const { connect } = await import('node:net');
    let written!: () => void;
    const answerSent = new Promise<void>((resolve) => (written = resolve));
    const server = createServer((socket) => socket.end('answer', written));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    try {
      const events: string[] = [];
      const socket = connect(port, '127.0.0.1');
      socket.on('data', () => events.push('answer'));
      await new Promise((resolve) => socket.once('connect', resolve));
      // The answer is on its way (handed to the kernel) before the deadline is set.
      await answerSent;
      const { signal } = deadline(20);
      signal.addEventListener('abort', () => events.push('timeout'));
      const aborted = new Promise((resolve) => signal.addEventListener('abort', resolve));
      // The deadline passes while the process is stalled.
      stall(200);
      // Waits for the abort itself, not a fixed time: on a loaded machine the process can be
      // descheduled long enough for a fixed wait to end before the deadline's turn comes.
      await aborted;
      expect(events).toEqual(['answer', 'timeout']);
      socket.destroy();
    } finally {
      server.close();
    }
  });

  it('never aborts once cleared, even when cleared as its time comes', async () => {
    const early = deadline(10);
    early.clear();
    const onTime = deadline(10);
    await new Promise((resolve) => setTimeout(resolve, 10));
    onTime.clear();
    const later = deadline(15);
    await new Promise((resolve) => later.signal.addEventListener('abort', resolve, { once: true }));
    expect(early.signal.aborted).toBe(false);
    expect(onTime.signal.aborted).toBe(false);
  });
});
