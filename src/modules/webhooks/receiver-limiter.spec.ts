import { ReceiverLimiter, receiverKey } from './receiver-limiter';

describe('ReceiverLimiter', () => {
  it('admits up to the limit per receiver and frees slots on release', () => {
    const limiter = new ReceiverLimiter(2);
    expect(limiter.tryAcquire('a')).toBe(true);
    expect(limiter.tryAcquire('a')).toBe(true);
    expect(limiter.tryAcquire('a')).toBe(false);
    expect(limiter.tryAcquire('b')).toBe(true);
    limiter.release('a');
    expect(limiter.tryAcquire('a')).toBe(true);
    expect(limiter.count('a')).toBe(2);
  });

  it('keys receivers by origin', () => {
    expect(receiverKey('https://example.com/a?x=1')).toBe(receiverKey('https://example.com:443/b'));
    expect(receiverKey('http://127.0.0.1:8080/a')).not.toBe(receiverKey('http://127.0.0.1:8081/a'));
  });
});
