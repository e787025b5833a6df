import { MikroOrmModule } from '@mikro-orm/nestjs';
import { PostgreSqlDriver } from '@mikro-orm/postgresql';
import { Module } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { buildOrmOptions } from './mikro-orm.options';

@Module({
  imports: [
    MikroOrmModule.forRootAsync({
      inject: [AppConfig],
      // registerRequestContext gives each HTTP request its own identity map.
      useFactory: (config: AppConfig) => ({ ...buildOrmOptions(config), registerRequestContext: true }),
      driver: PostgreSqlDriver,
    }),
  ],
})
export class DatabaseModule {}
