/**
 * The webhook types and the built-in resource types: the words every layer shares when it speaks
 * of events (the catalogue, extension modules declaring events of their own, endpoints' filters).
 * The catalogue in modules/domain-events fixes what each built-in event carries.
 */
export const WEBHOOK_TYPES = ['payment', 'transaction', 'nft', 'kyc', 'document', 'custodialAccount', 'operational'] as const;
export type WebhookType = (typeof WEBHOOK_TYPES)[number];

/** The resourceTypes of the built-in catalogue; extension modules declare others (src/extensions/registry.ts). */
export const BUILT_IN_RESOURCE_TYPES: readonly string[] = ['Wallet', 'Token', 'Transaction', 'WebhookTest', 'WebhookEndpoint', 'Webhook'];
