import { Client } from 'pg';
import { databaseName } from '../../src/database/database-url';

export default async function globalTeardown(): Promise<void> {
  const databaseUrl = process.env.TEST_DATABASE_URL;
  if (!databaseUrl || process.env.KEEP_TEST_DATABASE === 'true') return;
  const admin = new URL(databaseUrl);
  admin.pathname = '/postgres';
  const client = new Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS "${databaseName(databaseUrl)}" WITH (FORCE)`);
  } finally {
    await client.end();
  }
}
