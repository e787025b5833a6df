import type { Constructor, EntityClass } from '@mikro-orm/core';
import type { Migration } from '@mikro-orm/migrations';
import { isCoreErrorCode, type ErrorSpec } from '../common/errors/error-catalogue';
import { BUILT_IN_RESOURCE_TYPES, type WebhookType } from '../common/webhook-types';

/**
 * What a module outside the built-in ones brings with it, declared by the module itself
 * (docs/EXTENDING.md): its entities, its migrations, and the domain events it publishes. The app's
 * ORM, its migration runner and the event publisher read this registry, so adding a module
 * changes no list inside src.
 */
export interface ExtensionEventType {
  /** One of the contract's webhook types; integrators subscribe to it in their webhook config. */
  webhookType: WebhookType;
  /** What integrators see as `resourceType`, e.g. `Payment`. */
  resourceType: string;
  /** The actions this module publishes for it, e.g. `create`, `update`. */
  actions: readonly string[];
}

export interface ExtensionMigration {
  /** Class name, `Migration<yyyyMMddHHmmss><Name>`: migrations apply in name order. */
  name: string;
  class: Constructor<Migration>;
}

export interface ExtensionDefinition {
  /** Unique name of the extension, e.g. `payments`. */
  name: string;
  entities?: readonly EntityClass<object>[];
  migrations?: readonly ExtensionMigration[];
  eventTypes?: readonly ExtensionEventType[];
  /**
   * The problem codes the module throws, with status, title and meaning; the same codes go into
   * `ExtensionErrorCodes` (src/common/errors/error-catalogue.ts) so that its throws type-check.
   */
  errors?: Readonly<Record<string, ErrorSpec>>;
}

const extensions = new Map<string, ExtensionDefinition>();

/**
 * Registers an extension. Called once per module (ExtensionModule.forFeature does it while the
 * module is declared, before the ORM or the migration runner starts); registering the same
 * definition again is a no-op, a different one under a taken name or resourceType is an error.
 */
export function registerExtension(definition: ExtensionDefinition): void {
  const existing = extensions.get(definition.name);
  if (existing === definition) return;
  if (existing) throw new Error(`An extension named "${definition.name}" is already registered.`);
  for (const event of definition.eventTypes ?? []) {
    const owner = [...extensions.values()].find((e) => (e.eventTypes ?? []).some((t) => t.resourceType === event.resourceType));
    if (BUILT_IN_RESOURCE_TYPES.includes(event.resourceType) || owner) {
      throw new Error(
        `Extension "${definition.name}": resourceType "${event.resourceType}" is already published by ${owner ? `"${owner.name}"` : 'a built-in module'}.`,
      );
    }
  }
  for (const code of Object.keys(definition.errors ?? {})) {
    const owner = [...extensions.values()].find((e) => Object.prototype.hasOwnProperty.call(e.errors ?? {}, code));
    if (isCoreErrorCode(code) || owner) {
      throw new Error(
        `Extension "${definition.name}": error code ${code} is already declared by ${owner ? `"${owner.name}"` : 'the core catalogue'}.`,
      );
    }
  }
  extensions.set(definition.name, definition);
}

export function extensionEntities(): EntityClass<object>[] {
  return [...extensions.values()].flatMap((e) => [...(e.entities ?? [])]);
}

/** Every registered extension's migrations, in name (time) order. */
export function extensionMigrations(): ExtensionMigration[] {
  return [...extensions.values()].flatMap((e) => [...(e.migrations ?? [])]).sort((a, b) => (a.name < b.name ? -1 : 1));
}

/** Whether an extension declared this event; the publisher refuses undeclared ones. */
export function isDeclaredEvent(webhookType: string, resourceType: string, action: string): boolean {
  return [...extensions.values()].some((e) =>
    (e.eventTypes ?? []).some((t) => t.webhookType === webhookType && t.resourceType === resourceType && t.actions.includes(action)),
  );
}

/** Every event type the registered extensions declared, for the event catalogue. */
export function declaredEventTypes(): ExtensionEventType[] {
  return [...extensions.values()].flatMap((e) => [...(e.eventTypes ?? [])]);
}
