import {
  isLureMetadata,
  MASS_AIRDROP_RECIPIENTS,
  massAirdropContracts,
  mergeHits,
  sameSpamView,
  spamViewOf,
  ZERO_ADDRESS,
} from './spam.rules';

const address = (n: number) => `0x${n.toString(16).padStart(40, '0')}`;
const SENDER = '0x00000000000000000000000000000000000000aa';
const NFT = '0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed';
const OTHER = '0x00000000000000000000000000000000000000bb';

describe('massAirdrop', () => {
  const to = (count: number, contractAddress = NFT) =>
    Array.from({ length: count }, (_, i) => ({ contractAddress, to: address(0x1000 + i) }));

  it(`fires at ${MASS_AIRDROP_RECIPIENTS} distinct recipients of one contract`, () => {
    expect(massAirdropContracts(to(MASS_AIRDROP_RECIPIENTS), SENDER)).toEqual([NFT]);
    expect(massAirdropContracts(to(MASS_AIRDROP_RECIPIENTS - 1), SENDER)).toEqual([]);
  });

  it('counts a recipient once, and never the sender or the zero address', () => {
    const transfers = [
      ...to(MASS_AIRDROP_RECIPIENTS - 1),
      ...to(MASS_AIRDROP_RECIPIENTS - 1),
      { contractAddress: NFT, to: SENDER.toUpperCase().replace('0X', '0x') },
      { contractAddress: NFT, to: ZERO_ADDRESS },
    ];
    expect(massAirdropContracts(transfers, SENDER)).toEqual([]);
  });

  it('judges each contract on its own recipients', () => {
    const transfers = [...to(MASS_AIRDROP_RECIPIENTS), ...to(10, OTHER)];
    expect(massAirdropContracts(transfers, SENDER)).toEqual([NFT]);
  });
});

describe('lureMetadata', () => {
  it.each([
    ['Free voucher', 'Go to https://example.org now'],
    ['Claim your prize', 'at www.prizes.example'],
    ['REWARD inside', 'gift-drop.xyz'],
    ['Visit gift-drop.xyz', null],
    [null, 'Redeem at https://x.io'],
    ['Airdrop', 'see airdrop-site.community'],
  ])('fires on %j / %j', (name, description) => {
    expect(isLureMetadata(name, description)).toBe(true);
  });

  it.each([
    ['Claim', 'no link here'],
    ['Cool cat #1', 'https://coolcats.example'],
    ['Reclaimed art', 'https://art.example'],
    ['Rewarding', 'www.example.com'],
    [null, null],
    ['Visit', 'version 1.2'],
  ])('does not fire on %j / %j', (name, description) => {
    expect(isLureMetadata(name, description)).toBe(false);
  });
});

describe('spam views', () => {
  it('lists the rules that fired, in order; unjudged is not spam', () => {
    expect(spamViewOf({ massAirdrop: true, lureMetadata: true }, null)).toEqual({
      isSpam: true,
      reasons: ['massAirdrop', 'lureMetadata'],
      source: 'rules',
    });
    expect(spamViewOf(null, null)).toEqual({ isSpam: false, reasons: [], source: 'rules' });
  });

  it("shows an organization's override with the rules' reasons", () => {
    expect(spamViewOf({ massAirdrop: true, lureMetadata: false }, false)).toEqual({
      isSpam: false,
      reasons: ['massAirdrop'],
      source: 'organization',
    });
    expect(spamViewOf(null, true)).toEqual({ isSpam: true, reasons: [], source: 'organization' });
  });

  it('rules only ever fire', () => {
    expect(mergeHits({ massAirdrop: true, lureMetadata: false }, { massAirdrop: false, lureMetadata: true })).toEqual({
      massAirdrop: true,
      lureMetadata: true,
    });
  });

  it('compares views by value', () => {
    expect(sameSpamView(spamViewOf(null, null), spamViewOf({ massAirdrop: false, lureMetadata: false }, null))).toBe(true);
    expect(sameSpamView(spamViewOf(null, null), spamViewOf(null, false))).toBe(false);
  });
});
