import { ApiProperty } from '@nestjs/swagger';
import { IsDefined, IsObject } from 'class-validator';

/** A filter and an event to try it on, with the code delivery uses. */
export class FilterTestRequestDto {
  /** A content filter, as an endpoint's `filter` takes it (an invalid one is a 400 naming the path). */
  @ApiProperty({ type: 'object', additionalProperties: true, example: { action: 'create', data: { name: { $startsWith: 'Vault' } } } })
  @IsDefined()
  filter: unknown;

  /**
   * The event as filters see it: `{webhookType, resourceType, action, organizationId, resourceId,
   * changes, data}` (`data` is the resource as its GET answers). Keys left out are missing.
   */
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    example: { webhookType: 'custodialAccount', resourceType: 'Wallet', action: 'create', changes: null, data: { name: 'Vault 7' } },
  })
  @IsObject()
  event: Record<string, unknown>;
}

export class FilterTestResponseDto {
  /** Whether an event like this one would become a webhook to an endpoint with this filter. */
  @ApiProperty({ type: Boolean })
  matches: boolean;
}
