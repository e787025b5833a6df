import {
  decodeDataUri,
  httpStatusError,
  locateMetadata,
  mapMetadataDocument,
  METADATA_RETRY_DELAYS_MS,
  MetadataFetchError,
  metadataErrorText,
  nextMetadataAttempt,
  substituteErc1155Id,
} from './token-metadata-document.rules';

const GATEWAY = 'https://gateway.example/ipfs/';

function fetchError(fn: () => unknown): MetadataFetchError {
  try {
    fn();
  } catch (error) {
    if (error instanceof MetadataFetchError) return error;
    throw error;
  }
  throw new Error('expected a MetadataFetchError');
}

describe('substituteErc1155Id', () => {
  it('replaces every {id} with the 64-digit lowercase hex id', () => {
    expect(substituteErc1155Id('https://x.example/{id}.json', '255')).toBe(
      'https://x.example/00000000000000000000000000000000000000000000000000000000000000ff.json',
    );
    expect(substituteErc1155Id('ipfs://cid/{id}/{id}', '10')).toBe(`ipfs://cid/${'0'.repeat(63)}a/${'0'.repeat(63)}a`);
  });

  it('handles the largest uint256 and leaves a URI without {id} as it is', () => {
    expect(substituteErc1155Id('{id}', (2n ** 256n - 1n).toString())).toBe('f'.repeat(64));
    expect(substituteErc1155Id('https://x.example/all.json', '1')).toBe('https://x.example/all.json');
  });
});

describe('locateMetadata', () => {
  it('sends ipfs:// (and the older ipfs://ipfs/) through the gateway, keeping the path', () => {
    expect(locateMetadata('ipfs://bafyabc/1.json', GATEWAY)).toEqual({ kind: 'http', url: `${GATEWAY}bafyabc/1.json`, viaGateway: true });
    expect(locateMetadata('ipfs://ipfs/bafyabc', GATEWAY)).toEqual({ kind: 'http', url: `${GATEWAY}bafyabc`, viaGateway: true });
    expect(locateMetadata('ipfs://bafyabc', 'http://127.0.0.1:8080/ipfs')).toEqual({
      kind: 'http',
      url: 'http://127.0.0.1:8080/ipfs/bafyabc',
      viaGateway: true,
    });
  });

  it('keeps http(s) URLs and decodes data: URIs in place', () => {
    expect(locateMetadata(' https://meta.example/1 ', GATEWAY)).toEqual({ kind: 'http', url: 'https://meta.example/1', viaGateway: false });
    expect(locateMetadata('data:application/json,{"name":"a"}', GATEWAY)).toEqual({ kind: 'data', text: '{"name":"a"}' });
  });

  it('refuses an empty URI and other schemes, for good', () => {
    expect(fetchError(() => locateMetadata('', GATEWAY))).toMatchObject({
      message: 'the contract returned an empty token URI',
      retryable: false,
    });
    expect(fetchError(() => locateMetadata('ar://abc', GATEWAY))).toMatchObject({
      message: 'unsupported token URI scheme "ar:"',
      retryable: false,
    });
    expect(fetchError(() => locateMetadata('file:///etc/passwd', GATEWAY)).message).toContain('"file:"');
    expect(fetchError(() => locateMetadata('/relative/1.json', GATEWAY)).message).toBe('the token URI is not an absolute URI');
  });
});

describe('decodeDataUri', () => {
  const json = '{"name":"Ünïcode ✓","description":"a, b; c"}';

  it('decodes base64 (standard and url-safe) and percent-encoding as UTF-8', () => {
    expect(decodeDataUri(`data:application/json;base64,${Buffer.from(json).toString('base64')}`)).toBe(json);
    expect(decodeDataUri(`data:application/json;base64,${Buffer.from(json).toString('base64url')}`)).toBe(json);
    expect(decodeDataUri(`data:application/json;charset=utf-8,${encodeURIComponent(json)}`)).toBe(json);
    expect(decodeDataUri(`data:,${encodeURIComponent(json)}`)).toBe(json);
    expect(decodeDataUri(`data:text/plain;charset=UTF-8;base64,${Buffer.from(json).toString('base64')}`)).toBe(json);
  });

  it('refuses what is not JSON or not well formed', () => {
    expect(fetchError(() => decodeDataUri('data:image/png;base64,iVBORw0KGgo=')).message).toBe(
      'data: URI of type image/png is not a JSON document',
    );
    expect(fetchError(() => decodeDataUri('data:application/json;base64,{not base64}')).message).toBe('malformed base64 in data: URI');
    expect(fetchError(() => decodeDataUri('data:application/json,%E0%A4%A')).message).toBe('malformed percent-encoding in data: URI');
    expect(fetchError(() => decodeDataUri('data:application/json')).message).toBe('malformed data: URI (no comma)');
  });
});

describe('mapMetadataDocument', () => {
  it('maps the six standard keys and nothing else', () => {
    const doc = {
      name: 'Cat #1',
      description: 'A cat',
      image: 'ipfs://bafyimg/1.png',
      animation_url: 'https://anim.example/1.mp4',
      external_url: 'https://cats.example/1',
      background_color: '#FFAA00',
      attributes: [{ trait_type: 'eyes', value: 'green' }],
      edition: 3,
    };
    expect(mapMetadataDocument(JSON.stringify(doc))).toEqual({
      name: 'Cat #1',
      description: 'A cat',
      image: 'ipfs://bafyimg/1.png',
      animationUrl: 'https://anim.example/1.mp4',
      externalUrl: 'https://cats.example/1',
      backgroundColor: 'FFAA00',
    });
  });

  it('nulls absent, non-string and unsafe values, takes image_url when image is missing, and cuts long text', () => {
    const mapped = mapMetadataDocument(
      JSON.stringify({
        name: 42,
        description: 'x'.repeat(5000),
        image_url: 'https://img.example/a.png',
        external_url: 'javascript:alert(1)',
        animation_url: '',
      }),
    );
    expect(mapped).toEqual({
      name: null,
      description: 'x'.repeat(2048),
      image: 'https://img.example/a.png',
      animationUrl: null,
      externalUrl: null,
      backgroundColor: null,
    });
  });

  it('accepts a byte-order mark and refuses what is not a JSON object', () => {
    expect(mapMetadataDocument('\ufeff{"name":"n"}').name).toBe('n');
    expect(fetchError(() => mapMetadataDocument('<html>'))).toMatchObject({ message: 'the metadata is not valid JSON', retryable: false });
    expect(fetchError(() => mapMetadataDocument('[1,2]')).message).toBe('the metadata is not a JSON object');
    expect(fetchError(() => mapMetadataDocument('null')).message).toBe('the metadata is not a JSON object');
  });
});

describe('retries', () => {
  const now = new Date('2026-01-01T00:00:00Z');

  it('backs off after each retryable failure and gives up after the last delay', () => {
    const delays = METADATA_RETRY_DELAYS_MS.map((_, i) => nextMetadataAttempt(i + 1, true, now)!.getTime() - now.getTime());
    expect(delays).toEqual(METADATA_RETRY_DELAYS_MS);
    expect(delays).toEqual([...delays].sort((a, b) => a - b));
    expect(nextMetadataAttempt(METADATA_RETRY_DELAYS_MS.length + 1, true, now)).toBeNull();
  });

  it('never retries what cannot succeed later', () => {
    expect(nextMetadataAttempt(1, false, now)).toBeNull();
  });

  it('retries server errors, throttling and 404 (a server that lags the mint), not other client errors', () => {
    expect([500, 503, 429, 408, 404].map((s) => httpStatusError(s).retryable)).toEqual([true, true, true, true, true]);
    expect([400, 401, 403, 410].map((s) => httpStatusError(s).retryable)).toEqual([false, false, false, false]);
    expect(httpStatusError(503).message).toBe('the metadata server answered 503');
  });

  it('stores one bounded line as the error', () => {
    expect(metadataErrorText('first line\nsecond')).toBe('first line');
    expect(metadataErrorText('y'.repeat(600))).toHaveLength(500);
  });
});
