/** Rules every endpoint shares: its subscribed types, who switched it off, and its signing secrets. */
import { formatUtc } from '../../common/time';
import { WEBHOOK_TYPES, WebhookType } from '../domain-events/domain-event.catalogue';

/** What the service writes in `disabledReason` when it switches a failing endpoint off. */
export const FAILING_DISABLED_REASON = 'failing';

/**
 * The reason an endpoint is off after a change that may set `enabled`. Whoever sets `enabled`,
 * either way, takes the decision over from the service: re-enabling clears the reason, and
 * disabling by hand is not the service's doing. A change that leaves `enabled` out keeps it.
 */
export function disabledReasonAfter(current: string | null, enabled: boolean | undefined): string | null {
  return enabled === undefined ? current : null;
}

/**
 * The subscribed types as a set in catalogue order, so that the same selection always reads and
 * compares the same whatever order it was sent in.
 */
export function normalizeWebhookTypes(types: readonly WebhookType[]): WebhookType[] {
  return WEBHOOK_TYPES.filter((type) => types.includes(type));
}

/** How long a rotated-out secret keeps signing when the request does not say (see docs/WEBHOOKS.md "Rotating the shared secret"). */
export const DEFAULT_PREVIOUS_SECRET_VALID_SECONDS = 86_400;
/** The longest overlap a rotation may ask for: seven days. */
export const MAX_PREVIOUS_SECRET_VALID_SECONDS = 604_800;

/**
 * The signing secrets of one endpoint, each standing for a sealed value (never the secret itself
 * in these rules). Kept apart from the rest of the configuration so that any endpoint with its own
 * secret can rotate the same way.
 */
export interface SecretSlots {
  sharedSecret: string | null;
  previousSharedSecret: string | null;
  previousSecretExpiresAt: Date | null;
}

/**
 * The slots after a rotation at `now` to `next`: the current secret becomes the previous one for
 * `validSeconds` (a previous secret still in its window is dropped: only the newest two sign).
 * With 0 seconds the old secret stops at once and nothing is kept. Null when there is no current
 * secret to rotate.
 */
export function rotateSecretSlots(
  slots: SecretSlots,
  next: string,
  validSeconds: number,
  now: Date,
): { slots: SecretSlots; previousSecretExpiresAt: Date } | null {
  if (slots.sharedSecret === null) return null;
  const previousSecretExpiresAt = new Date(now.getTime() + validSeconds * 1000);
  const keep = validSeconds > 0;
  return {
    slots: {
      sharedSecret: next,
      previousSharedSecret: keep ? slots.sharedSecret : null,
      previousSecretExpiresAt: keep ? previousSecretExpiresAt : null,
    },
    previousSecretExpiresAt,
  };
}

/** A PATCH of the secret replaces it at once: no overlap, any previous secret is dropped. */
export function replaceSecretSlots(next: string | null): SecretSlots {
  return { sharedSecret: next, previousSharedSecret: null, previousSecretExpiresAt: null };
}

/** When the previous secret stops signing, or null when there is none that still signs at `now`. */
export function livePreviousSecretExpiry(
  slots: Pick<SecretSlots, 'previousSharedSecret' | 'previousSecretExpiresAt'>,
  now: Date,
): Date | null {
  if (slots.previousSharedSecret === null || slots.previousSecretExpiresAt === null) return null;
  return slots.previousSecretExpiresAt.getTime() > now.getTime() ? slots.previousSecretExpiresAt : null;
}

/** The slots as the audit log shows them (pass SECRET_SLOT_FIELDS to diffForAudit): secrets only as "[redacted]", the expiry in the API's UTC format. */
export function auditedSlots(slots: SecretSlots): Record<string, unknown> {
  return {
    sharedSecret: slots.sharedSecret,
    previousSharedSecret: slots.previousSharedSecret,
    previousSecretExpiresAtUtc: formatUtc(slots.previousSecretExpiresAt),
  };
}

/** The fields of auditedSlots that hold a secret. */
export const SECRET_SLOT_FIELDS = ['sharedSecret', 'previousSharedSecret'] as const;
