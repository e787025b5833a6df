import type { DestinationPolicy } from '../../../../common/net/destination-policy';
import type { DeliveryTarget } from '../../../webhook-endpoints/delivery-target.reader';
import type { TemplateFields } from '../../../webhook-endpoints/destination.rules';
import type { SendResult } from '../webhook-sender';

/*
 * The one seam between the delivery engine and where a webhook goes (docs/ARCHITECTURE.md
 * "Destinations"). The attempt runner builds one message per attempt (the stored body, the
 * signed headers) and hands it to its endpoint's destination: HTTP (http.destination.ts), or a
 * broker, one file per type (rabbitmq.destination.ts, nats.destination.ts, mqtt.destination.ts),
 * listed in BROKER_DESTINATIONS (destination-pool.ts). Retries, rate limits, ordering, fairness
 * and the delivery log stay in the engine: a destination only sends once and says how it went.
 */

/** One attempt's message, whatever carries it. */
export interface OutboundMessage {
  /** The endpoint as read for this attempt (its url or destination, headers, auth, tls). */
  target: DeliveryTarget;
  webhookId: string;
  /** The stored body: the same bytes on every destination and every attempt. */
  body: string;
  /**
   * The attempt's headers signed at `at`: the endpoint's own, then the signatures, ids, attempt,
   * sequence and traceparent. Each destination adds its content type (HTTP its user-agent too);
   * HTTP signs again for the resend a 401 earns.
   */
  headersAt(at: Date): Record<string, string>;
  /** When the attempt got its place (the rate limit's clock): what its webhook-timestamp says. */
  signedAt: Date;
  /** The values of the routing templates ({webhookType}, {action}, ...). */
  fields: TemplateFields;
}

/** How long an attempt may take: the answer within `timeoutMs`, nothing at all past `leaseUntil`. */
export interface SendDeadline {
  timeoutMs: number;
  leaseUntil: Date;
}

/**
 * Sends one attempt's message and says how it went; never throws (a failure is a SendResult).
 * A broker's answer goes in `responseBody` (at most 1,024 bytes), `status` stays null.
 */
export interface Destination {
  send(message: OutboundMessage, deadline: SendDeadline): Promise<SendResult>;
  /** Closes its connections; a destination is not used after. */
  close(): Promise<void>;
}

/** What a broker destination is opened with: one endpoint's destination, as read for an attempt. */
export interface BrokerEndpoint {
  endpointId: string;
  destination: NonNullable<DeliveryTarget['destination']>;
  tls: DeliveryTarget['tls'];
}

export interface BrokerOptions {
  /** Where a broker may be (checked on the resolved addresses before each connection). */
  policy: DestinationPolicy;
  /** WEBHOOK_TIMEOUT_MS: connecting, and waiting for the broker's answer. */
  timeoutMs: number;
}

/** Opens a broker destination of one type: one connection, reused, reopened after a failure. */
export type OpenBrokerDestination = (endpoint: BrokerEndpoint, options: BrokerOptions) => Destination;
