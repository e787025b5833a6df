import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { outsideTransaction, queryRows } from '../../database/raw-sql';
import { ImageType, MediaError, MediaState, MediaStatus } from './media.rules';

/** A token's image as queued for the worker. */
export interface DueMedia {
  tokenId: string;
  organizationId: string;
  /** Lowercase; the `nft` webhook carries it for endpoint filters. */
  contractAddress: string;
  image: string;
  /** Bumped whenever the image is set again or refreshed: a result for an older one is dropped. */
  generation: number;
  /** Failed attempts since the image was set or refreshed. */
  attempts: number;
  /** A refresh: fetch again even when the URL was fetched before. */
  bypassReuse: boolean;
}

/** An original already processed: its thumbnails are stored. */
export interface KnownImage {
  sha256: string;
  contentType: ImageType;
  width: number;
  height: number;
}

export interface MediaClaim {
  limit: number;
  /** Items the caller is working on now, per organization. */
  busy: ReadonlyMap<string, number>;
  /** At most this many items of one organization held at once, counting the busy ones. */
  perOrganization: number;
  leaseMs: number;
}

interface StateRow {
  status: MediaStatus;
  error: MediaError | null;
  width: number | null;
  height: number | null;
  content_type: ImageType | null;
  sha256: string | null;
}

const stateOf = (row: StateRow): MediaState => ({
  status: row.status,
  error: row.error,
  width: row.width,
  height: row.height,
  contentType: row.content_type,
  sha256: row.sha256,
});

const urlKey = (url: string) => createHash('sha256').update(url).digest('hex');

/**
 * The media module's tables: `token_media` (each token's image, its state and its place in the
 * queue), `media_image` (originals processed, by SHA-256) and `media_source` (image URLs fetched).
 */
@Injectable()
export class MediaRepository {
  constructor(private readonly em: EntityManager) {}

  /**
   * Records a token's image on the caller's transaction: a new or changed image starts over
   * (`pending`, due now); null removes the row (`none`).
   */
  async setImage(em: EntityManager, token: { id: string; organizationId: string; contractAddress: string; image: string | null }) {
    if (token.image === null) {
      await queryRows(em, 'delete from "token_media" where "token_id" = ?', [token.id]);
      return;
    }
    await queryRows(
      em,
      `insert into "token_media" ("token_id", "organization_id", "contract_address", "image", "status", "due_at")
       values (?, ?, ?, ?, 'pending', clock_timestamp())
       on conflict ("token_id") do update set
         "image" = excluded."image", "generation" = "token_media"."generation" + 1, "status" = 'pending', "error" = null,
         "sha256" = null, "width" = null, "height" = null, "content_type" = null, "attempts" = 0,
         "due_at" = clock_timestamp(), "bypass_reuse" = false, "updated_at" = clock_timestamp()`,
      [token.id, token.organizationId, token.contractAddress, token.image],
    );
  }

  /** Queues a token's image to be fetched again, now, whether or not its URL was fetched before. False when it has none. */
  async requestRefresh(em: EntityManager, tokenId: string): Promise<boolean> {
    const rows = await queryRows(
      em,
      `update "token_media" set "generation" = "generation" + 1, "status" = 'pending', "error" = null, "sha256" = null,
              "width" = null, "height" = null, "content_type" = null, "attempts" = 0, "due_at" = clock_timestamp(),
              "bypass_reuse" = true, "updated_at" = clock_timestamp()
        where "token_id" = ? returning "token_id"`,
      [tokenId],
    );
    return rows.length > 0;
  }

  /** The stored state of each token that has an image. */
  async states(em: EntityManager, tokenIds: string[]): Promise<Map<string, MediaState>> {
    const rows = await queryRows<StateRow & { token_id: string }>(
      em,
      `select "token_id", "status", "error", "width", "height", "content_type", "sha256" from "token_media" where "token_id" = any(?::uuid[])`,
      [tokenIds],
    );
    return new Map(rows.map((row) => [row.token_id, stateOf(row)]));
  }

  /**
   * Claims due images, organizations taking turns: each organization's oldest due items are
   * ranked after those the caller already holds for it, and at most `perOrganization` of them
   * are held at once, so one organization's queue of slow or hostile images never fills the
   * worker. Organizations are found one index probe each (a skip scan), however long a queue is.
   * A claim moves `due_at` a lease ahead: another worker skips it, and one that dies leaves it
   * due again after the lease.
   */
  async claimDue(claim: MediaClaim): Promise<DueMedia[]> {
    const busy = [...claim.busy];
    const rows = await queryRows<{
      token_id: string;
      organization_id: string;
      contract_address: string;
      image: string;
      generation: number;
      attempts: number;
      bypass_reuse: boolean;
    }>(
      outsideTransaction(this.em),
      `with recursive "orgs" as (
         (select "organization_id" from "token_media" where "due_at" <= now() order by "organization_id" limit 1)
         union all
         select (select tm."organization_id" from "token_media" tm
                  where tm."due_at" <= now() and tm."organization_id" > o."organization_id"
                  order by tm."organization_id" limit 1)
           from "orgs" o where o."organization_id" is not null
       ),
       "candidates" as (
         select c."token_id", c."due_at",
                row_number() over (partition by c."organization_id" order by c."due_at", c."token_id") + coalesce(b."n", 0) as "turn"
           from "orgs" o
           cross join lateral (
             select tm."token_id", tm."organization_id", tm."due_at" from "token_media" tm
              where tm."organization_id" = o."organization_id" and tm."due_at" <= now()
              order by tm."due_at", tm."token_id" limit ?
           ) c
           left join unnest(?::uuid[], ?::int[]) as b("organization_id", "n") on b."organization_id" = c."organization_id"
          where o."organization_id" is not null
       ),
       "picked" as (
         select "token_id" from "candidates" where "turn" <= ? order by "turn", "due_at", "token_id" limit ?
       ),
       "claimed" as (
         select tm."token_id" from "token_media" tm join "picked" p on p."token_id" = tm."token_id"
          where tm."due_at" <= now()
          for update of tm skip locked
       )
       update "token_media" tm set "due_at" = now() + ? * interval '1 millisecond'
         from "claimed" where tm."token_id" = "claimed"."token_id"
       returning tm."token_id", tm."organization_id", tm."contract_address", tm."image", tm."generation", tm."attempts", tm."bypass_reuse"`,
      [claim.perOrganization, busy.map(([id]) => id), busy.map(([, n]) => n), claim.perOrganization, claim.limit, claim.leaseMs],
    );
    return rows.map((row) => ({
      tokenId: row.token_id,
      organizationId: row.organization_id,
      contractAddress: row.contract_address,
      image: row.image,
      generation: row.generation,
      attempts: row.attempts,
      bypassReuse: row.bypass_reuse,
    }));
  }

  /** The original an image URL gave when it was fetched before, if any. */
  async reusable(url: string): Promise<KnownImage | null> {
    const rows = await queryRows<{ sha256: string; content_type: ImageType; width: number; height: number }>(
      outsideTransaction(this.em),
      `select i."sha256", i."content_type", i."width", i."height"
         from "media_source" s join "media_image" i on i."sha256" = s."sha256"
        where s."url_sha256" = ?`,
      [urlKey(url)],
    );
    return rows.length === 0 ? null : knownImageOf(rows[0]);
  }

  async image(sha256: string): Promise<KnownImage | null> {
    const rows = await queryRows<{ sha256: string; content_type: ImageType; width: number; height: number }>(
      outsideTransaction(this.em),
      'select "sha256", "content_type", "width", "height" from "media_image" where "sha256" = ?',
      [sha256],
    );
    return rows.length === 0 ? null : knownImageOf(rows[0]);
  }

  /** Records a processed original on the caller's transaction (its thumbnails are stored with it). */
  async recordImage(em: EntityManager, image: KnownImage & { byteSize: number }): Promise<void> {
    await queryRows(
      em,
      `insert into "media_image" ("sha256", "content_type", "width", "height", "byte_size") values (?, ?, ?, ?, ?)
       on conflict ("sha256") do nothing`,
      [image.sha256, image.contentType, image.width, image.height, image.byteSize],
    );
  }

  /** Remembers that `url` gave the original `sha256`, so it is not requested again. */
  async recordSource(url: string, sha256: string): Promise<void> {
    await queryRows(
      outsideTransaction(this.em),
      `insert into "media_source" ("url_sha256", "sha256") values (?, ?)
       on conflict ("url_sha256") do update set "sha256" = excluded."sha256", "fetched_at" = clock_timestamp()`,
      [urlKey(url), sha256],
    );
  }

  /**
   * Stores the outcome of an attempt on the caller's transaction, if the token still has the image
   * of that attempt (`generation`). Returns the state before, or null when the attempt was stale.
   */
  async complete(
    em: EntityManager,
    item: Pick<DueMedia, 'tokenId' | 'generation'>,
    outcome: MediaState,
    next: { attempts: number; dueAt: Date | null },
  ): Promise<MediaState | null> {
    const rows = await queryRows<StateRow>(
      em,
      `update "token_media" tm set "status" = ?, "error" = ?, "sha256" = ?, "width" = ?, "height" = ?, "content_type" = ?,
              "attempts" = ?, "due_at" = ?, "bypass_reuse" = false, "updated_at" = clock_timestamp()
         from (select "token_id", "status", "error", "width", "height", "content_type", "sha256"
                 from "token_media" where "token_id" = ? and "generation" = ? for update) before
        where tm."token_id" = before."token_id"
        returning before."status", before."error", before."width", before."height", before."content_type", before."sha256"`,
      [
        outcome.status,
        outcome.error,
        outcome.sha256,
        outcome.width,
        outcome.height,
        outcome.contentType,
        next.attempts,
        next.dueAt,
        item.tokenId,
        item.generation,
      ],
    );
    return rows.length === 0 ? null : stateOf(rows[0]);
  }
}

function knownImageOf(row: { sha256: string; content_type: ImageType; width: number; height: number }): KnownImage {
  return { sha256: row.sha256, contentType: row.content_type, width: row.width, height: row.height };
}
