import { MetadataStorage } from '@mikro-orm/core';

// MikroORM keeps entity metadata in a process-wide store; suites that share a jest worker each
// load the entities in their own module realm, so each suite starts from an empty store.
MetadataStorage.clear();
