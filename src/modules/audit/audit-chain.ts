import canonicalize from 'canonicalize';
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { AuditEntryDto } from './dto/audit-entry.response.dto';

/**
 * The tamper-evident audit chain. Each organization's entries form one chain: an entry's `hash` is
 * the hex SHA-256 of the previous entry's hash followed by the RFC 8785 canonical JSON of the entry
 * exactly as exported, without `hash`. With AUDIT_CHAIN_KEY set, entries from then on use
 * HMAC-SHA256 keyed with it instead, so whoever can write the database but does not hold the key
 * cannot recompute a valid chain after changing a row. Pure functions only, so the service, the
 * migration that backfilled old entries, verify, and anyone holding an export (and, for the keyed
 * part, the key) all compute the same thing.
 */

/** The "previous hash" of an organization's first entry. */
export const GENESIS_HASH = '0'.repeat(64);

/** An audit entry as the API shows and exports it, without its hash. */
export type ExportedAuditEntry = Omit<AuditEntryDto, 'hash'>;

/** `key` null: the plain SHA-256 link (entries written before a key was set); otherwise HMAC-SHA256. */
export function chainHash(previousHash: string, entry: ExportedAuditEntry, key: Buffer | null = null): string {
  const canonical = canonicalize(entry);
  if (canonical === undefined) throw new Error('an audit entry has no canonical JSON form');
  const digest = key ? createHmac('sha256', key) : createHash('sha256');
  return digest.update(previousHash).update(canonical).digest('hex');
}

/**
 * The keyed seal of an organization's chain state: where its keyed part begins and where its head
 * is. Without it a database writer could move the start of the keyed part past the head and
 * recompute every hash in plain SHA-256, or cut the newest entries and move the head back.
 */
export function chainSeal(key: Buffer, organizationId: string, keyedFromSeq: number, headSeq: number, headHash: string): string {
  return createHmac('sha256', key).update(`nftw-audit-chain:${organizationId}:${keyedFromSeq}:${headSeq}:${headHash}`).digest('hex');
}

export function sealMatches(expected: string, actual: string | null): boolean {
  if (actual === null || actual.length !== expected.length) return false;
  return timingSafeEqual(Buffer.from(expected), Buffer.from(actual));
}

/** Only the fields the contract exports, so an extra field (hash, chain position) never enters the digest. */
export function exportedFields(entry: ExportedAuditEntry): ExportedAuditEntry {
  const { id, action, apiKeyId, keyPrefix, requestId, ip, createdAtUtc, changes } = entry;
  return { id, action, apiKeyId, keyPrefix, requestId, ip, createdAtUtc, changes };
}

/**
 * `keyedFromEntryId`: the first entry checked with the key (present only when the chain has a
 * keyed part); entries before it carry plain hashes written before the key was set.
 */
export type ChainVerdict = (
  { valid: true; entries: number; lastHash: string } | { valid: false; entries: number; firstBrokenEntryId: string | null }
) & { keyedFromEntryId?: string };

/** Which positions of the chain are keyed: from `fromSeq` on (null: none), with `key`. */
export interface ChainKeying {
  key: Buffer | null;
  fromSeq: number | null;
}

/**
 * Walks a chain in order, one entry at a time, so a verifier holds one entry in memory however
 * long the chain is. `position` is the entry's place in its organization's chain when known (the
 * database keeps it); a gap there means entries were deleted even if the hashes were recomputed.
 */
export class ChainVerifier {
  private previous: string;
  private expectedPosition: number | null;
  private count = 0;
  private brokenAt: string | null = null;
  private keyedFrom: string | null = null;

  constructor(
    startHash: string = GENESIS_HASH,
    startPosition: number | null = null,
    private readonly keying: ChainKeying = { key: null, fromSeq: null },
  ) {
    this.previous = startHash;
    this.expectedPosition = startPosition === null ? null : startPosition + 1;
  }

  /** Feeds the next entry; returns false once the chain is broken (later entries are still counted). */
  add(entry: ExportedAuditEntry & { hash: string | null }, position?: number): boolean {
    this.count += 1;
    if (this.brokenAt !== null) return false;
    const positionOk = this.expectedPosition === null || position === undefined || position === this.expectedPosition;
    const keyed = this.keying.fromSeq !== null && position !== undefined && position >= this.keying.fromSeq;
    if (keyed && this.keyedFrom === null) this.keyedFrom = entry.id;
    // A keyed position with no key to check it cannot be shown valid.
    const expected = keyed && !this.keying.key ? null : chainHash(this.previous, exportedFields(entry), keyed ? this.keying.key : null);
    if (!positionOk || expected === null || entry.hash !== expected) {
      this.brokenAt = entry.id;
      return false;
    }
    this.previous = entry.hash;
    if (this.expectedPosition !== null) this.expectedPosition += 1;
    return true;
  }

  /**
   * The verdict. `expectedLastHash` is the chain head the writer recorded: a chain whose last
   * entries were deleted is otherwise indistinguishable from a shorter one. The entry then reported
   * is the last one left, the point after which the chain was cut (null when none is left).
   */
  verdict(expectedLastHash?: string, lastEntryId?: string | null): ChainVerdict {
    const keyed = this.keyedFrom === null ? {} : { keyedFromEntryId: this.keyedFrom };
    if (this.brokenAt !== null) return { valid: false, entries: this.count, firstBrokenEntryId: this.brokenAt, ...keyed };
    if (expectedLastHash !== undefined && expectedLastHash !== this.previous) {
      return { valid: false, entries: this.count, firstBrokenEntryId: lastEntryId ?? null, ...keyed };
    }
    return { valid: true, entries: this.count, lastHash: this.previous, ...keyed };
  }
}
