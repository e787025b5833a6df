import { Injectable } from '@nestjs/common';
import { WEBHOOK_TYPES } from '../../common/webhook-types';
import { declaredEventTypes } from '../../extensions/registry';
import { toOpenApi31Nullability } from '../../common/openapi-nullability';
import type { EventTypeDto } from './dto/event-types.response.dto';
import { BUILT_IN_EVENT_TYPES, changesDefinitions, dataComponentSchemas } from './event-catalogue';
import { eventBodySchema, listEventTypes, withJsonSchemaExamples, type DeclaredEventType } from './event-schema.rules';

@Injectable()
export class EventTypesService {
  private catalogue: EventTypeDto[] | null = null;

  /**
   * Built on first use and kept: the DTO classes and the extensions' declarations cannot change
   * once the application has started.
   */
  list(): EventTypeDto[] {
    this.catalogue ??= buildEventCatalogue(declaredEventTypes());
    return this.catalogue;
  }
}

/** Every entry of GET /v1/event-types, the built-in event types and those extensions `declared`. */
export function buildEventCatalogue(declared: readonly DeclaredEventType[]): EventTypeDto[] {
  // The schemas in the form the OpenAPI document publishes them (3.1 null types).
  const components = toOpenApi31Nullability(dataComponentSchemas());
  const shared = changesDefinitions(components);
  return listEventTypes(WEBHOOK_TYPES, BUILT_IN_EVENT_TYPES, declared).map((entry) => ({
    webhookType: entry.webhookType,
    resourceType: entry.resourceType,
    actions: entry.actions.map((a) => a.action),
    schema: withJsonSchemaExamples(eventBodySchema(entry, components, shared)),
  }));
}
