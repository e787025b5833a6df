import { interleaveByOrganization } from './outbox-relay.service';

describe('interleaveByOrganization', () => {
  it('takes one event per organization in turn, keeping each organization in order', () => {
    const rows = [
      { id: 'a1', organizationId: 'A' },
      { id: 'a2', organizationId: 'A' },
      { id: 'a3', organizationId: 'A' },
      { id: 'b1', organizationId: 'B' },
      { id: 'c1', organizationId: 'C' },
      { id: 'b2', organizationId: 'B' },
    ];
    expect(interleaveByOrganization(rows).map((r) => r.id)).toEqual(['a1', 'b1', 'c1', 'a2', 'b2', 'a3']);
  });

  it('keeps every row', () => {
    expect(interleaveByOrganization([])).toEqual([]);
  });
});
