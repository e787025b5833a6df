import { rateLimitedDelayMs } from './endpoint-rate-limiter';

describe('rateLimitedDelayMs', () => {
  it('comes back at the start of the next window, spread over its first 50 ms', () => {
    expect(rateLimitedDelayMs(300, () => 0)).toBe(300);
    expect(rateLimitedDelayMs(300, () => 0.999)).toBe(349);
    expect(rateLimitedDelayMs(1, () => 0.5, 10)).toBe(6);
  });
});
