import { MikroORM } from '@mikro-orm/postgresql';
import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { withTimeout } from '../../common/async/with-timeout';
import { AppConfig } from '../../config/app-config';
import { gauge } from '../../common/metrics';
import { queryRows } from '../raw-sql';
import { nextState, REPLICA_LAG_SQL, ReplicaReading, replicaLabel, ReplicaState, UNMEASURED } from './replica-lag';
import { ReplicaRoutingDriver } from './replica-routing.driver';

/**
 * Four readings a second. A replica that stops answering is out of rotation when the next probe
 * times out, within a second (interval + timeout); the timeout is no shorter, so that a busy
 * process's slow answer does not take a healthy replica out.
 */
export const PROBE_INTERVAL_MS = 250;
export const PROBE_TIMEOUT_MS = 700;

/** Measures each replica's lag in this process and tells the driver which replicas may serve reads. */
@Injectable()
export class ReplicaMonitor implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('ReplicaMonitor');
  private readonly labels: string[];
  private readonly states: ReplicaState[];
  private readonly probing: boolean[];
  private timer: NodeJS.Timeout | null = null;
  // Registered here rather than at import: a process without replicas shows none of them.
  private readonly lagGauge = gauge('db_replica_lag_seconds', 'Replication lag of each read replica at its last reading', ['replica']);
  private readonly usableGauge = gauge('db_replica_usable', 'Whether a read replica serves reads (1) or is skipped (0)', ['replica']);

  constructor(
    private readonly orm: MikroORM,
    private readonly config: AppConfig,
  ) {
    this.labels = config.replicas.urls.map(replicaLabel);
    this.states = this.labels.map(() => UNMEASURED);
    this.probing = this.labels.map(() => false);
  }

  private get driver(): ReplicaRoutingDriver {
    return this.orm.em.getDriver() as unknown as ReplicaRoutingDriver;
  }

  onApplicationBootstrap(): void {
    this.probeAll();
    this.timer = setInterval(() => this.probeAll(), PROBE_INTERVAL_MS);
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private get stopped(): boolean {
    return this.timer === null;
  }

  private probeAll(): void {
    this.labels.forEach((_, index) => {
      // A probe still waiting on a dead host is not joined by another; its timeout already counted.
      if (this.probing[index]) return;
      this.probing[index] = true;
      const probe = this.measure(index);
      void withTimeout(probe, PROBE_TIMEOUT_MS)
        .then(
          (lagMs) => this.record(index, { lagMs }),
          (error: unknown) => this.record(index, null, error),
        )
        .finally(() => void probe.catch(() => undefined).finally(() => (this.probing[index] = false)));
    });
  }

  private async measure(index: number): Promise<number> {
    const knex = this.driver.replicaConnections()[index].getKnex();
    const [row] = await queryRows<{ lag_ms: number }>(knex, REPLICA_LAG_SQL);
    return row.lag_ms;
  }

  private record(index: number, reading: ReplicaReading, error?: unknown): void {
    // A probe answered while the pools close is no news about the replica.
    if (this.stopped) return;
    const label = this.labels[index];
    const previous = this.states[index];
    const state = nextState(previous, reading, this.config.replicas.maxLagMs);
    this.states[index] = state;
    if (state.lagMs !== null) this.lagGauge.set({ replica: label }, Number.isFinite(state.lagMs) ? state.lagMs / 1000 : -1);
    this.usableGauge.set({ replica: label }, state.usable ? 1 : 0);
    if (previous.usable && !state.usable) {
      const why =
        state.lagMs !== null
          ? `${Math.round(state.lagMs)} ms behind`
          : `unreachable (${error instanceof Error ? error.message : String(error)})`;
      this.logger.warn(`read replica ${label} skipped: ${why}; its reads go to the primary`);
    } else if (!previous.usable && state.usable) {
      this.logger.log(`read replica ${label} serves reads`);
    }
    this.driver.setUsableReplicas(this.states.flatMap((s, i) => (s.usable ? [i] : [])));
  }
}
