// stats/: per-endpoint delivery statistics, read from the delivery log.
import { Injectable } from '@nestjs/common';
import { StatsBucketRow, WebhookStatsReader } from './webhook-stats.reader';
import { resolveStatsWindow, StatsRequest } from './webhook-stats.rules';

/** Delivery statistics of the delivery log, for the portal's chart and for monitoring. */
@Injectable()
export class WebhookStatsService {
  constructor(private readonly reader: WebhookStatsReader) {}

  /** Every bucket of the window asked for; a window that cannot be answered is a 400 before any query. */
  async buckets(organizationId: string, request: StatsRequest & { endpointId?: string }): Promise<StatsBucketRow[]> {
    const window = resolveStatsWindow(request, new Date());
    return this.reader.buckets({ organizationId, endpointId: request.endpointId?.toLowerCase(), window });
  }
}
