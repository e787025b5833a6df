import { EntityManager } from '@mikro-orm/postgresql';
import { RequestContext } from '@mikro-orm/core';
import { Injectable } from '@nestjs/common';

/**
 * Reads the resources of one organization by id, each exactly as its GET route answers it (a
 * JSON-ready object); ids it does not find are left out.
 */
export type ResourceReader = (organizationId: string, ids: readonly string[]) => Promise<Map<string, unknown>>;

/** An event as far as reading its resource goes. */
export interface EventResourceRef {
  id: string;
  organizationId: string;
  resourceType: string;
  resourceId: string;
}

/**
 * The resource each event is about, for full webhook bodies and content filters (`data`). The
 * module that owns a resource registers its reader when it starts (wallets, tokens,
 * transactions, endpoints, the delivery log), so the delivery engine reads every resource type
 * without reaching into its tables. One call per resource type and organization in a batch.
 */
@Injectable()
export class EventResources {
  private readonly readers = new Map<string, ResourceReader>();

  constructor(private readonly em: EntityManager) {}

  register(resourceType: string, reader: ResourceReader): void {
    if (this.readers.has(resourceType)) throw new Error(`A reader for ${resourceType} resources is already registered.`);
    this.readers.set(resourceType, reader);
  }

  /**
   * `data` per event id: the resource as its GET answers now, or null (a test webhook, a resource
   * type nobody reads, a resource that no longer exists).
   */
  async read(events: readonly EventResourceRef[]): Promise<Map<string, unknown>> {
    const groups = new Map<string, { reader: ResourceReader; organizationId: string; events: EventResourceRef[] }>();
    for (const event of events) {
      const reader = this.readers.get(event.resourceType);
      if (!reader) continue;
      const key = `${event.resourceType}/${event.organizationId}`;
      const group = groups.get(key) ?? { reader, organizationId: event.organizationId, events: [] };
      group.events.push(event);
      groups.set(key, group);
    }
    const data = new Map<string, unknown>(events.map((event) => [event.id, null]));
    await Promise.all(
      [...groups.values()].map(async (group) => {
        const ids = [...new Set(group.events.map((event) => event.resourceId))];
        // Read outside any request (the delivery worker): each reader gets an identity map of its own.
        const found = await RequestContext.create(this.em, () => group.reader(group.organizationId, ids));
        for (const event of group.events) data.set(event.id, found.get(event.resourceId) ?? null);
      }),
    );
    return data;
  }
}
