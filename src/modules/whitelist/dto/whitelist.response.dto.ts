export class NftWhitelistDto {
  /** Whether only NFTs of whitelisted contracts are visible. */
  enabled: boolean;
  /** Whitelisted contracts in EIP-55 checksum form, in address order. */
  contractAddresses: string[];
  /** Key of the next page of addresses; null on the last page. */
  nextPageKey: string | null;
}

export class NftWhitelistSettingsDto {
  enabled: boolean;
  /** Number of contracts on the whitelist. */
  contractCount: number;
}

export class AddedWhitelistContractsDto {
  /** Addresses newly put on the whitelist by this request (those already present are not counted). */
  added: number;
  /** Number of contracts on the whitelist after the request. */
  contractCount: number;
}
