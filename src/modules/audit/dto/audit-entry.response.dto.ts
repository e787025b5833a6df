import { ApiProperty } from '@nestjs/swagger';
import { formatUtc } from '../../../common/time';
import type { ExportedAuditEntry } from '../audit-chain';
import type { AuditEntry } from '../audit-entry.entity';

/** The entry as exported, without its hash: exactly what the chain hash covers. */
export function exportedOf(entry: AuditEntry): ExportedAuditEntry {
  return {
    id: entry.id,
    action: entry.action,
    apiKeyId: entry.apiKeyId,
    keyPrefix: entry.keyPrefix,
    requestId: entry.requestId,
    ip: entry.ip,
    createdAtUtc: formatUtc(entry.createdAt),
    changes: entry.changes,
  };
}

export class AuditEntryDto {
  id: string;
  /** What was done, e.g. `webhookConfig.update`, `nftWhitelist.contracts.add`. */
  action: string;
  /** The API key that acted; null for the platform operator and for the service itself. */
  apiKeyId: string | null;
  /** Visible prefix of the acting key, `operator`, or `system` when the service acted on its own. */
  keyPrefix: string | null;
  requestId: string | null;
  ip: string | null;
  createdAtUtc: string;
  /** `{field: {from, to}}`; secrets appear only as "[redacted]". */
  @ApiProperty({ type: 'object', additionalProperties: true, example: { enabled: { from: false, to: true } } })
  changes: Record<string, { from: unknown; to: unknown }>;
  /**
   * Hex SHA-256 of the previous entry's hash followed by the RFC 8785 canonical JSON of this entry
   * without `hash` (64 zeros precede an organization's first entry).
   */
  @ApiProperty({ type: 'string', nullable: true, example: '9f2c…', pattern: '^[0-9a-f]{64}$' })
  hash: string | null;

  static from(entry: AuditEntry): AuditEntryDto {
    return { ...exportedOf(entry), hash: entry.hash };
  }
}

export class AuditLogPageDto {
  entries: AuditEntryDto[];
  /** Key of the next (older) page; null on the last page. */
  nextPageKey: string | null;
}

export class AuditVerifyDto {
  /** Whether every entry since the retention checkpoint chains to the one before it. */
  valid: boolean;
  /** How many entries were checked (those retention has not pruned). */
  entries: number;
  /** When valid: the hash of the newest entry (the checkpoint's when no entry is left). */
  @ApiProperty({ required: false, type: 'string' })
  lastHash?: string;
  /** When not valid: the first entry whose hash or place in the chain does not match; null when the newest entries were deleted and none is left. */
  @ApiProperty({ required: false, type: 'string', nullable: true })
  firstBrokenEntryId?: string | null;
  /** The first entry hashed with AUDIT_CHAIN_KEY (HMAC-SHA256); absent when no entry checked is keyed. */
  @ApiProperty({ required: false, type: 'string' })
  keyedFromEntryId?: string;
}
