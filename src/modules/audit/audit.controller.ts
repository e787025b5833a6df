import { Controller, Get, Query, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProduces, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { Auth } from '../../common/auth/access';
import { CurrentKey } from '../../common/auth/current-principal.decorator';
import type { ApiKeyPrincipal } from '../../common/auth/principal';
import { validationFailed } from '../../common/errors/domain-error';
import { PageQueryDto } from '../../common/pagination/page-query.dto';
import { AuditService } from './audit.service';
import { AuditExportQueryDto } from './dto/audit-export.query.dto';
import { AuditEntryDto, AuditLogPageDto, AuditVerifyDto } from './dto/audit-entry.response.dto';

/** Waits until the client takes more, or is gone; leaves no listener behind either way. */
function drainOrClose(res: Response): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

/** Response header carrying the hash an export's first line links to (64 zeros from the chain's start). */
export const EXPORT_PREVIOUS_HASH_HEADER = 'x-audit-previous-hash';
/** Response header naming the first line (1-based) hashed with AUDIT_CHAIN_KEY; absent when no line is. */
export const EXPORT_KEYED_FROM_HEADER = 'x-audit-keyed-from-line';

@ApiTags('Audit log')
@Controller('api/organization/v1/current-organization/audit-log')
export class AuditController {
  constructor(private readonly audit: AuditService) {}

  @Get()
  @Auth('admin')
  @ApiOperation({ operationId: 'listAuditLogEntries', summary: 'Audit log of the organization, newest first' })
  async list(@CurrentKey() key: ApiKeyPrincipal, @Query() query: PageQueryDto): Promise<AuditLogPageDto> {
    const page = await this.audit.page(key.organizationId, query.pageSize, query.pageKey);
    return { entries: page.items.map((entry) => AuditEntryDto.from(entry)), nextPageKey: page.nextPageKey };
  }

  @Get('verify')
  @Auth('auditor')
  @ApiOperation({
    operationId: 'verifyAuditLog',
    summary: 'Recompute the audit hash chain',
    description:
      'Checks every entry since the retention checkpoint against the previous hash. `valid: false` names the first entry ' +
      'that was edited, inserted, reordered, or follows a deleted one.',
  })
  async verify(@CurrentKey() key: ApiKeyPrincipal): Promise<AuditVerifyDto> {
    return this.audit.verify(key.organizationId);
  }

  @Get('export')
  @Auth('auditor')
  @ApiOperation({
    operationId: 'exportAuditLog',
    summary: 'Export the audit log as NDJSON, oldest first, with hashes',
    description:
      'One entry per line, in chain order, streamed. The `x-audit-previous-hash` header is the hash the first line ' +
      'links to (64 zeros from the start of the chain), so the export verifies offline; `x-audit-keyed-from-line` names ' +
      'the first line hashed with AUDIT_CHAIN_KEY (HMAC-SHA256) when there is one.',
  })
  @ApiProduces('application/x-ndjson')
  @ApiOkResponse({ description: 'NDJSON: one AuditEntry (with `hash`) per line.', schema: { type: 'string' } })
  async export(@CurrentKey() key: ApiKeyPrincipal, @Query() query: AuditExportQueryDto, @Res() res: Response): Promise<void> {
    const since = query.since ? new Date(query.since) : null;
    const until = query.until ? new Date(query.until) : null;
    if (since && until && since.getTime() >= until.getTime()) {
      throw validationFailed([{ field: 'until', message: 'until must be later than since' }]);
    }
    let closed = false;
    res.on('close', () => (closed = true));
    try {
      await this.audit.export(
        key.organizationId,
        { since, until },
        (previousHash, keyedFromLine) => {
          res.status(200);
          if (keyedFromLine !== null) res.setHeader(EXPORT_KEYED_FROM_HEADER, String(keyedFromLine));
          res.setHeader('content-type', 'application/x-ndjson; charset=utf-8');
          res.setHeader('cache-control', 'no-store');
          res.setHeader(EXPORT_PREVIOUS_HASH_HEADER, previousHash);
        },
        async (page) => {
          if (closed) return false;
          const text = page.map(({ seq: _seq, ...entry }) => `${JSON.stringify(entry)}\n`).join('');
          if (!res.write(text)) await drainOrClose(res);
          return !closed;
        },
      );
    } catch (error) {
      // Once lines are out, a problem-details answer is impossible: cut the stream so the
      // client sees an incomplete export rather than a short one that looks whole.
      if (res.headersSent) {
        res.destroy(error as Error);
        return;
      }
      throw error;
    }
    res.end();
  }
}
