import type { ApiKeyPrincipal } from '../../common/auth/principal';
import { ApiKeyCache, MAX_CACHED_KEYS, UNKNOWN_KEY_TTL_MS } from './api-key-cache';

const principal: ApiKeyPrincipal = { kind: 'apiKey', organizationId: 'o', apiKeyId: 'k', keyPrefix: 'nftw_abcdefgh', roles: ['read'] };

describe('ApiKeyCache', () => {
  it('keeps a key in use while more made-up keys than it holds pass through', () => {
    const cache = new ApiKeyCache(5000);
    cache.remember('real', principal);
    for (let i = 0; i < MAX_CACHED_KEYS * 2; i += 1) {
      cache.remember(`made-up-${i}`, null);
      if (i % 100 === 0) expect(cache.get('real')).toBe(principal);
    }
    expect(cache.get('real')).toBe(principal);
    expect(cache.get('made-up-0')).toBeUndefined();
    expect(cache.get(`made-up-${MAX_CACHED_KEYS * 2 - 1}`)).toBeNull();
  });

  it('remembers a known key for its TTL and an unknown one more briefly', () => {
    const clock = { t: 1000, now: () => clock.t };
    const cache = new ApiKeyCache(5000, clock);
    cache.remember('known', principal);
    cache.remember('unknown', null);
    clock.t += UNKNOWN_KEY_TTL_MS + 1;
    expect(cache.get('unknown')).toBeUndefined();
    expect(cache.get('known')).toBe(principal);
    clock.t += 5000;
    expect(cache.get('known')).toBeUndefined();
  });

  it('caches nothing with a TTL of 0, and forgets on demand', () => {
    const off = new ApiKeyCache(0);
    off.remember('known', principal);
    off.remember('unknown', null);
    expect(off.get('known')).toBeUndefined();
    expect(off.get('unknown')).toBeUndefined();
    const on = new ApiKeyCache(5000);
    on.remember('known', principal);
    on.forget('known');
    expect(on.get('known')).toBeUndefined();
  });
});
