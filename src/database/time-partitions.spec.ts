import { expiredPartitions, partitionDay, utcDay } from './time-partitions';

describe('day partitions', () => {
  it('reads the UTC day from a partition name, and none from the default partition', () => {
    expect(partitionDay('webhook_delivery_p20261126')).toEqual(new Date('2026-11-26T00:00:00Z'));
    expect(partitionDay('webhook_delivery_default')).toBeNull();
    expect(utcDay(new Date('2026-11-26T23:59:59.999Z'))).toEqual(new Date('2026-11-26T00:00:00Z'));
  });

  it('expires only days wholly before the cut-off, oldest first, never the default partition', () => {
    const names = ['t_p20261125', 't_default', 't_p20261123', 't_p20261124', 't_p20261126'];
    expect(expiredPartitions(names, new Date('2026-11-25T00:00:00Z'))).toEqual(['t_p20261123', 't_p20261124']);
    // The 25th is partly inside the retention until its last millisecond has passed.
    expect(expiredPartitions(names, new Date('2026-11-25T23:59:59.999Z'))).toEqual(['t_p20261123', 't_p20261124']);
    expect(expiredPartitions(names, new Date('2026-11-26T00:00:00Z'))).toEqual(['t_p20261123', 't_p20261124', 't_p20261125']);
  });
});
