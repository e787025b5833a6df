/**
 * What a worker learned of each endpoint's attempts since it last wrote them down: whether the
 * run of failures ended (a success) and what failed after that. Kept in memory and written once a
 * second in one statement, rather than with every batch of results: auto-disable judges runs of
 * days, while a health row written by every batch would be one hot row all workers queue on.
 */
export interface HealthChange {
  endpointId: string;
  organizationId: string;
  /** The last success seen, or null: when set, the run of failures restarts after it. */
  succeededAt: Date | null;
  /** The first failure after the last success seen (or since the last write), or null. */
  firstFailureAt: Date | null;
  /** Webhooks that failed after the last success seen: each counted once per retry cycle. */
  failedWebhooks: number;
  /** Attempts that failed after the last success seen, every one counted (`operational` `failing`). */
  consecutiveFailures: number;
}

export class EndpointHealthTally {
  private changes = new Map<string, HealthChange>();

  /**
   * One attempt's outcome. A failure counts its webhook only when it is the first attempt of the
   * webhook's retry cycle, so a webhook retried ten times is one failed webhook.
   */
  add(attempt: { endpointId: string; organizationId: string; succeeded: boolean; firstOfCycle: boolean }, at: Date): void {
    const change = this.changes.get(attempt.endpointId) ?? {
      endpointId: attempt.endpointId,
      organizationId: attempt.organizationId,
      succeededAt: null,
      firstFailureAt: null,
      failedWebhooks: 0,
      consecutiveFailures: 0,
    };
    if (attempt.succeeded) {
      change.succeededAt = at;
      change.firstFailureAt = null;
      change.failedWebhooks = 0;
      change.consecutiveFailures = 0;
    } else {
      change.firstFailureAt ??= at;
      if (attempt.firstOfCycle) change.failedWebhooks += 1;
      change.consecutiveFailures += 1;
    }
    this.changes.set(attempt.endpointId, change);
  }

  /** Everything gathered so far, in endpoint id order (so concurrent writers lock rows alike); empties the tally. */
  take(): HealthChange[] {
    const taken = [...this.changes.values()].sort((a, b) => (a.endpointId < b.endpointId ? -1 : 1));
    this.changes = new Map();
    return taken;
  }
}
