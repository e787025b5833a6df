/**
 * The typed catalogue of everything that happens to an organization's API objects. Each entry
 * fixes the webhook type it is filtered by, the resourceType and action integrators see, and the
 * shape of `changes` (README.md "Webhooks"; the OpenAPI document's `webhooks` section).
 */
import { BUILT_IN_RESOURCE_TYPES, ENDPOINT_OPERATIONAL_ACTIONS, WEBHOOK_TYPES, type WebhookType } from '../../common/webhook-types';

export type EndpointOperationalAction = (typeof ENDPOINT_OPERATIONAL_ACTIONS)[number];

export { BUILT_IN_RESOURCE_TYPES, WEBHOOK_TYPES, type WebhookType };

/** Key/value updates of an `update` event: field name to its new value. */
export type EventChanges = Record<string, unknown>;

export type DomainEventInput =
  | { webhookType: 'custodialAccount'; resourceType: 'Wallet'; action: 'create'; resourceId: string; changes: null }
  | { webhookType: 'nft'; resourceType: 'Token'; action: 'create'; resourceId: string; changes: null }
  | { webhookType: 'nft'; resourceType: 'Token'; action: 'update'; resourceId: string; changes: EventChanges }
  | { webhookType: 'transaction'; resourceType: 'Transaction'; action: 'create'; resourceId: string; changes: null }
  // A chain movement whose block a reorg replaced: changes is {status: 'reverted'}.
  | { webhookType: 'transaction'; resourceType: 'Transaction'; action: 'update'; resourceId: string; changes: EventChanges }
  | { webhookType: WebhookType; resourceType: 'WebhookTest'; action: 'test'; resourceId: string; changes: null }
  // What happens to the delivery itself, for the organization's other endpoints (endpointOperational, webhookExhausted).
  | {
      webhookType: 'operational';
      resourceType: 'WebhookEndpoint';
      action: EndpointOperationalAction;
      resourceId: string;
      changes: EventChanges | null;
    }
  | { webhookType: 'operational'; resourceType: 'Webhook'; action: 'exhausted'; resourceId: string; changes: { endpointId: string } };

export type ResourceType = DomainEventInput['resourceType'];
export type EventAction = DomainEventInput['action'];

/** Events carry the token's contract beside the body, for endpoints' contract filters. */
type TokenEvent<A extends 'create' | 'update'> = Extract<DomainEventInput, { resourceType: 'Token'; action: A }> & {
  contractAddress: string;
};

/** `nft` `create` of a token (recorded through the API or first seen on a chain). */
export function tokenCreated(token: { id: string; contractAddress: string }): TokenEvent<'create'> {
  return {
    webhookType: 'nft',
    resourceType: 'Token',
    action: 'create',
    resourceId: token.id,
    changes: null,
    contractAddress: token.contractAddress,
  };
}

/** `nft` `update` of a token: `changes` maps each changed field to its new value. */
export function tokenUpdated(token: { id: string; contractAddress: string }, changes: EventChanges): TokenEvent<'update'> {
  return {
    webhookType: 'nft',
    resourceType: 'Token',
    action: 'update',
    resourceId: token.id,
    changes,
    contractAddress: token.contractAddress,
  };
}

type TransactionEvent<A extends 'create' | 'update'> = Extract<DomainEventInput, { resourceType: 'Transaction'; action: A }> & {
  contractAddress: string | null;
};

/** `transaction` `create` of a movement (API or chain), with its token's contract for endpoint filters. */
export function transactionCreated(transactionId: string, contractAddress: string | null): TransactionEvent<'create'> {
  return {
    webhookType: 'transaction',
    resourceType: 'Transaction',
    action: 'create',
    resourceId: transactionId,
    changes: null,
    contractAddress,
  };
}

/** `transaction` `update` of a chain movement whose block a reorg replaced. */
export function transactionReverted(transactionId: string, contractAddress: string | null): TransactionEvent<'update'> {
  return {
    webhookType: 'transaction',
    resourceType: 'Transaction',
    action: 'update',
    resourceId: transactionId,
    changes: { status: 'reverted' },
    contractAddress,
  };
}

/**
 * `operational` `disabled`/`enabled` when an endpoint is switched (changes: the switch and why),
 * `failing` at its fifth consecutive failed attempt and `recovered` at its first success after
 * that (changes null). Sent to the organization's other endpoints that subscribe to `operational`.
 */
export function endpointOperational(
  endpointId: string,
  action: EndpointOperationalAction,
  disabledReason: string | null = null,
): Extract<DomainEventInput, { resourceType: 'WebhookEndpoint' }> {
  const switched = action === 'disabled' || action === 'enabled';
  return {
    webhookType: 'operational',
    resourceType: 'WebhookEndpoint',
    action,
    resourceId: endpointId,
    changes: switched ? { enabled: action === 'enabled', disabledReason: action === 'enabled' ? null : disabledReason } : null,
  };
}

/** `operational` `exhausted`: a webhook's last scheduled attempt failed (it is now `failed`). */
export function webhookExhausted(webhookId: string, endpointId: string): Extract<DomainEventInput, { resourceType: 'Webhook' }> {
  return { webhookType: 'operational', resourceType: 'Webhook', action: 'exhausted', resourceId: webhookId, changes: { endpointId } };
}

/** The endpoint an `operational` event is about: it is never sent to that endpoint. */
export function operationalSubject(event: {
  webhookType: string;
  resourceId: string;
  changes: Record<string, unknown> | null;
}): string | null {
  if (event.webhookType !== 'operational') return null;
  const endpointId = event.changes?.endpointId;
  return typeof endpointId === 'string' ? endpointId : event.resourceId;
}
