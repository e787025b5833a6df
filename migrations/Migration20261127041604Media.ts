import { Migration } from '@mikro-orm/migrations';

/**
 * Token images (docs/IMAGES.md "Images"), owned by the media module: each original processed once by
 * its SHA-256 (`media_image`), its WebP thumbnails when they are kept in PostgreSQL
 * (`media_thumbnail`), the image URLs already fetched (`media_source`, so a URL is requested
 * once), and each token's media state with its queue (`token_media`). Tokens that already have
 * an image are queued.
 */
export class Migration20261127041604Media extends Migration {
  up(): void {
    this.addSql(`
      create table "media_image" (
        "sha256" text primary key check ("sha256" ~ '^[0-9a-f]{64}$'),
        "content_type" text not null,
        "width" integer not null check ("width" > 0),
        "height" integer not null check ("height" > 0),
        "byte_size" integer not null,
        "created_at" timestamptz(6) not null default clock_timestamp()
      );`);
    this.addSql(`
      create table "media_thumbnail" (
        "sha256" text not null references "media_image" ("sha256") on delete cascade,
        "width" integer not null,
        "bytes" bytea not null,
        primary key ("sha256", "width")
      );`);
    // Keyed by the URL's SHA-256: URLs run to 2,048 characters, past what a btree entry should hold.
    this.addSql(`
      create table "media_source" (
        "url_sha256" text primary key,
        "sha256" text not null references "media_image" ("sha256") on delete cascade,
        "fetched_at" timestamptz(6) not null default clock_timestamp()
      );`);
    this.addSql(`
      create table "token_media" (
        "token_id" uuid primary key references "token" ("id") on delete cascade,
        "organization_id" uuid not null,
        "contract_address" text not null,
        "image" text not null,
        "generation" integer not null default 1,
        "status" text not null check ("status" in ('pending', 'ok', 'failed')),
        "error" text null,
        "sha256" text null,
        "width" integer null,
        "height" integer null,
        "content_type" text null,
        "attempts" integer not null default 0,
        "due_at" timestamptz(6) null,
        "bypass_reuse" boolean not null default false,
        "updated_at" timestamptz(6) not null default clock_timestamp()
      );`);
    // The queue, walked one organization at a time.
    this.addSql(
      `create index "token_media_due_index" on "token_media" ("organization_id", "due_at", "token_id") where "due_at" is not null;`,
    );
    this.addSql(`
      insert into "token_media" ("token_id", "organization_id", "contract_address", "image", "status", "due_at")
      select "id", "organization_id", "contract_address", "image", 'pending', clock_timestamp() from "token" where "image" is not null;`);
  }

  down(): void {
    this.addSql('drop table "token_media";');
    this.addSql('drop table "media_source";');
    this.addSql('drop table "media_thumbnail";');
    this.addSql('drop table "media_image";');
  }
}
