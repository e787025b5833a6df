import { FILTER_LIMITS, filterMatches, filterProblems } from './content-filter.rules';

const event = {
  webhookType: 'transaction',
  resourceType: 'Transaction',
  action: 'created',
  organizationId: 'org_1',
  resourceId: 'tx_1',
  changes: null,
  data: {
    amount: '12.50',
    count: 3,
    zero: 0,
    confirmed: true,
    memo: null,
    tags: ['nft', 'erc721', 7],
    pair: [1, 2],
    createdAtUtc: '2026-11-22T01:25:42.123456+00:00',
    owner: { address: '0xabc', name: 'Alice' },
  },
};

/** The filter as a user would send it (parsed JSON), matched against the event above. */
const matches = (filter: unknown, on: Record<string, unknown> = event): boolean =>
  filterMatches(JSON.parse(JSON.stringify(filter)) as Record<string, unknown>, on);

/** The fields named by the problems of a filter, in order. */
const fields = (filter: unknown): string[] => filterProblems(filter).map((problem) => problem.field);

describe('filterMatches', () => {
  it('matches everything with {}', () => {
    expect(matches({})).toBe(true);
    expect(matches({}, {})).toBe(true);
  });

  it('matches a literal when the field is present and equal, with strict JSON types', () => {
    expect(matches({ action: 'created' })).toBe(true);
    expect(matches({ action: 'updated' })).toBe(false);
    expect(matches({ action: 'Created' })).toBe(false);
    expect(matches({ data: { count: 3 } })).toBe(true);
    expect(matches({ data: { count: '3' } })).toBe(false);
    expect(matches({ data: { amount: '12.50' } })).toBe(true);
    expect(matches({ data: { amount: 12.5 } })).toBe(false);
    expect(matches({ data: { confirmed: true } })).toBe(true);
    expect(matches({ data: { confirmed: 'true' } })).toBe(false);
    expect(matches({ data: { zero: false } })).toBe(false);
    expect(matches({ data: { memo: null } })).toBe(true);
    expect(matches({ changes: null })).toBe(true);
    expect(matches({ data: { nothing: null } })).toBe(false);
  });

  it('requires every key of an object to hold', () => {
    expect(matches({ webhookType: 'transaction', action: 'created', data: { count: 3 } })).toBe(true);
    expect(matches({ webhookType: 'transaction', action: 'created', data: { count: 4 } })).toBe(false);
  });

  it('matches a scalar literal against an element of an array field, and an array literal only against an equal array', () => {
    expect(matches({ data: { tags: 'nft' } })).toBe(true);
    expect(matches({ data: { tags: 7 } })).toBe(true);
    expect(matches({ data: { tags: '7' } })).toBe(false);
    expect(matches({ data: { tags: 'erc1155' } })).toBe(false);
    expect(matches({ data: { pair: [1, 2] } })).toBe(true);
    expect(matches({ data: { pair: [2, 1] } })).toBe(false);
    expect(matches({ data: { pair: [1] } })).toBe(false);
    expect(matches({ data: { pair: [1, 2, 3] } })).toBe(false);
    expect(matches({ data: { pair: ['1', '2'] } })).toBe(false);
    expect(matches({ data: { count: [3] } })).toBe(false);
    expect(matches({ data: { tags: [] } })).toBe(false);
    expect(matches({ data: { list: [] } }, { data: { list: [] } })).toBe(true);
  });

  it('descends into objects; keys below an absent or non-object field are missing', () => {
    expect(matches({ data: { owner: { name: 'Alice' } } })).toBe(true);
    expect(matches({ data: { owner: { name: 'Bob' } } })).toBe(false);
    expect(matches({ data: { amount: { length: 5 } } })).toBe(false);
    expect(matches({ data: { tags: { length: 3 } } })).toBe(false);
    expect(matches({ data: { tags: { 0: 'nft' } } })).toBe(false);
    expect(matches({ changes: { status: 'done' } })).toBe(false);
    expect(matches({ data: { nowhere: { deeper: 1 } } })).toBe(false);
    expect(matches({ data: { nowhere: { deeper: { $exist: false } } } })).toBe(true);
    expect(matches({ data: { amount: { length: { $exist: false } } } })).toBe(true);
    expect(matches({ changes: { status: { $neq: 'done' } } })).toBe(true);
    expect(matches({ changes: { status: { $nin: ['done'] } } })).toBe(true);
    // An empty object asks nothing of the field, so it holds wherever it is.
    expect(matches({ data: { nowhere: {} } })).toBe(true);
  });

  it('never reads inherited properties as fields', () => {
    expect(matches({ data: { owner: { toString: { $exist: true } } } })).toBe(false);
    expect(matches({ constructor: { $exist: false } })).toBe(true);
    expect(matches({ data: { tags: { length: { $exist: false } } } })).toBe(true);
  });

  it('$eq matches as the literal does, $neq when it does not, a missing field included', () => {
    expect(matches({ action: { $eq: 'created' } })).toBe(true);
    expect(matches({ action: { $eq: 'updated' } })).toBe(false);
    expect(matches({ data: { count: { $eq: '3' } } })).toBe(false);
    expect(matches({ data: { tags: { $eq: 'nft' } } })).toBe(true);
    expect(matches({ data: { pair: { $eq: [1, 2] } } })).toBe(true);
    expect(matches({ data: { pair: { $eq: [2, 1] } } })).toBe(false);
    expect(matches({ data: { memo: { $eq: null } } })).toBe(true);
    expect(matches({ data: { missing: { $eq: null } } })).toBe(false);

    expect(matches({ action: { $neq: 'updated' } })).toBe(true);
    expect(matches({ action: { $neq: 'created' } })).toBe(false);
    expect(matches({ data: { count: { $neq: '3' } } })).toBe(true);
    expect(matches({ data: { tags: { $neq: 'nft' } } })).toBe(false);
    expect(matches({ data: { pair: { $neq: [2, 1] } } })).toBe(true);
    expect(matches({ data: { memo: { $neq: null } } })).toBe(false);
    expect(matches({ data: { missing: { $neq: null } } })).toBe(true);
    expect(matches({ data: { missing: { $neq: 'x' } } })).toBe(true);
  });

  it('$gt $gte $lt $lte compare a number field with a number operand', () => {
    expect(matches({ data: { count: { $gt: 2 } } })).toBe(true);
    expect(matches({ data: { count: { $gt: 3 } } })).toBe(false);
    expect(matches({ data: { count: { $gte: 3 } } })).toBe(true);
    expect(matches({ data: { count: { $gte: 3.5 } } })).toBe(false);
    expect(matches({ data: { count: { $lt: 4 } } })).toBe(true);
    expect(matches({ data: { count: { $lt: 3 } } })).toBe(false);
    expect(matches({ data: { count: { $lte: 3 } } })).toBe(true);
    expect(matches({ data: { count: { $lte: -1 } } })).toBe(false);
    expect(matches({ data: { count: { $gt: 1, $lt: 5 } } })).toBe(true);
    expect(matches({ data: { count: { $gt: 1, $lt: 2 } } })).toBe(false);
  });

  it('$gt $gte $lt $lte match nothing that is not a number for a number, and never a missing field', () => {
    for (const operator of ['$gt', '$gte', '$lt', '$lte']) {
      expect(matches({ data: { amount: { [operator]: 12.5 } } })).toBe(false); // a decimal string
      expect(matches({ data: { tags: { [operator]: 7 } } })).toBe(false);
      expect(matches({ data: { memo: { [operator]: 0 } } })).toBe(false);
      expect(matches({ data: { confirmed: { [operator]: 0 } } })).toBe(false);
      expect(matches({ data: { missing: { [operator]: 0 } } })).toBe(false);
      expect(matches({ data: { count: { [operator]: '2026-11-22T01:25:42Z' } } })).toBe(false);
    }
  });

  describe('date-times', () => {
    const at = (createdAtUtc: unknown) => ({ data: { createdAtUtc } });
    const micro = '2026-11-22T01:25:42.123456+00:00';

    it('compare as instants across offsets', () => {
      expect(matches({ data: { createdAtUtc: { $gt: '2026-11-22T01:25:42Z' } } })).toBe(true);
      expect(matches({ data: { createdAtUtc: { $lt: '2026-11-22T02:25:43+01:00' } } })).toBe(true);
      expect(matches({ data: { createdAtUtc: { $gt: '2026-11-22T02:25:43+01:00' } } })).toBe(false);
      expect(matches({ data: { createdAtUtc: { $gte: '2026-11-21T20:25:42.123456-05:00' } } })).toBe(true);
      expect(matches({ data: { createdAtUtc: { $lte: '2026-11-21T20:25:42.123456-05:00' } } })).toBe(true);
      expect(matches({ data: { createdAtUtc: { $lt: '2026-11-21T20:25:42.123456-05:00' } } })).toBe(false);
      expect(matches({ data: { createdAtUtc: { $gt: '2026-11-22T06:55:42.123455+05:30' } } })).toBe(true);
      // A new year's first half hour at +01:00 is still the old year in UTC.
      const newYear = at('2027-01-01T00:30:00+01:00');
      expect(matches({ data: { createdAtUtc: { $lt: '2026-12-31T23:59:59.9Z' } } }, newYear)).toBe(true);
      expect(matches({ data: { createdAtUtc: { $gte: '2027-01-01T00:00:00Z' } } }, newYear)).toBe(false);
      expect(matches({ data: { createdAtUtc: { $gt: '2026-02-28T23:59:59-01:00' } } }, at('2026-03-01T00:00:00Z'))).toBe(false);
      expect(matches({ data: { createdAtUtc: { $gt: '2024-02-28T23:59:59-01:00' } } }, at('2024-03-01T00:00:00Z'))).toBe(true);
    });

    it('compare fractions to their last digit, beyond milliseconds', () => {
      const later = '2026-11-22T02:25:42.1234561+01:00';
      expect(matches({ data: { createdAtUtc: { $lt: later } } })).toBe(true);
      expect(matches({ data: { createdAtUtc: { $lte: later } } })).toBe(true);
      expect(matches({ data: { createdAtUtc: { $gt: later } } })).toBe(false);
      expect(matches({ data: { createdAtUtc: { $gte: later } } })).toBe(false);
      expect(matches({ data: { createdAtUtc: { $gt: '2026-11-22T01:25:42.123455Z' } } })).toBe(true);
      expect(matches({ data: { createdAtUtc: { $gt: '2026-11-22T01:25:42.123457Z' } } })).toBe(false);
      // Trailing zeros do not change the instant.
      expect(matches({ data: { createdAtUtc: { $gte: '2026-11-22T01:25:42.1234560000Z', $lte: '2026-11-22T01:25:42.123456Z' } } })).toBe(
        true,
      );
      expect(matches({ data: { createdAtUtc: { $gt: '2026-11-22T01:25:42.123456000001Z' } } })).toBe(false);
      const whole = at('2026-11-22T01:25:42.0+00:00');
      expect(matches({ data: { createdAtUtc: { $gte: '2026-11-22T01:25:42Z', $lte: '2026-11-22T01:25:42.000Z' } } }, whole)).toBe(true);
      expect(matches({ data: { createdAtUtc: { $lt: micro } } }, whole)).toBe(true);
    });

    it('match nothing when the field is not such a date-time', () => {
      const filter = { data: { createdAtUtc: { $gt: '2000-01-01T00:00:00Z' } } };
      expect(matches(filter)).toBe(true);
      const malformed = ['2026-11-22T01:25:42', '2026-11-22T01:25Z', '2026-11-22 01:25:42Z', '2026-11-22T01:25:42.Z', '2026-11-22', ''];
      const badOffsets = ['2026-11-22T01:25:42+0100', '2026-11-22T01:25:42+01', '2026-11-22T01:25:42+24:00', '2026-11-22T01:25:42z'];
      const outOfRange = ['2026-13-22T01:25:42Z', '2026-02-29T01:25:42Z', '2026-11-22T24:00:00Z', '2026-11-22T01:60:00Z'];
      const notStrings = [1_800_000_000, null, ['2026-11-22T01:25:42Z']];
      for (const value of [...malformed, ...badOffsets, ...outOfRange, ...notStrings]) expect(matches(filter, at(value))).toBe(false);
      expect(matches(filter, at('2028-02-29T01:25:42Z'))).toBe(true);
      expect(matches(filter, {})).toBe(false);
    });
  });

  it('$in matches a field one of the scalars matches as a literal would; $nin when none does, a missing field included', () => {
    expect(matches({ action: { $in: ['created', 'updated'] } })).toBe(true);
    expect(matches({ action: { $in: ['deleted', 'updated'] } })).toBe(false);
    expect(matches({ data: { count: { $in: ['3', 4] } } })).toBe(false);
    expect(matches({ data: { count: { $in: [3] } } })).toBe(true);
    expect(matches({ data: { tags: { $in: ['erc1155', 'erc721'] } } })).toBe(true);
    expect(matches({ data: { memo: { $in: [null] } } })).toBe(true);
    expect(matches({ data: { missing: { $in: [null] } } })).toBe(false);
    expect(matches({ action: { $in: [] } })).toBe(false);

    expect(matches({ action: { $nin: ['deleted', 'updated'] } })).toBe(true);
    expect(matches({ action: { $nin: ['created'] } })).toBe(false);
    expect(matches({ data: { count: { $nin: ['3'] } } })).toBe(true);
    expect(matches({ data: { tags: { $nin: ['erc721'] } } })).toBe(false);
    expect(matches({ data: { missing: { $nin: [null] } } })).toBe(true);
    expect(matches({ action: { $nin: [] } })).toBe(true);
  });

  it('$exist tells a present key (even null) from an absent one', () => {
    expect(matches({ data: { memo: { $exist: true } } })).toBe(true);
    expect(matches({ data: { memo: { $exist: false } } })).toBe(false);
    expect(matches({ data: { missing: { $exist: true } } })).toBe(false);
    expect(matches({ data: { missing: { $exist: false } } })).toBe(true);
    expect(matches({ changes: { $exist: true } })).toBe(true);
  });

  it('$startsWith matches a string field that starts with the operand, case-sensitively', () => {
    expect(matches({ data: { owner: { address: { $startsWith: '0xa' } } } })).toBe(true);
    expect(matches({ data: { owner: { address: { $startsWith: '0xA' } } } })).toBe(false);
    expect(matches({ data: { owner: { address: { $startsWith: '' } } } })).toBe(true);
    expect(matches({ data: { tags: { $startsWith: 'nf' } } })).toBe(false);
    expect(matches({ data: { count: { $startsWith: '3' } } })).toBe(false);
    expect(matches({ data: { missing: { $startsWith: '' } } })).toBe(false);
  });

  it('$or holds when some filter matches at its level, $and when every one does', () => {
    expect(matches({ $or: [{ action: 'deleted' }, { action: 'created' }] })).toBe(true);
    expect(matches({ $or: [{ action: 'deleted' }, { action: 'updated' }] })).toBe(false);
    expect(matches({ $and: [{ action: 'created' }, { data: { count: 3 } }] })).toBe(true);
    expect(matches({ $and: [{ action: 'created' }, { data: { count: 4 } }] })).toBe(false);
    expect(matches({ action: { $or: [{ $eq: 'deleted' }, { $startsWith: 'cre' }] } })).toBe(true);
    expect(matches({ data: { $or: [{ count: 4 }, { owner: { name: 'Alice' } }] } })).toBe(true);
    expect(matches({ data: { $and: [{ count: { $gt: 1 } }, { count: { $lt: 3 } }] } })).toBe(false);
  });

  it('$not holds when its filter does not match at its level', () => {
    expect(matches({ $not: { action: 'deleted' } })).toBe(true);
    expect(matches({ $not: { action: 'created' } })).toBe(false);
    expect(matches({ data: { count: { $not: { $gt: 5 } } } })).toBe(true);
    expect(matches({ data: { count: { $not: { $lt: 5 } } } })).toBe(false);
    expect(matches({ data: { missing: { $not: { $eq: 1 } } } })).toBe(true);
    expect(matches({ data: { missing: { $not: { $exist: true } } } })).toBe(true);
    expect(matches({ $not: {} })).toBe(false);
  });

  it('nests $or, $and and $not, beside plain keys and other operators', () => {
    const filter = {
      webhookType: 'transaction',
      $or: [{ action: 'deleted' }, { $and: [{ data: { count: { $gte: 3 } } }, { $not: { data: { tags: { $in: ['spam'] } } } }] }],
      data: { $exist: true, owner: { name: { $nin: ['Mallory'] } } },
    };
    expect(matches(filter)).toBe(true);
    expect(matches(filter, { ...event, data: { ...event.data, tags: ['spam'] } })).toBe(false);
    expect(matches(filter, { ...event, action: 'deleted', data: { ...event.data, tags: ['spam'] } })).toBe(true);
    expect(matches(filter, { ...event, data: { ...event.data, owner: { name: 'Mallory' } } })).toBe(false);
    expect(matches(filter, { ...event, webhookType: 'nft' })).toBe(false);
  });

  it('never throws on odd events', () => {
    const hostile = {
      get data(): unknown {
        throw new Error('no');
      },
    };
    const odd = [{}, { data: null }, { data: [] }, { data: 'x' }, { data: { count: 10n } }, { data: { count: undefined } }, hostile];
    const filter = { data: { count: { $gt: 1 }, owner: { name: 'Alice' } }, $or: [{ action: 'x' }, { $not: { data: { tags: 'y' } } }] };
    for (const on of odd) expect(() => filterMatches(filter, on)).not.toThrow();
    expect(filterMatches({ data: { count: { $exist: false } } }, { data: { count: undefined } })).toBe(true);
    expect(filterMatches({ data: { count: { $exist: true } } }, hostile)).toBe(false);
  });
});

describe('filterProblems', () => {
  it('accepts valid filters and null (no filter)', () => {
    expect(filterProblems(null)).toEqual([]);
    expect(filterProblems({})).toEqual([]);
    expect(
      filterProblems({
        action: 'created',
        data: {
          count: { $gt: 1, $lte: 10 },
          createdAtUtc: { $gte: '2026-11-22T02:25:42.1234561+01:00' },
          tags: ['a', 1, true, null],
          amount: { $eq: '12.50', $neq: ['x'] },
          owner: { $exist: true, name: { $startsWith: 'A' } },
          kind: { $in: [], $nin: ['x', 2, null, false] },
        },
        $or: [{ action: 'x' }, { $not: { action: 'y' } }],
        $and: [{}],
      }),
    ).toEqual([]);
  });

  it('refuses a filter that is not an object, naming the field given as root', () => {
    for (const filter of [undefined, 'x', 1, true, [], [{}]]) expect(fields(filter)).toEqual(['filter']);
    expect(filterProblems('x', 'endpoint.filter')).toEqual([{ field: 'endpoint.filter', message: expect.any(String) }]);
    expect(filterProblems({ a: { $foo: 1 } }, 'endpoint.filter').map((p) => p.field)).toEqual(['endpoint.filter.a.$foo']);
  });

  it('refuses an unknown $ key wherever it is', () => {
    expect(filterProblems({ $foo: 1 })).toEqual([{ field: 'filter.$foo', message: expect.stringContaining('$foo is not an operator') }]);
    expect(fields({ $or: [{ action: 'x' }, { action: { $foo: 1 } }] })).toEqual(['filter.$or[1].action.$foo']);
    expect(fields({ data: { $exists: true, amount: { $ne: 1 } } })).toEqual(['filter.data.$exists', 'filter.data.amount.$ne']);
  });

  it('refuses operands of the wrong type, naming each', () => {
    expect(fields({ data: { amount: { $gt: '12.50' } } })).toEqual(['filter.data.amount.$gt']);
    expect(
      fields({ a: { $gte: '2026-11-22T01:25:42' }, b: { $lt: null }, c: { $lte: [1] }, d: { $gt: '2026-11-22T01:25:42.+00:00' } }),
    ).toEqual(['filter.a.$gte', 'filter.b.$lt', 'filter.c.$lte', 'filter.d.$gt']);
    expect(fields({ a: { $gt: Number.NaN }, b: { $lt: Infinity } })).toEqual(['filter.a.$gt', 'filter.b.$lt']);
    expect(fields({ a: { $in: 'x' }, b: { $nin: { x: 1 } }, c: { $in: ['x', ['y']] }, d: { $nin: [1, {}] } })).toEqual([
      'filter.a.$in',
      'filter.b.$nin',
      'filter.c.$in[1]',
      'filter.d.$nin[1]',
    ]);
    expect(fields({ a: { $exist: 'true' }, b: { $exist: 1 }, c: { $startsWith: 1 }, d: { $startsWith: null } })).toEqual([
      'filter.a.$exist',
      'filter.b.$exist',
      'filter.c.$startsWith',
      'filter.d.$startsWith',
    ]);
    expect(fields({ a: { $eq: { x: 1 } }, b: { $neq: [1, [2]] }, c: { $eq: undefined } })).toEqual([
      'filter.a.$eq',
      'filter.b.$neq[1]',
      'filter.c.$eq',
    ]);
  });

  it('refuses $or and $and that are not non-empty arrays of objects, and $not that is not an object', () => {
    expect(fields({ $or: [] })).toEqual(['filter.$or']);
    expect(fields({ $and: {} })).toEqual(['filter.$and']);
    expect(fields({ a: { $or: 'x' } })).toEqual(['filter.a.$or']);
    expect(fields({ $or: [{}, 'x', [], null] })).toEqual(['filter.$or[1]', 'filter.$or[2]', 'filter.$or[3]']);
    expect(fields({ $and: [{ $not: [] }, { $not: null }, { $not: 'x' }] })).toEqual([
      'filter.$and[0].$not',
      'filter.$and[1].$not',
      'filter.$and[2].$not',
    ]);
    expect(fields({ $not: { a: { $bad: 1 } } })).toEqual(['filter.$not.a.$bad']);
  });

  it('refuses literals that are not JSON scalars or arrays of them', () => {
    expect(fields({ tags: ['a', { b: 1 }, ['c']], n: Number.NaN, u: undefined, f: () => 1 })).toEqual([
      'filter.tags[1]',
      'filter.tags[2]',
      'filter.n',
      'filter.u',
      'filter.f',
    ]);
  });

  it('takes ten keys along one path and refuses the eleventh, naming it with its full path', () => {
    const nested = (keys: string[], leaf: unknown): unknown => keys.reduceRight((inner, key) => ({ [key]: inner }), leaf);
    const ten = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j'];
    expect(filterProblems(nested(ten, 1))).toEqual([]);
    expect(filterProblems(nested([...ten.slice(0, 9), '$gt'], 1))).toEqual([]);
    expect(filterProblems(nested([...ten, 'k', 'l'], 1))).toEqual([
      { field: 'filter.a.b.c.d.e.f.g.h.i.j.k', message: expect.stringContaining('at most 10 keys') },
    ]);
    expect(fields(nested([...ten, '$exist'], true))).toEqual(['filter.a.b.c.d.e.f.g.h.i.j.$exist']);
    // Operators count as keys; array elements do not.
    expect(fields({ $or: [nested(ten.slice(0, 8), { $not: { x: 1 } })] })).toEqual(['filter.$or[0].a.b.c.d.e.f.g.h.$not.x']);
    expect(FILTER_LIMITS.maxDepth).toBe(10);
  });

  it('takes 100 nodes (keys plus array elements) and refuses 101, alone', () => {
    const keys = (count: number) => Object.fromEntries(Array.from({ length: count }, (_, i) => [`k${i}`, i]));
    expect(filterProblems(keys(100))).toEqual([]);
    expect(filterProblems({ a: { $in: Array.from({ length: 97 }, (_, i) => i) }, b: 1 })).toEqual([]);
    expect(filterProblems(keys(101))).toEqual([{ field: 'filter', message: expect.stringContaining('at most 100') }]);
    expect(fields({ a: { $in: Array.from({ length: 98 }, (_, i) => i) }, b: 1 })).toEqual(['filter']);
    expect(fields({ ...keys(100), $bad: { $worse: 1 } })).toEqual(['filter']);
  });

  it('refuses more than 8 KiB of compact JSON (UTF-8 bytes), alone', () => {
    const sized = (bytes: number, char = 'x') => ({ a: char.repeat((bytes - '{"a":""}'.length) / Buffer.byteLength(char)) });
    expect(filterProblems(sized(8192))).toEqual([]);
    expect(filterProblems(sized(8193))).toEqual([{ field: 'filter', message: expect.stringContaining('8192 bytes') }]);
    expect(filterProblems(sized(8192 - 2, 'é'))).toEqual([]);
    expect(fields(sized(8192 + 2, 'é'))).toEqual(['filter']);
    expect(fields({ ...sized(8193), $bad: 1 })).toEqual(['filter']);
  });

  it('stops early on a huge or cyclic filter', () => {
    const huge = { $in: Array.from({ length: 200_000 }, (_, i) => `value ${i}`) };
    expect(fields(huge)).toEqual(['filter']);
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    expect(fields(cyclic)).toEqual(['filter']);
  });
});
