import { OptionalProps, PrimaryKey, Property } from '@mikro-orm/core';
import { v7 as uuidv7 } from 'uuid';

/** UUIDv7 ids sort by creation time, which keyset pagination on `id` relies on. */
export abstract class BaseEntity<Optional = never> {
  [OptionalProps]?: 'createdAt' | Optional;

  @PrimaryKey({ type: 'uuid' })
  id: string = uuidv7();

  @Property({ type: 'timestamptz', length: 6 })
  createdAt: Date = new Date();
}
