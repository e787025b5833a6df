import { Logger } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import type { DestinationType } from '../../../webhook-endpoints/destination.rules';
import type { DeliveryTarget } from '../../../webhook-endpoints/delivery-target.reader';
import type { BrokerOptions, Destination, OpenBrokerDestination } from './destination';
import { MqttDestination } from './mqtt.destination';
import { NatsDestination } from './nats.destination';
import { RabbitMqDestination } from './rabbitmq.destination';

/**
 * Every broker type and how its destinations are opened: a new type (Kafka, SQS, Pub/Sub) is one
 * file implementing Destination (usually a BrokerDestination) and one line here, beside its
 * fields in destination.rules.ts.
 */
export const BROKER_DESTINATIONS: Record<DestinationType, OpenBrokerDestination> = {
  rabbitmq: (endpoint, options) => new RabbitMqDestination(endpoint, options),
  nats: (endpoint, options) => new NatsDestination(endpoint, options),
  mqtt: (endpoint, options) => new MqttDestination(endpoint, options),
};

/** A broker connection unused this long is closed (a deleted endpoint's too, in a process that did not delete it). */
const IDLE_CLOSE_MS = 5 * 60_000;
/** Broker connections one process keeps open at most; past it the least recently used is closed. */
const OPEN_MAX = 10_000;

interface Pooled {
  fingerprint: string;
  destination: Destination;
}

/**
 * The broker destinations of this process: at most one per endpoint, keyed by the endpoint's id
 * and a fingerprint of its destination (url, credentials, names, TLS), so a changed destination
 * gets a new connection and the stale one is closed. A deleted or changed endpoint's destination
 * is closed when this process is told (DeliveryTargetReader.destinationChanged), otherwise once
 * idle.
 */
export class DestinationPool {
  private readonly logger = new Logger('WebhookDelivery');
  /** Whatever leaves the cache (replaced, dropped, idle past its time, cleared) has its connection closed. */
  private readonly pooled: LRUCache<string, Pooled>;
  private readonly closing = new Set<Promise<void>>();

  constructor(
    private readonly options: BrokerOptions,
    private readonly types: Record<DestinationType, OpenBrokerDestination> = BROKER_DESTINATIONS,
    idleCloseMs = IDLE_CLOSE_MS,
  ) {
    this.pooled = new LRUCache<string, Pooled>({
      max: OPEN_MAX,
      ttl: idleCloseMs,
      ttlAutopurge: true,
      updateAgeOnGet: true,
      dispose: (entry, endpointId) => this.closeOne(endpointId, entry),
    });
  }

  /** The endpoint's broker destination, opened on first use (its connection opens on its first send). */
  destinationFor(target: DeliveryTarget & { destination: NonNullable<DeliveryTarget['destination']> }): Destination {
    const current = this.pooled.get(target.endpointId);
    if (current?.fingerprint === target.destination.fingerprint) return current.destination;
    const open = this.types[target.destination.settings.type];
    const destination = open({ endpointId: target.endpointId, destination: target.destination, tls: target.tls }, this.options);
    // Replacing the entry closes the stale connection (dispose).
    this.pooled.set(target.endpointId, { fingerprint: target.destination.fingerprint, destination });
    return destination;
  }

  /** Closes the endpoint's destination, if this process has one (it changed, or the endpoint is gone). */
  drop(endpointId: string): void {
    this.pooled.delete(endpointId);
  }

  /** How many endpoints have a destination open in this process. */
  get size(): number {
    return this.pooled.size;
  }

  async close(): Promise<void> {
    this.pooled.clear();
    await Promise.all(this.closing);
  }

  private closeOne(endpointId: string, entry: Pooled): void {
    // In-flight attempts on it finish with a failure and are retried on the new one.
    const closed = entry.destination
      .close()
      .catch((error: unknown) => this.logger.warn({ endpointId, err: String(error) }, 'could not close a broker connection'))
      .finally(() => this.closing.delete(closed));
    this.closing.add(closed);
  }
}
