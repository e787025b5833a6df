import { Controller, Get, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { Auth } from '../../common/auth/access';
import { CurrentKey } from '../../common/auth/current-principal.decorator';
import type { ApiKeyPrincipal } from '../../common/auth/principal';
import { PageQueryDto } from '../../common/pagination/page-query.dto';
import { AuditService } from './audit.service';
import { AuditEntryDto, AuditLogPageDto } from './dto/audit-entry.response.dto';

@ApiTags('Organization')
@Controller('api/organization/v1/current-organization/audit-log')
export class AuditController {
  constructor(private readonly audit: AuditService) {}

  @Get()
  @Auth('admin')
  @ApiOperation({ summary: 'Audit log of the organization, newest first' })
  async list(@CurrentKey() key: ApiKeyPrincipal, @Query() query: PageQueryDto): Promise<AuditLogPageDto> {
    const page = await this.audit.page(key.organizationId, query.pageSize, query.pageKey);
    return { entries: page.items.map(AuditEntryDto.from), nextPageKey: page.nextPageKey };
  }
}
