import { dropDatabase } from './database-admin';

export default async function globalTeardown(): Promise<void> {
  const databaseUrl = process.env.TEST_DATABASE_URL;
  if (!databaseUrl || process.env.KEEP_TEST_DATABASE === 'true') return;
  await dropDatabase(databaseUrl);
}
