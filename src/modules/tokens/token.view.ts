import type { MediaState } from '../media/media.rules';
import { spamViewFromColumn, tokenSpamColumnSql } from '../spam/spam-filter';
import type { SpamView } from '../spam/spam.rules';
import { mediaStateFromColumn, tokenMediaColumnSql } from '../media/token-media.view';
import { whitelistVisibleSql } from '../whitelist/whitelist-filter';
import { METADATA_FIELDS, MetadataField, TokenMetadata } from './token-metadata.rules';
import type { MetadataStatus } from './token.entity';

/**
 * A token as the API shows it, whether read as an entity or as columns of a raw SQL row (the
 * balances page reads tokens in the same query as the balances, without loading entities).
 */
export interface TokenView extends TokenMetadata {
  id: string;
  organizationId: string;
  contractAddress: string;
  blockchainTokenId: string;
  /** The chain the token is followed on; null for tokens recorded through the API. */
  chainId: number | null;
  metadataStatus: MetadataStatus;
  metadataError: string | null;
  /** The image's fetch and thumbnails (docs/IMAGES.md "Images"). */
  media: MediaState;
  /** Its contract's spam classification as the organization sees it; null for tokens recorded through the API. */
  spam: SpamView | null;
}

type ColumnField = Exclude<keyof TokenView, 'media' | 'spam'>;

const COLUMNS: Record<ColumnField, string> = {
  id: 'id',
  organizationId: 'organization_id',
  contractAddress: 'contract_address',
  blockchainTokenId: 'blockchain_token_id',
  chainId: 'chain_id',
  metadataStatus: 'metadata_status',
  metadataError: 'metadata_error',
  name: 'name',
  description: 'description',
  image: 'image',
  animationUrl: 'animation_url',
  externalUrl: 'external_url',
  backgroundColor: 'background_color',
  editionId: 'edition_id',
  totalEdition: 'total_edition',
  creatorName: 'creator_name',
  creatorImageUrl: 'creator_image_url',
  creatorExternalPageUrl: 'creator_external_page_url',
};

const SAFE_IDENTIFIER = /^[a-z_][a-z0-9_]*$/;

/**
 * The select list of a token, each column aliased `<prefix><field>`, its media and its spam
 * classification as two more (the media and spam modules', read by index probe in the same statement).
 * @param alias SQL alias of the `token` table in the caller's query (a trusted identifier).
 */
export function tokenColumnsSql(alias: string, prefix: string): string {
  if (!SAFE_IDENTIFIER.test(alias) || !SAFE_IDENTIFIER.test(prefix)) throw new Error('unsafe SQL identifier');
  const columns = (Object.keys(COLUMNS) as ColumnField[]).map((field) => `${alias}."${COLUMNS[field]}" as "${prefix}${field}"`);
  return [...columns, `${tokenMediaColumnSql(alias)} as "${prefix}media"`, `${tokenSpamColumnSql(alias)} as "${prefix}spam"`].join(', ');
}

const SAFE_COLUMN = /^[a-z_][a-z0-9_]*\."[a-z_][a-z0-9_]*"$/;

/**
 * Joins the token a row of the caller's query names, by primary key and within the given
 * organization: how a read of another module's rows (the balances page) shows each row's token
 * in the same statement, one index probe per row read. Equality on the organization column of
 * the caller's row (never a constant) keeps the planner on that probe rather than a walk of every
 * token of the organization.
 *
 * @param alias SQL alias for the token in the caller's query (a trusted identifier).
 * @param tokenIdSql the caller's column holding the token id, e.g. `b."token_id"`.
 * @param organizationIdSql the caller's column holding the organization id.
 */
export function tokenJoinSql(alias: string, tokenIdSql: string, organizationIdSql: string): string {
  if (!SAFE_IDENTIFIER.test(alias)) throw new Error('unsafe SQL identifier');
  for (const column of [tokenIdSql, organizationIdSql]) {
    if (!SAFE_COLUMN.test(column)) throw new Error(`unsafe SQL column: ${column}`);
  }
  return `join "token" ${alias} on ${alias}."id" = ${tokenIdSql} and ${alias}."organization_id" = ${organizationIdSql}`;
}

/** The token visibility rule of every read (the organization's whitelist), as an SQL condition. */
export function tokenVisibleSql(alias: string): string {
  return whitelistVisibleSql(alias);
}

const INTEGER_FIELDS: ReadonlySet<MetadataField> = new Set(['editionId', 'totalEdition']);

/** Reads back a row selected with tokenColumnsSql (bigint columns arrive as strings). */
export function tokenViewFromRow(row: Record<string, unknown>, prefix: string): TokenView {
  const value = (field: keyof TokenView) => row[`${prefix}${field}`];
  const view = {
    id: value('id'),
    organizationId: value('organizationId'),
    contractAddress: value('contractAddress'),
    blockchainTokenId: value('blockchainTokenId'),
    chainId: value('chainId') === null || value('chainId') === undefined ? null : Number(value('chainId')),
    metadataStatus: value('metadataStatus') ?? 'ok',
    metadataError: value('metadataError') ?? null,
  } as TokenView;
  view.media = mediaStateFromColumn((value('image') as string | null | undefined) ?? null, row[`${prefix}media`]);
  view.spam = view.chainId === null ? null : spamViewFromColumn(row[`${prefix}spam`]);
  for (const field of METADATA_FIELDS) {
    const raw = value(field);
    (view as unknown as Record<string, unknown>)[field] =
      raw === null || raw === undefined ? null : INTEGER_FIELDS.has(field) ? Number(raw) : raw;
  }
  return view;
}
