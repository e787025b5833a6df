import { Client } from 'pg';

/** The database a URL names (test and bench databases are made per run, and dropped after it). */
export function databaseName(databaseUrl: string): string {
  return decodeURIComponent(new URL(databaseUrl).pathname.replace(/^\//, '')) || 'postgres';
}

/** Drops the database named in the URL, whoever is still connected to it (test and bench databases). */
export async function dropDatabase(databaseUrl: string): Promise<void> {
  const adminUrl = new URL(databaseUrl);
  adminUrl.pathname = '/postgres';
  const client = new Client({ connectionString: adminUrl.toString() });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS "${databaseName(databaseUrl).replace(/"/g, '""')}" WITH (FORCE)`);
  } finally {
    await client.end();
  }
}
