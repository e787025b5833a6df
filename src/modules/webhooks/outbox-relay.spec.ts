import { interleaveByOrganization } from './outbox-relay.service';

describe('interleaveByOrganization', () => {
  it('takes one event per organization in turn, keeping each organization in order', () => {
    const rows = [
      { id: 'a1', organization_id: 'A' },
      { id: 'a2', organization_id: 'A' },
      { id: 'a3', organization_id: 'A' },
      { id: 'b1', organization_id: 'B' },
      { id: 'c1', organization_id: 'C' },
      { id: 'b2', organization_id: 'B' },
    ];
    expect(interleaveByOrganization(rows).map((r) => r.id)).toEqual(['a1', 'b1', 'c1', 'a2', 'b2', 'a3']);
  });

  it('keeps every row', () => {
    expect(interleaveByOrganization([])).toEqual([]);
  });
});
