import { withTimeout } from './with-timeout';

describe('withTimeout', () => {
  it('passes the value or the error of a promise that settles in time', async () => {
    await expect(withTimeout(Promise.resolve(42), 1000)).resolves.toBe(42);
    await expect(withTimeout(Promise.reject(new Error('boom')), 1000)).rejects.toThrow('boom');
  });

  it('rejects with the message once the time has passed', async () => {
    await expect(withTimeout(new Promise(() => undefined), 5, 'lookup timed out')).rejects.toThrow('lookup timed out');
    await expect(withTimeout(new Promise(() => undefined), 5)).rejects.toThrow('timed out after 5 ms');
  });
});
