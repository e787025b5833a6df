import canonicalize from 'canonicalize';
import { createHash } from 'node:crypto';

/**
 * The tamper-evident audit chain (CONTRACT.md section 13). Each organization's entries form one
 * chain: an entry's `hash` is the hex SHA-256 of the previous entry's hash followed by the RFC 8785
 * canonical JSON of the entry exactly as exported, without `hash`. Pure functions only, so the
 * service, the migration that backfilled old entries, verify, and anyone holding an export all
 * compute the same thing.
 */

/** The "previous hash" of an organization's first entry. */
export const GENESIS_HASH = '0'.repeat(64);

/** An audit entry as the API shows and exports it, without its hash. */
export interface ExportedAuditEntry {
  id: string;
  action: string;
  apiKeyId: string | null;
  keyPrefix: string | null;
  requestId: string | null;
  ip: string | null;
  createdAtUtc: string;
  changes: Record<string, { from: unknown; to: unknown }>;
}

export function chainHash(previousHash: string, entry: ExportedAuditEntry): string {
  const canonical = canonicalize(entry);
  if (canonical === undefined) throw new Error('an audit entry has no canonical JSON form');
  return createHash('sha256').update(previousHash).update(canonical).digest('hex');
}

/** Only the fields the contract exports, so an extra field (hash, chain position) never enters the digest. */
export function exportedFields(entry: ExportedAuditEntry): ExportedAuditEntry {
  const { id, action, apiKeyId, keyPrefix, requestId, ip, createdAtUtc, changes } = entry;
  return { id, action, apiKeyId, keyPrefix, requestId, ip, createdAtUtc, changes };
}

export type ChainVerdict =
  { valid: true; entries: number; lastHash: string } | { valid: false; entries: number; firstBrokenEntryId: string | null };

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

  constructor(startHash: string = GENESIS_HASH, startPosition: number | null = null) {
    this.previous = startHash;
    this.expectedPosition = startPosition === null ? null : startPosition + 1;
  }

  /** Feeds the next entry; returns false once the chain is broken (later entries are still counted). */
  add(entry: ExportedAuditEntry & { hash: string | null }, position?: number): boolean {
    this.count += 1;
    if (this.brokenAt !== null) return false;
    const positionOk = this.expectedPosition === null || position === undefined || position === this.expectedPosition;
    if (!positionOk || entry.hash !== chainHash(this.previous, exportedFields(entry))) {
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
    if (this.brokenAt !== null) return { valid: false, entries: this.count, firstBrokenEntryId: this.brokenAt };
    if (expectedLastHash !== undefined && expectedLastHash !== this.previous) {
      return { valid: false, entries: this.count, firstBrokenEntryId: lastEntryId ?? null };
    }
    return { valid: true, entries: this.count, lastHash: this.previous };
  }
}
