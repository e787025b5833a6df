import { Injectable } from '@nestjs/common';
import { MaintenanceJob } from '../../common/scheduling/maintenance-job';
import { AppConfig, runsWorker } from '../../config/app-config';
import { WebhookEndpointsService } from './webhook-endpoints.service';

/**
 * Erases rotated-out secrets once their window has closed, so a secret nobody should sign with
 * any more is not kept at rest. Runs in worker processes (ROLE=worker|all) every
 * WEBHOOK_SECRET_CLEANUP_INTERVAL; delivery already stops using a previous secret at its expiry
 * instant, so this only decides how soon it leaves storage. Rare and never waiting on a lock, so
 * it cannot queue up behind, or hold up, changes to the configuration.
 */
@Injectable()
export class PreviousSecretCleanup extends MaintenanceJob {
  constructor(
    private readonly endpoints: WebhookEndpointsService,
    config: AppConfig,
  ) {
    super({
      name: 'PreviousSecretCleanup',
      intervalMs: config.webhook.secretCleanupIntervalMs,
      runsHere: runsWorker(config),
      failure: 'erasing expired previous webhook secrets failed',
    });
  }

  protected async runPass(): Promise<void> {
    const erased = await this.endpoints.eraseExpiredPreviousSecrets();
    if (erased > 0) this.logger.log({ erased }, 'erased expired previous webhook secrets');
  }
}
