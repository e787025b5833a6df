import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Auth } from '../../common/auth/access';
import { EventTypeListDto } from './dto/event-types.response.dto';
import { EventTypesService } from './event-types.service';

@ApiTags('Webhooks')
@Controller('v1/event-types')
export class EventTypesController {
  constructor(private readonly eventTypes: EventTypesService) {}

  @Get()
  @Auth('read')
  @ApiOperation({
    operationId: 'listEventTypes',
    summary: 'Every webhook body the service sends, with a JSON Schema for each',
    description:
      'One entry per webhook type and resourceType, with its actions and a self-contained JSON Schema 2020-12 of the ' +
      'body; validate a received body (after its signature checked out) against the entry of its type and resourceType.',
  })
  @ApiOkResponse({ type: EventTypeListDto })
  list(): EventTypeListDto {
    return { eventTypes: this.eventTypes.list() };
  }
}
