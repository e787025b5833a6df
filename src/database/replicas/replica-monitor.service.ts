import { MikroORM } from '@mikro-orm/postgresql';
import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { withTimeout } from '../../common/async/with-timeout';
import { Periodic } from '../../common/scheduling/periodic';
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
const PROBE_TIMEOUT_MS = 700;

/** Measures each replica's lag in this process and tells the driver which replicas may serve reads. */
@Injectable()
export class ReplicaMonitor implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('ReplicaMonitor');
  private readonly labels: string[];
  private readonly states: ReplicaState[];
  /** One loop per replica: a probe waiting on a dead host holds up that replica's readings only. */
  private readonly probes: Periodic[];
  private stopped = false;
  /** Resolved at shutdown: a probe stuck on a dead host must not hold shutdown up. */
  private readonly shuttingDown: Promise<void>;
  private shutDown: () => void = () => undefined;
  // Registered here rather than at import: a process without replicas shows none of them.
  private readonly lagGauge = gauge('db_replica_lag_seconds', 'Replication lag of each read replica at its last reading', ['replica']);
  private readonly usableGauge = gauge('db_replica_usable', 'Whether a read replica serves reads (1) or is skipped (0)', ['replica']);

  constructor(
    private readonly orm: MikroORM,
    private readonly config: AppConfig,
  ) {
    this.labels = config.replicas.urls.map(replicaLabel);
    this.states = this.labels.map(() => UNMEASURED);
    this.shuttingDown = new Promise((resolve) => (this.shutDown = resolve));
    this.probes = this.labels.map(
      (label, index) =>
        new Periodic({
          runAtStart: true,
          run: () => this.probe(index),
          intervalMs: PROBE_INTERVAL_MS,
          logger: this.logger,
          failure: `probing read replica ${label} failed`,
        }),
    );
  }

  private get driver(): ReplicaRoutingDriver {
    return this.orm.em.getDriver() as unknown as ReplicaRoutingDriver;
  }

  onApplicationBootstrap(): void {
    for (const probe of this.probes) probe.start();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    this.shutDown();
    await Promise.all(this.probes.map((probe) => probe.stop()));
  }

  /**
   * One reading: recorded when the replica answers or when it has not within PROBE_TIMEOUT_MS; the
   * next reading waits until this probe has really settled, so a probe still waiting on a dead host
   * is not joined by another (its timeout already counted).
   */
  private async probe(index: number): Promise<void> {
    const probe = this.measure(index);
    try {
      this.record(index, { lagMs: await withTimeout(probe, PROBE_TIMEOUT_MS) });
    } catch (error) {
      this.record(index, null, error);
    }
    await Promise.race([probe.catch(() => undefined), this.shuttingDown]);
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
