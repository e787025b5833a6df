import { EntityManager } from '@mikro-orm/postgresql';
import { LRUCache } from 'lru-cache';
import { withTimeout } from '../../common/async/with-timeout';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { queryRows } from '../../database/raw-sql';

/**
 * Where thumbnails are kept, by the original's SHA-256 and the thumbnail's width. One interface so
 * that another store (an object store) can take the place of these two.
 */
export abstract class MediaStorage {
  /** Keeps the thumbnails of one original; `em` is the transaction that records the original. Idempotent. */
  abstract put(em: EntityManager, sha256: string, thumbnails: ReadonlyMap<number, Buffer>): Promise<void>;
  /** The thumbnail, or null when there is none. */
  abstract get(sha256: string, width: number): Promise<Buffer | null>;
}

/** MEDIA_STORAGE=postgres: a bytea row per thumbnail, written in the transaction that records the original. */
export class PostgresMediaStorage extends MediaStorage {
  constructor(private readonly em: EntityManager) {
    super();
  }

  async put(em: EntityManager, sha256: string, thumbnails: ReadonlyMap<number, Buffer>): Promise<void> {
    const entries = [...thumbnails];
    await queryRows(
      em,
      `insert into "media_thumbnail" ("sha256", "width", "bytes") values ${entries.map(() => '(?, ?, ?)').join(', ')}
       on conflict do nothing`,
      entries.flatMap(([width, bytes]) => [sha256, width, bytes]),
    );
  }

  async get(sha256: string, width: number): Promise<Buffer | null> {
    const rows = await queryRows<{ bytes: Buffer }>(this.em, 'select "bytes" from "media_thumbnail" where "sha256" = ? and "width" = ?', [
      sha256,
      width,
    ]);
    return rows[0]?.bytes ?? null;
  }
}

/**
 * Why MEDIA_STORAGE's directory cannot be used (it cannot be created or written), as the one line
 * start-up stops with; null when it can. Bounded: node's recursive mkdir can spin on a path it
 * cannot create (under /proc, say).
 */
export async function mediaDirectoryProblem(path: string): Promise<string | null> {
  try {
    await withTimeout(new DirectoryMediaStorage(path).prepare(), 10_000, 'timed out');
    return null;
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    return `MEDIA_STORAGE ${path} cannot be used: ${reason} (it must be a directory this process can create and write)`;
  }
}

/**
 * MEDIA_STORAGE=<absolute directory>: `<dir>/<first two hex digits>/<sha256>-<width>.webp`, each
 * written to a temporary name and renamed, so a reader never sees half a file. The files are
 * written before the original is recorded, so a recorded original always has its files.
 */
export class DirectoryMediaStorage extends MediaStorage {
  constructor(private readonly root: string) {
    super();
  }

  /** Creates the directory if missing; throws when it cannot be created or written. */
  async prepare(): Promise<void> {
    await mkdir(this.root, { recursive: true });
    const probe = join(this.root, `.write-check-${process.pid}`);
    await writeFile(probe, '');
    await rename(probe, join(this.root, '.write-check'));
  }

  async put(_em: EntityManager, sha256: string, thumbnails: ReadonlyMap<number, Buffer>): Promise<void> {
    const dir = join(this.root, sha256.slice(0, 2));
    await mkdir(dir, { recursive: true });
    for (const [width, bytes] of thumbnails) {
      const path = this.pathOf(sha256, width);
      const temporary = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
      await writeFile(temporary, bytes);
      await rename(temporary, path);
    }
  }

  async get(sha256: string, width: number): Promise<Buffer | null> {
    try {
      return await readFile(this.pathOf(sha256, width));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
  }

  private pathOf(sha256: string, width: number): string {
    return join(this.root, sha256.slice(0, 2), `${sha256}-${width}.webp`);
  }
}

/**
 * Keeps the thumbnails answered most recently in memory, up to `maxBytes`: a thumbnail never
 * changes once stored (its key is the original's SHA-256), so a cached copy is always right, and a
 * wallet's grid asked again (or by its next user) is answered without a database read.
 */
export class CachingMediaStorage extends MediaStorage {
  private readonly cache: LRUCache<string, Buffer>;

  constructor(
    private readonly inner: MediaStorage,
    maxBytes: number,
  ) {
    super();
    this.cache = new LRUCache<string, Buffer>({ maxSize: maxBytes, sizeCalculation: (bytes) => Math.max(1, bytes.length) });
  }

  put(em: EntityManager, sha256: string, thumbnails: ReadonlyMap<number, Buffer>): Promise<void> {
    return this.inner.put(em, sha256, thumbnails);
  }

  async get(sha256: string, width: number): Promise<Buffer | null> {
    const key = `${sha256}/${width}`;
    const cached = this.cache.get(key);
    if (cached) return cached;
    const bytes = await this.inner.get(sha256, width);
    if (bytes !== null) this.cache.set(key, bytes);
    return bytes;
  }
}
