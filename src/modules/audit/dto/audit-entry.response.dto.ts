import { ApiProperty } from '@nestjs/swagger';
import { formatUtc } from '../../../common/time';
import type { AuditEntry } from '../audit-entry.entity';

export class AuditEntryDto {
  id: string;
  /** What was done, e.g. `webhookConfig.update`, `nftWhitelist.contracts.add`. */
  action: string;
  /** The API key that acted; null for the platform operator. */
  apiKeyId: string | null;
  /** Visible prefix of the acting key, or `operator`. */
  keyPrefix: string | null;
  requestId: string | null;
  ip: string | null;
  createdAtUtc: string;
  /** `{field: {from, to}}`; secrets appear only as "[redacted]". */
  @ApiProperty({ type: 'object', additionalProperties: true, example: { enabled: { from: false, to: true } } })
  changes: Record<string, { from: unknown; to: unknown }>;

  static from(entry: AuditEntry): AuditEntryDto {
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
}

export class AuditLogPageDto {
  entries: AuditEntryDto[];
  /** Key of the next (older) page; null on the last page. */
  nextPageKey: string | null;
}
