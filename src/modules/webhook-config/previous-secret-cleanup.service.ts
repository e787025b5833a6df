import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
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
  private timer: NodeJS.Timeout | null = null;
  private running = false;

  constructor(
    private readonly endpoints: WebhookEndpointsService,
    private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    if (this.config.role === 'api') return;
    this.timer = setInterval(() => void this.run(), this.config.webhook.secretCleanupIntervalMs);
    this.timer.unref();
  }

  private async run(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      const erased = await this.endpoints.eraseExpiredPreviousSecrets();
      if (erased > 0) this.logger.log({ erased }, 'erased expired previous webhook secrets');
    } catch (error) {
      this.logger.warn({ err: error }, 'erasing expired previous webhook secrets failed');
    } finally {
      this.running = false;
    }
  }

  onApplicationShutdown(): void {
    if (this.timer) clearInterval(this.timer);
  }
}
