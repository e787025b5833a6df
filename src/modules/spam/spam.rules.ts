/**
 * Spam rules: pure judgements over what a chain shows of a contract. `spam` belongs to a
 * (chainId, contract); the rules that fired are kept per contract, an organization's override
 * decides `isSpam` for that organization alone.
 */

/** The rules, in the order `reasons` lists them. */
export const SPAM_RULES = ['massAirdrop', 'lureMetadata'] as const;
export type SpamRule = (typeof SPAM_RULES)[number];

export const SPAM_SOURCES = ['rules', 'organization'] as const;
export type SpamSource = (typeof SPAM_SOURCES)[number];

/** What a token, collection or contract shows as `spam`. */
export interface SpamView {
  isSpam: boolean;
  reasons: SpamRule[];
  source: SpamSource;
}

/** How many distinct recipients of one contract's tokens in one chain transaction make an airdrop. */
export const MASS_AIRDROP_RECIPIENTS = 50;

export const ZERO_ADDRESS = '0x0000000000000000000000000000000000000000';

/** One NFT movement read from a transaction's receipt (addresses lowercase). */
export interface ReceiptTransfer {
  contractAddress: string;
  to: string;
}

/**
 * massAirdrop: the contracts whose tokens one chain transaction moved to at least
 * MASS_AIRDROP_RECIPIENTS distinct recipients other than the transaction's sender and the zero
 * address. `transfers` is every NFT movement of the transaction's receipt, `sender` its `from`.
 */
export function massAirdropContracts(transfers: readonly ReceiptTransfer[], sender: string): string[] {
  const recipients = new Map<string, Set<string>>();
  const from = sender.toLowerCase();
  for (const transfer of transfers) {
    const to = transfer.to.toLowerCase();
    if (to === from || to === ZERO_ADDRESS) continue;
    const contract = transfer.contractAddress.toLowerCase();
    const set = recipients.get(contract) ?? new Set<string>();
    set.add(to);
    recipients.set(contract, set);
  }
  return [...recipients].filter(([, set]) => set.size >= MASS_AIRDROP_RECIPIENTS).map(([contract]) => contract);
}

const LURE_WORD = /\b(claim|reward|airdrop|visit|redeem|voucher)\b/i;
/**
 * A URL: http(s)://…, www.…, or a bare host name `label.tld` with a 2–24 letter tld (labels of
 * letters, digits and inner hyphens), e.g. `gift-drop.xyz`.
 */
const LURE_URL = /(https?:\/\/\S+|\bwww\.\S+|\b(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z]{2,24}\b)/i;

/** lureMetadata: a token's name and description, read together, hold a URL and one of the lure words. */
export function isLureMetadata(name: string | null, description: string | null): boolean {
  const text = [name ?? '', description ?? ''].join('\n');
  return LURE_URL.test(text) && LURE_WORD.test(text);
}

/** The rules that fired on a contract, as stored. */
export interface RuleHits {
  massAirdrop: boolean;
  lureMetadata: boolean;
}

export const NO_HITS: RuleHits = { massAirdrop: false, lureMetadata: false };

/** Rules only ever fire: a contract once judged spam by a rule stays so (an override can still say otherwise). */
export function mergeHits(before: RuleHits, found: Partial<RuleHits>): RuleHits {
  return { massAirdrop: before.massAirdrop || !!found.massAirdrop, lureMetadata: before.lureMetadata || !!found.lureMetadata };
}

/**
 * What one organization sees: the rules' verdict, or its own override with the rules' reasons.
 * `hits` null: the contract was not judged yet, which shows as not spam.
 */
export function spamViewOf(hits: RuleHits | null, override: boolean | null): SpamView {
  const reasons = SPAM_RULES.filter((rule) => hits?.[rule] === true);
  if (override !== null) return { isSpam: override, reasons, source: 'organization' };
  return { isSpam: reasons.length > 0, reasons, source: 'rules' };
}

export function sameSpamView(a: SpamView, b: SpamView): boolean {
  return a.isSpam === b.isSpam && a.source === b.source && a.reasons.join(',') === b.reasons.join(',');
}
