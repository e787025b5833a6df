import type { DynamicModule, Type } from '@nestjs/common';

/**
 * Extension modules this deployment runs, besides the built-in ones (docs/EXTENDING.md). The app
 * imports them, and the mikro-orm CLI config loads this file so `npm run migration:up` applies
 * their migrations too.
 */
export const INSTALLED_EXTENSIONS: (Type | DynamicModule)[] = [];
