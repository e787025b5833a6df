/**
 * Tells an organization's ordinary traffic from a burst. Events of an organization beyond
 * `threshold` in the last `windowMs` go to the bulk lane, a queue of its own, so a burst from one
 * organization queues behind itself instead of in front of everyone else's webhooks.
 */
export class BurstTracker {
  /** organization -> counts per one-second bucket within the window */
  private readonly buckets = new Map<string, Map<number, number>>();

  constructor(
    private readonly threshold: number,
    private readonly windowMs = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** Counts one event of the organization and says which lane it belongs in. */
  lane(organizationId: string): 'main' | 'bulk' {
    const second = Math.floor(this.now() / 1000);
    const oldest = second - Math.ceil(this.windowMs / 1000) + 1;
    let counts = this.buckets.get(organizationId);
    if (!counts) {
      counts = new Map();
      this.buckets.set(organizationId, counts);
    }
    let recent = 0;
    for (const [bucket, count] of counts) {
      if (bucket < oldest) counts.delete(bucket);
      else recent += count;
    }
    counts.set(second, (counts.get(second) ?? 0) + 1);
    if (this.buckets.size > 100_000) this.forgetIdle(oldest);
    return recent >= this.threshold ? 'bulk' : 'main';
  }

  private forgetIdle(oldest: number): void {
    for (const [organizationId, counts] of this.buckets) {
      if ([...counts.keys()].every((bucket) => bucket < oldest)) this.buckets.delete(organizationId);
    }
  }
}
