import { MikroOrmModule } from '@mikro-orm/nestjs';
import { PostgreSqlDriver } from '@mikro-orm/postgresql';
import { DynamicModule, Module } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { DirectSessions } from './direct-sessions';
import { buildOrmOptions, DatabaseBounds, OrmModel } from './mikro-orm.options';
import { replicaOrmOptions } from './replicas/replica-options';

@Module({})
export class DatabaseModule {
  /**
   * `model` says what the ORM maps (read when the ORM starts, once every extension module has
   * registered); `bounds` caps every wait on PostgreSQL: the service always passes them, the CLI
   * does not.
   */
  static forRoot(options: { model: () => OrmModel; bounds?: (config: AppConfig) => DatabaseBounds }): DynamicModule {
    return {
      module: DatabaseModule,
      // Global like the EntityManager: any module's periodic work may take an advisory lock.
      global: true,
      providers: [DirectSessions],
      exports: [DirectSessions],
      imports: [
        MikroOrmModule.forRootAsync({
          inject: [AppConfig],
          // registerRequestContext gives each HTTP request its own identity map.
          useFactory: (config: AppConfig) => ({
            ...buildOrmOptions(config, options.model(), options.bounds?.(config)),
            // Replicas serve only the GET requests of the API (replicas/); everything else stays on the primary.
            ...replicaOrmOptions(config),
            registerRequestContext: true,
          }),
          driver: PostgreSqlDriver,
        }),
      ],
    };
  }
}
