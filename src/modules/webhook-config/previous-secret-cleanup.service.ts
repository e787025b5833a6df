import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { Periodic } from '../../common/scheduling/periodic';
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
export class PreviousSecretCleanup implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('PreviousSecretCleanup');
  private readonly schedule: Periodic;

  constructor(
    private readonly endpoints: WebhookEndpointsService,
    private readonly config: AppConfig,
  ) {
    this.schedule = new Periodic({
      intervalMs: config.webhook.secretCleanupIntervalMs,
      run: async () => {
        const erased = await this.endpoints.eraseExpiredPreviousSecrets();
        if (erased > 0) this.logger.log({ erased }, 'erased expired previous webhook secrets');
      },
      logger: this.logger,
      failure: 'erasing expired previous webhook secrets failed',
    });
  }

  onApplicationBootstrap(): void {
    if (runsWorker(this.config)) this.schedule.start();
  }

  onApplicationShutdown(): Promise<void> {
    return this.schedule.stop();
  }
}
