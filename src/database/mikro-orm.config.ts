// Entry point for the mikro-orm CLI (npm run migration:create / migration:up).
import { loadConfig } from '../config/app-config';
import { buildOrmOptions } from './mikro-orm.options';

export default buildOrmOptions(loadConfig());
