import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '..');

describe('shipped files', () => {
  it('docker-compose.yml publishes PostgreSQL and Redis on 127.0.0.1 only', () => {
    const compose = readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8');
    const published = [...compose.matchAll(/^\s*ports:\s*\[(.*)\]\s*$/gm)].flatMap((m) =>
      m[1].split(',').map((p) => p.trim().replace(/'/g, '')),
    );
    expect(published).toEqual(['127.0.0.1:5432:5432', '127.0.0.1:6379:6379']);
    // No other form of port publishing that this check would miss.
    expect(compose.match(/ports:/g)).toHaveLength(2);
  });
});
