// @ts-check
/**
 * The Wallets view: a wallet by id or address, its NFTs as the service's thumbnails, a token's
 * details and the wallet's activity.
 */
import {
  $,
  ACTIVITY_PAGE,
  ADDRESS,
  api,
  ApiError,
  cell,
  describe,
  el,
  formText,
  loads,
  NFT_PAGE,
  query,
  renderFacts,
  say,
  shortTime,
  state,
  UUID,
} from './core.js';
/** @typedef {import('./core.js').Holding} Holding */
/** @typedef {import('./core.js').HoldingPage} HoldingPage */
/** @typedef {import('./core.js').Spam} Spam */
/** @typedef {import('./core.js').Token} Token */
/** @typedef {import('./core.js').TransferPage} TransferPage */
/** @typedef {import('./core.js').Wallet} Wallet */
/** @typedef {import('./core.js').WalletPage} WalletPage */

const nftLoads = loads('nft-grid');
const activityLoads = loads('activity-table');

// ---- wallets -------------------------------------------------------------------------------

export function clearWallet() {
  state.wallet = null;
  state.holdings = [];
  state.nftNextPageKey = null;
  state.activityNextPageKey = null;
  $('wallet-panel').hidden = true;
  $('wallet-choices').hidden = true;
  $('wallet-choices').replaceChildren();
  $('wallet-error').textContent = '';
  $('nft-grid').replaceChildren();
  delete $('nft-grid').dataset.loaded;
  $('nft-detail').hidden = true;
  $('activity-table').querySelector('tbody')?.replaceChildren();
  delete $('activity-table').dataset.loaded;
}

/** A wallet by its id, or the wallets at an address (one opens at once, several are offered). @param {SubmitEvent} event */
export async function lookUpWallet(event) {
  event.preventDefault();
  const text = formText(new FormData(/** @type {HTMLFormElement} */ (event.target)), 'wallet').trim();
  clearWallet();
  if (!UUID.test(text) && !ADDRESS.test(text)) {
    $('wallet-error').textContent = 'Enter a wallet id (a UUID) or an address (0x and 40 hex digits).';
    return;
  }
  try {
    if (UUID.test(text)) {
      openWallet(/** @type {Wallet} */ (await api('GET', `/v1/wallets/${encodeURIComponent(text)}`)));
      return;
    }
    const page = /** @type {WalletPage} */ (await api('GET', `/v1/wallets${query({ address: text, pageSize: '100' })}`));
    if (page.wallets.length === 0) {
      $('wallet-error').textContent = `No wallet of this organization is at ${text}.`;
    } else if (page.wallets.length === 1) {
      openWallet(page.wallets[0]);
    } else {
      $('wallet-choices').replaceChildren(
        ...page.wallets.map((wallet) => {
          const button = el('button', {
            text: `${wallet.name || 'unnamed'} · ${wallet.id}`,
            attrs: { type: 'button', 'data-wallet': wallet.id },
          });
          button.addEventListener('click', () => {
            $('wallet-choices').hidden = true;
            openWallet(wallet);
          });
          return el('li', {}, [button]);
        }),
      );
      $('wallet-choices').hidden = false;
    }
  } catch (error) {
    $('wallet-error').textContent =
      error instanceof ApiError && error.status === 403
        ? 'This key cannot read wallets: sign in with an admin key.'
        : error instanceof ApiError && error.status === 404
          ? 'No such wallet in this organization.'
          : `Lookup failed: ${describe(error)}`;
  }
}

/** @param {Wallet} wallet */
function openWallet(wallet) {
  state.wallet = wallet;
  $('wallet-panel').hidden = false;
  $('wallet-panel').dataset.id = wallet.id;
  renderFacts($('wallet-facts'), [
    ['Name', wallet.name || '—'],
    ['Wallet id', el('span', { className: 'mono', text: wallet.id })],
    ['Address', el('span', { className: 'mono', text: wallet.address || '—' })],
    ['Created', shortTime(wallet.createdAtUtc)],
  ]);
  void loadNfts(false);
  void loadActivity(false);
}

/** A page of the grid: the first one, or the next after what is shown. @param {boolean} more */
export async function loadNfts(more) {
  const wallet = state.wallet;
  if (!wallet) return;
  const load = nftLoads.start();
  try {
    const pageKey = more ? state.nftNextPageKey : null;
    const page = /** @type {HoldingPage} */ (
      await api('GET', `/v2/wallets/${wallet.id}/nft-balances${query({ pageSize: String(NFT_PAGE), pageKey })}`)
    );
    if (!nftLoads.isLatest(load) || state.wallet !== wallet) return;
    state.holdings = more ? [...state.holdings, ...page.nftTokenBalances] : page.nftTokenBalances;
    state.nftNextPageKey = page.nextPageKey;
    const cards = page.nftTokenBalances.map(nftCard);
    if (more) $('nft-grid').append(...cards);
    else $('nft-grid').replaceChildren(...cards);
    $('nft-empty').hidden = state.holdings.length > 0;
    $('nft-more').hidden = !page.nextPageKey;
    $('nft-grid').dataset.loaded = 'true';
  } catch (error) {
    if (nftLoads.isLatest(load)) say(`Could not load the NFTs: ${describe(error)}`, true);
  } finally {
    nftLoads.end(load);
  }
}

/** The token's name, or its contract and id when it has none. @param {Token} token */
function tokenName(token) {
  return token.metadata.name || `#${token.blockchainTokenId}`;
}

/**
 * The token's picture: its thumbnail (the service's own, on this origin), or a placeholder that
 * says why there is none. @param {Token} token @param {'small'|'medium'|'large'} size
 */
function picture(token, size) {
  const thumbnails = token.media.thumbnails;
  if (token.media.status === 'ok' && thumbnails) {
    const img = /** @type {HTMLImageElement} */ (el('img', { attrs: { src: thumbnails[size], alt: tokenName(token), loading: 'lazy' } }));
    if (token.media.width && token.media.height) {
      const width = Math.min(token.media.width, size === 'large' ? 1024 : 256);
      img.width = width;
      img.height = Math.max(1, Math.round((token.media.height * width) / token.media.width));
    }
    return img;
  }
  const reason =
    token.media.status === 'none'
      ? 'no image'
      : token.media.status === 'pending'
        ? 'image on its way'
        : `image failed: ${token.media.error || 'unknown'}`;
  return el('div', { className: 'placeholder', text: reason, attrs: { role: 'img', 'aria-label': `${tokenName(token)}: ${reason}` } });
}

/** @param {Holding} holding */
function nftCard(holding) {
  const token = holding.token;
  const spam = Boolean(token.spam && token.spam.isSpam);
  const button = el('button', { attrs: { type: 'button', 'data-token': token.id } }, [
    picture(token, 'medium'),
    el('span', { className: 'nft-name', text: tokenName(token) }),
    el('span', { className: 'note', text: holding.amount === '1' ? '' : `× ${holding.amount}` }),
  ]);
  if (spam) button.append(el('span', { className: 'badge spam', text: 'spam' }));
  button.addEventListener('click', () => openNft(token.id));
  return el('li', { className: spam ? 'nft spam' : 'nft', attrs: { 'data-token': token.id, 'data-media': token.media.status } }, [button]);
}

/** @param {string} tokenId */
function openNft(tokenId) {
  const holding = state.holdings.find((h) => h.token.id === tokenId);
  if (!holding) return;
  const { token } = holding;
  const media = token.media;
  $('nft-title').textContent = tokenName(token);
  $('nft-picture').replaceChildren(picture(token, 'large'));
  /** @type {[string, string|Node][]} */
  const facts = [
    ['Token id', el('span', { className: 'mono', text: token.id })],
    ['Contract', el('span', { className: 'mono', text: token.contractAddress })],
    ['Token number', el('span', { className: 'mono', text: token.blockchainTokenId })],
    ['Chain', token.chainId === null ? 'recorded through the API' : String(token.chainId)],
    ['Held', holding.amount],
    ['Description', token.metadata.description || '—'],
    [
      'Image',
      media.status === 'ok'
        ? `${media.width} × ${media.height}, ${media.contentType}`
        : media.status + (media.error ? ` (${media.error})` : ''),
    ],
    ['Metadata', token.metadataStatus + (token.metadataError ? ` (${token.metadataError})` : '')],
  ];
  if (token.spam) facts.push(['Spam', token.spam.isSpam ? `yes: ${token.spam.reasons.join(', ') || token.spam.source}` : 'no']);
  renderFacts($('nft-facts'), facts);
  $('nft-detail').dataset.id = token.id;
  $('nft-detail').hidden = false;
  $('nft-detail').focus();
}

/** The wallet's movements, newest first (GET /v1/wallets/{id}/transfers). @param {boolean} more */
export async function loadActivity(more) {
  const wallet = state.wallet;
  if (!wallet) return;
  const load = activityLoads.start();
  const note = $('activity-note');
  try {
    const pageKey = more ? state.activityNextPageKey : null;
    const page = /** @type {TransferPage} */ (
      await api('GET', `/v1/wallets/${wallet.id}/transfers${query({ pageSize: String(ACTIVITY_PAGE), pageKey })}`)
    );
    if (!activityLoads.isLatest(load) || state.wallet !== wallet) return;
    const names = new Map(state.holdings.map((h) => [h.token.id, tokenName(h.token)]));
    const rows = page.transfers.map((transfer) => {
      const incoming = transfer.toWalletId === wallet.id;
      const outgoing = transfer.fromWalletId === wallet.id;
      return el('tr', { attrs: { 'data-id': transfer.id } }, [
        cell('When (UTC)', shortTime(transfer.createdAtUtc)),
        cell('Type', transfer.type),
        cell('Direction', incoming && outgoing ? 'within' : incoming ? 'in' : 'out'),
        cell(
          'Token',
          el('span', { className: names.has(transfer.tokenId) ? '' : 'mono', text: names.get(transfer.tokenId) || transfer.tokenId }),
        ),
        cell('Amount', transfer.amount),
        cell('Status', transfer.status || 'confirmed'),
      ]);
    });
    const body = $('activity-table').querySelector('tbody');
    if (more) body?.append(...rows);
    else body?.replaceChildren(...rows);
    state.activityNextPageKey = page.nextPageKey;
    $('activity-more').hidden = !page.nextPageKey;
    note.hidden = !(page.transfers.length === 0 && !more);
    note.textContent = 'No activity yet.';
    $('activity-table').dataset.loaded = 'true';
  } catch (error) {
    if (!activityLoads.isLatest(load)) return;
    note.hidden = false;
    // A service without the activity feed answers that no such route exists.
    note.textContent =
      error instanceof ApiError && error.code === 'ROUTE_NOT_FOUND'
        ? 'This service does not offer the activity feed (GET /v1/wallets/{walletId}/transfers).'
        : `Could not load the activity: ${describe(error)}`;
    $('activity-table').dataset.loaded = 'true';
  } finally {
    activityLoads.end(load);
  }
}
