import { DomainError } from '../../common/errors/domain-error';
import { NotFoundException, BadRequestException, ServiceUnavailableException } from '@nestjs/common';
import { loadConfig } from '../../config/app-config';
import { ConfigError } from '../../config/variables';
import { chooseReplica, readRoute } from './read-route';
import { retryReason } from './read-routing.interceptor';
import { nextState, READINGS_PAST_BOUND_TO_SKIP, replicaLabel, ReplicaState, UNMEASURED } from './replica-lag';

describe('replica configuration', () => {
  const load = (env: Record<string, string>) => loadConfig({ NODE_ENV: 'development', ...env });

  it('has no replicas and a 2 s lag bound by default', () => {
    expect(load({}).replicas).toEqual({ urls: [], maxLagMs: 2000 });
  });

  it('reads a comma-separated list of PostgreSQL URLs and the lag bound', () => {
    const config = load({ DATABASE_REPLICA_URLS: 'postgresql://a:secret@r1:5432/db, postgres://r2/db', DB_REPLICA_MAX_LAG_MS: '500' });
    expect(config.replicas).toEqual({ urls: ['postgresql://a:secret@r1:5432/db', 'postgres://r2/db'], maxLagMs: 500 });
  });

  it('refuses a URL that is not PostgreSQL without echoing it, a replica named twice, and a bound out of range', () => {
    expect(() => load({ DATABASE_REPLICA_URLS: 'postgres://r1/db,http://user:secret@r2/db' })).toThrow(
      /DATABASE_REPLICA_URLS entry 2 must be a postgres or postgresql URL/,
    );
    expect(() => load({ DATABASE_REPLICA_URLS: 'postgres://r1/db,http://user:secret@r2/db' })).not.toThrow(/secret/);
    expect(() => load({ DATABASE_REPLICA_URLS: 'postgres://r1/db,postgres://r1/db' })).toThrow(/names one replica twice/);
    expect(() => load({ DB_REPLICA_MAX_LAG_MS: '0' })).toThrow(ConfigError);
    expect(() => load({ DB_REPLICA_MAX_LAG_MS: 'soon' })).toThrow(/DB_REPLICA_MAX_LAG_MS must be an integer/);
  });
});

describe('chooseReplica', () => {
  it('keeps the primary outside a read route, after a recent write, or with no usable replica', () => {
    expect(chooseReplica(undefined, [0, 1])).toBeUndefined();
    expect(chooseReplica(readRoute(true), [0, 1])).toBeUndefined();
    const route = readRoute(false);
    expect(chooseReplica(route, [])).toBeUndefined();
    expect(route.usedReplica).toBe(false);
  });

  it('picks a usable replica at random and keeps it for the whole request', () => {
    const route = readRoute(false);
    expect(chooseReplica(route, [0, 2, 5], () => 0.5)).toBe(2);
    expect(route.usedReplica).toBe(true);
    // The monitor's later view does not move a request that already reads a replica.
    expect(chooseReplica(route, [5], () => 0)).toBe(2);
    expect(chooseReplica(route, [], () => 0)).toBe(2);
  });
});

describe('nextState', () => {
  const usable: ReplicaState = { usable: true, lagMs: 0, pastBound: 0 };

  it('serves reads from the first reading within the bound, and skips an unanswered probe at once', () => {
    expect(nextState(UNMEASURED, { lagMs: 100 }, 500)).toEqual({ usable: true, lagMs: 100, pastBound: 0 });
    expect(nextState(usable, null, 500)).toEqual(UNMEASURED);
    expect(nextState(usable, { lagMs: 500 }, 500).usable).toBe(true);
  });

  it('skips a replica once its lag stays past the bound, not for one reading', () => {
    let state = usable;
    for (let i = 1; i < READINGS_PAST_BOUND_TO_SKIP; i++) {
      state = nextState(state, { lagMs: 900 }, 500);
      expect(state.usable).toBe(true);
    }
    state = nextState(state, { lagMs: 900 }, 500);
    expect(state).toEqual({ usable: false, lagMs: 900, pastBound: READINGS_PAST_BOUND_TO_SKIP });
    expect(nextState(state, { lagMs: 0 }, 500).usable).toBe(true);
  });

  it('does not start serving a replica whose first readings are past the bound', () => {
    expect(nextState(UNMEASURED, { lagMs: 900 }, 500).usable).toBe(false);
    expect(nextState(UNMEASURED, { lagMs: Infinity }, 500).usable).toBe(false);
  });
});

describe('retryReason', () => {
  it('reads a 404 or a failure of the server again from the primary, and lets other client errors stand', () => {
    expect(retryReason(new DomainError(404, 'WALLET_NOT_FOUND', 'no'))).toBe('not_found');
    expect(retryReason(new NotFoundException())).toBe('not_found');
    expect(retryReason(Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }))).toBe('failure');
    expect(retryReason(new ServiceUnavailableException())).toBe('failure');
    expect(retryReason(new DomainError(400, 'VALIDATION_FAILED', 'bad'))).toBeNull();
    expect(retryReason(new BadRequestException())).toBeNull();
  });
});

describe('replicaLabel', () => {
  it('names a replica by host, port and database, never its credentials', () => {
    expect(replicaLabel('postgresql://user:secret@db-r1.internal:6432/nft?sslmode=require')).toBe('db-r1.internal:6432/nft');
    expect(replicaLabel('postgres://db-r2/nft')).toBe('db-r2:5432/nft');
  });
});
