// Entry point for the mikro-orm CLI (npm run migration:create / migration:up): a process of its
// own, so it reads the configuration itself, once.
import { loadConfig } from './config/app-config';
import { buildOrmOptions } from './database/mikro-orm.options';
// Loading the installed extension modules registers their entities and migrations.
import './extensions/installed';
import { ormModel } from './orm-model';

const config = loadConfig();
// Migrations hold a session lock and may run long DDL: straight to PostgreSQL, never via a pooler.
export default buildOrmOptions({ ...config, databaseUrl: config.databaseDirectUrl }, ormModel());
