import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';

export class PageQueryDto {
  /** Items per page, 1 to 1000. */
  // Explicit, not left to the Swagger compiler plugin: with a default the parameter is optional.
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 1000, default: 100, description: 'Items per page, 1 to 1000.' })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(1000)
  pageSize: number = 100;

  /** Opaque key from the previous page's `nextPageKey`. */
  @ApiPropertyOptional({ type: String, maxLength: 1024, description: "Opaque key from the previous page's `nextPageKey`." })
  @IsOptional()
  @IsString()
  @MaxLength(1024)
  pageKey?: string;
}

export interface Page<T> {
  items: T[];
  nextPageKey: string | null;
}

/** Cuts a `pageSize + 1` result into a page and the key of the next one. */
export function toPage<T>(rows: T[], pageSize: number, keyOf: (last: T) => string): Page<T> {
  const hasMore = rows.length > pageSize;
  const items = hasMore ? rows.slice(0, pageSize) : rows;
  return { items, nextPageKey: hasMore ? keyOf(items[items.length - 1]) : null };
}
