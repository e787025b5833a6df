import { Injectable, OnModuleDestroy } from '@nestjs/common';
import type { SpanHandle } from '../../../common/tracing/tracing';
import { destinationPolicyOf } from '../../../common/net/destination-policy';
import { AppConfig } from '../../../config/app-config';
import { DeliveryTarget, DeliveryTargetReader } from '../../webhook-endpoints/delivery-target.reader';
import type { TemplateFields } from '../../webhook-endpoints/destination.rules';
import { AttemptSlots } from './attempt-slots';
import type { PlannedAttempt } from './delivery-plan';
import type { Destination, OutboundMessage } from './destinations/destination';
import { DestinationPool } from './destinations/destination-pool';
import { HttpDestination } from './destinations/http.destination';
import type { SendResult } from './webhook-sender';
import { webhookSignatureHeaders } from './webhook-signature';
import { temporaryBlock } from './webhook.rules';

/**
 * The request of one claimed attempt: its message (the stored body, the headers signed at send
 * time) handed to its endpoint's destination, HTTP or a broker (destinations/destination.ts).
 * Slots and the first place under the rate limit are the attempt runner's; this only sends.
 */
@Injectable()
export class AttemptRequests implements OnModuleDestroy {
  private readonly http: HttpDestination;
  /** Broker connections, at most one per endpoint in this process. */
  private readonly brokers: DestinationPool;
  private readonly stopListening: () => void;

  constructor(
    private readonly config: AppConfig,
    slots: AttemptSlots,
    targets: DeliveryTargetReader,
  ) {
    this.http = new HttpDestination(config, slots);
    this.brokers = new DestinationPool({ policy: destinationPolicyOf(config), timeoutMs: config.webhook.timeoutMs });
    this.stopListening = targets.onDestinationChanged((endpointId) => this.brokers.drop(endpointId));
  }

  /**
   * Sends the attempt. `signedAt`: the attempt's time when its endpoint's rate limit gave it its
   * place (Redis's clock, the window's), so its webhook-timestamp names the second it was counted in.
   */
  async send(claim: PlannedAttempt, span: SpanHandle | null, leaseUntil: Date, signedAt = new Date()): Promise<SendResult> {
    const target = claim.target as DeliveryTarget;
    const blocked = temporaryBlock(target, claim.resourceType);
    if (blocked) return { outcome: 'blocked', status: null, error: blocked, durationMs: 0, responseBody: null };
    const message: OutboundMessage = {
      target,
      webhookId: claim.id,
      body: claim.payload,
      headersAt: (at) => headersOf(claim, target, span, at),
      signedAt,
      fields: templateFields(claim),
    };
    return this.destinationOf(target).send(message, { timeoutMs: this.config.webhook.timeoutMs, leaseUntil });
  }

  private destinationOf(target: DeliveryTarget): Destination {
    const destination = target.destination;
    return destination === null ? this.http : this.brokers.destinationFor({ ...target, destination });
  }

  async onModuleDestroy(): Promise<void> {
    this.stopListening();
    await Promise.all([this.http.close(), this.brokers.close()]);
  }
}

/**
 * Every header of one attempt signed at `signedAt`, whatever carries it: the endpoint's own
 * first (none can name one of the service's: parseCustomHeaders refuses them, and the service's
 * below would win over any that did), then the signatures, ids, attempt, sequence and traceparent.
 */
function headersOf(claim: PlannedAttempt, target: DeliveryTarget, span: SpanHandle | null, signedAt: Date): Record<string, string> {
  return {
    ...target.headers,
    // Signed at send time: every attempt carries its own timestamp and the secrets of this moment.
    ...webhookSignatureHeaders(
      claim.id,
      claim.payload,
      { secret: target.secret as string, previous: target.previous, signingKeys: target.signingKeys },
      signedAt,
    ),
    'x-service-webhook-id': claim.id,
    'x-service-webhook-event-id': claim.eventId,
    'x-service-webhook-attempt': String(claim.attempt),
    // Ordered per resource: the webhook's place among those of its resource, the same on every retry.
    ...(claim.sequence !== null ? { 'x-service-webhook-sequence': String(claim.sequence) } : {}),
    // The attempt's own span, so a traced receiver continues the trace of this very attempt.
    ...(span ? { traceparent: span.traceparent } : {}),
  };
}

/**
 * What a routing key, subject or topic template may name. The body holds the webhook's envelope
 * (read only for broker endpoints, whose templates need it).
 */
function templateFields(claim: PlannedAttempt): TemplateFields {
  if (claim.target?.destination == null)
    return {
      webhookType: claim.webhookType,
      action: '',
      resourceType: claim.resourceType,
      resourceId: '',
      organizationId: claim.organizationId,
    };
  const body = JSON.parse(claim.payload) as { action?: string; resourceId?: string };
  return {
    webhookType: claim.webhookType,
    action: body.action ?? '',
    resourceType: claim.resourceType,
    resourceId: body.resourceId ?? '',
    organizationId: claim.organizationId,
  };
}
