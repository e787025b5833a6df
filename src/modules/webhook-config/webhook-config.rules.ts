import { WEBHOOK_TYPES, WebhookType } from '../domain-events/domain-event.catalogue';

/** The fields of the configuration as the audit log compares them; the secret only as a token. */
export interface WebhookConfigState {
  url: string | null;
  enabled: boolean;
  webhookTypes: WebhookType[];
  /** Any value standing for the secret (never the secret itself), or null when there is none. */
  sharedSecret: string | null;
}

export interface WebhookConfigPatch {
  url?: string | null;
  enabled?: boolean;
  /** Already sealed: the clear secret never reaches these rules. */
  sharedSecret?: string | null;
  webhookTypes?: WebhookType[];
}

export const DEFAULT_WEBHOOK_CONFIG: WebhookConfigState = Object.freeze({
  url: null,
  enabled: false,
  webhookTypes: [],
  sharedSecret: null,
}) as WebhookConfigState;

/**
 * The subscribed types as a set in catalogue order, so that the same selection always reads and
 * compares the same whatever order it was sent in.
 */
export function normalizeWebhookTypes(types: readonly WebhookType[]): WebhookType[] {
  return WEBHOOK_TYPES.filter((type) => types.includes(type));
}

/** The state after a PATCH: fields left out keep their value, null clears url and secret. */
export function applyWebhookConfigPatch(state: WebhookConfigState, patch: WebhookConfigPatch): WebhookConfigState {
  return {
    url: patch.url !== undefined ? patch.url : state.url,
    enabled: patch.enabled ?? state.enabled,
    webhookTypes: patch.webhookTypes !== undefined ? normalizeWebhookTypes(patch.webhookTypes) : [...state.webhookTypes],
    sharedSecret: patch.sharedSecret !== undefined ? patch.sharedSecret : state.sharedSecret,
  };
}

/**
 * What an enabled configuration still lacks to sign and send a webhook; empty when complete or
 * disabled (a disabled configuration may be saved half-done).
 */
export function missingForEnabled(state: WebhookConfigState): Array<'url' | 'sharedSecret'> {
  if (!state.enabled) return [];
  const missing: Array<'url' | 'sharedSecret'> = [];
  if (state.url === null) missing.push('url');
  if (state.sharedSecret === null) missing.push('sharedSecret');
  return missing;
}

export function isEmptyPatch(patch: WebhookConfigPatch): boolean {
  return (Object.keys(patch) as Array<keyof WebhookConfigPatch>).every((key) => patch[key] === undefined);
}
