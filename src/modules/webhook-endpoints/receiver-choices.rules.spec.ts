import { DomainError } from '../../common/errors/domain-error';
import { DEFAULT_CHOICES, parseContentFilter, storedChoices } from './receiver-choices.rules';

function problem(run: () => unknown): DomainError {
  try {
    run();
  } catch (error) {
    return error as DomainError;
  }
  throw new Error('expected a refusal');
}

describe('receiver choices', () => {
  it('takes a valid filter as given and null as none', () => {
    const filter = { resourceType: 'Token', data: { metadata: { name: { $startsWith: 'Vault' } } } };
    expect(parseContentFilter(filter)).toBe(filter);
    expect(parseContentFilter(null)).toBeNull();
  });

  it('refuses an invalid filter with a 400 naming every offending path', () => {
    const error = problem(() =>
      parseContentFilter({ $or: [{ action: 'create' }, { action: { $foo: 1 } }], data: { amount: { $gt: '5' } } }),
    );
    expect(error.status).toBe(400);
    expect(error.code).toBe('VALIDATION_FAILED');
    expect(error.errors?.map((e) => e.field)).toEqual(['filter.$or[1].action.$foo', 'filter.data.amount.$gt']);
    expect(problem(() => parseContentFilter([1])).errors?.map((e) => e.field)).toEqual(['filter']);
    expect(problem(() => parseContentFilter({ $or: [{}], x: { $in: 'a' } })).detail).toContain('filter.x.$in');
  });

  it('reads stored choices, thin and the service schedule by default', () => {
    expect(storedChoices({ payload: 'thin', filter: null, retrySchedule: null })).toEqual(DEFAULT_CHOICES);
    const schedule = [1, 60];
    const choices = storedChoices({ payload: 'full', filter: { action: 'create' }, retrySchedule: schedule });
    expect(choices).toEqual({ payload: 'full', filter: { action: 'create' }, retrySchedule: [1, 60] });
    expect(choices.retrySchedule).not.toBe(schedule);
  });
});
