import { MikroOrmModule } from '@mikro-orm/nestjs';
import { DynamicModule, Module } from '@nestjs/common';
import { ExtensionDefinition, registerExtension } from './registry';

/**
 * The one import an extension module adds to declare itself:
 *   imports: [ExtensionModule.forFeature(PAYMENTS_EXTENSION)]
 * registers its migrations and event types, and gives its entities to the ORM and to DI (their
 * repositories become injectable by class, like MikroOrmModule.forFeature).
 */
@Module({})
export class ExtensionModule {
  static forFeature(definition: ExtensionDefinition): DynamicModule {
    registerExtension(definition);
    const entities = MikroOrmModule.forFeature([...(definition.entities ?? [])]);
    return { module: ExtensionModule, imports: [entities], exports: [entities] };
  }
}
