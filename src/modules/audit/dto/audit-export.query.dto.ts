import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsISO8601, IsOptional } from 'class-validator';

export class AuditExportQueryDto {
  /** Only entries written at or after this instant (ISO 8601 with an offset). */
  @ApiPropertyOptional({
    type: String,
    format: 'date-time',
    description: 'Only entries written at or after this instant (ISO 8601 with an offset).',
  })
  @IsOptional()
  @IsISO8601({ strict: true, strictSeparator: true })
  since?: string;

  /** Only entries written before this instant (ISO 8601 with an offset). */
  @ApiPropertyOptional({
    type: String,
    format: 'date-time',
    description: 'Only entries written before this instant (ISO 8601 with an offset).',
  })
  @IsOptional()
  @IsISO8601({ strict: true, strictSeparator: true })
  until?: string;
}
