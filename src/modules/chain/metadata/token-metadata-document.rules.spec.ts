import {
  decodeDataUri,
  httpStatusError,
  ipfsGateway,
  ipfsGatewayUrlFor,
  isUnderGateway,
  locateMetadata,
  mapMetadataDocument,
  METADATA_RETRY_DELAYS_MS,
  MetadataFetchError,
  metadataErrorText,
  nextMetadataAttempt,
  substituteErc1155Id,
  tokenUriAnswerMaxBytes,
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

const CID_V0 = 'QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG';
const CID_V1 = 'bafybeigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi';
const CID_V1_BASE36 = 'k51qzi5uqu5dlvj2baxnqndepeb86cbk3ng7n3i46uzyxzyqj2xjonzllnv0v8';

describe('locateMetadata', () => {
  it('sends ipfs:// (and the older ipfs://ipfs/) through the gateway, keeping the path', () => {
    expect(locateMetadata(`ipfs://${CID_V1}/1.json`, GATEWAY)).toEqual({
      kind: 'http',
      url: `${GATEWAY}${CID_V1}/1.json`,
      viaGateway: true,
    });
    expect(locateMetadata(`ipfs://ipfs/${CID_V0}`, GATEWAY)).toEqual({ kind: 'http', url: `${GATEWAY}${CID_V0}`, viaGateway: true });
    expect(locateMetadata(`ipfs://${CID_V1_BASE36}`, 'http://127.0.0.1:8080/ipfs')).toEqual({
      kind: 'http',
      url: `http://127.0.0.1:8080/ipfs/${CID_V1_BASE36}`,
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

describe('ipfsGatewayUrlFor', () => {
  const gateway = ipfsGateway('https://gateway.example/ipfs/');
  const url = (uri: string) => ipfsGatewayUrlFor(uri, gateway).toString();

  it('is the gateway URL, the CID and the path, for each form of CID', () => {
    expect(url(`ipfs://${CID_V0}/meta/1.json`)).toBe(`https://gateway.example/ipfs/${CID_V0}/meta/1.json`);
    expect(url(`ipfs://${CID_V1}`)).toBe(`https://gateway.example/ipfs/${CID_V1}`);
    expect(url(`ipfs://${CID_V1}/`)).toBe(`https://gateway.example/ipfs/${CID_V1}/`);
    expect(url(`ipfs://ipfs/${CID_V1_BASE36}/a/b.json`)).toBe(`https://gateway.example/ipfs/${CID_V1_BASE36}/a/b.json`);
    expect(url(`IPFS://${CID_V1}/1.json`)).toBe(`https://gateway.example/ipfs/${CID_V1}/1.json`);
    // Names a gateway serves as they are: spaces and other characters percent-encoded, dots inside names kept.
    expect(url(`ipfs://${CID_V1}/my cat.json`)).toBe(`https://gateway.example/ipfs/${CID_V1}/my%20cat.json`);
    expect(url(`ipfs://${CID_V1}/a%20b/...json/v1.2`)).toBe(`https://gateway.example/ipfs/${CID_V1}/a%20b/...json/v1.2`);
  });

  it('keeps a gateway path without its trailing slash, and one at the root', () => {
    expect(ipfsGatewayUrlFor(`ipfs://${CID_V1}/1`, ipfsGateway('http://127.0.0.1:8080/gw/ipfs')).toString()).toBe(
      `http://127.0.0.1:8080/gw/ipfs/${CID_V1}/1`,
    );
    expect(ipfsGatewayUrlFor(`ipfs://${CID_V1}/1`, ipfsGateway('http://ipfs.local:8080')).toString()).toBe(
      `http://ipfs.local:8080/${CID_V1}/1`,
    );
  });

  it.each([
    // Walking out of the gateway path: dot segments, raw or percent-encoded in any case.
    ['ipfs://../internal/secret.json'],
    ['ipfs://x/%2e%2e/%2e%2e/internal/pct?q=1'],
    [`ipfs://${CID_V1}/../../internal/secret.json`],
    [`ipfs://${CID_V1}/a/../../..`],
    [`ipfs://${CID_V1}/./1.json`],
    [`ipfs://${CID_V1}/%2e%2e/secret`],
    [`ipfs://${CID_V1}/%2E%2E/secret`],
    [`ipfs://${CID_V1}/%2E./secret`],
    [`ipfs://${CID_V1}/.%2E/secret`],
    [`ipfs://${CID_V1}/%2e/secret`],
    [`ipfs://${CID_V1}/%252e%252e/secret`],
    [`ipfs://${CID_V1}/%25252e%25252e/secret`],
    [`ipfs://${CID_V1}/..%2f..%2fsecret`],
    [`ipfs://${CID_V1}/..%2F..%2Fsecret`],
    [`ipfs://${CID_V1}/a%5c..%5c..%5csecret`],
    [`ipfs://${CID_V1}/a%5C..`],
    [`ipfs://${CID_V1}\\..\\..\\secret`],
    [`ipfs://${CID_V1}/a\\b`],
    ['ipfs://ipfs/../../internal/secret.json'],
    [`ipfs://ipfs/${CID_V1}/../../x`],
    // Not a path of the gateway: a query, a fragment, an empty segment, control characters.
    [`ipfs://${CID_V1}/1.json?x=1`],
    [`ipfs://${CID_V1}?x=1`],
    [`ipfs://${CID_V1}/1.json#top`],
    [`ipfs://${CID_V1}//1.json`],
    [`ipfs://${CID_V1}/a%00b`],
    [`ipfs://${CID_V1}/a\u0000b`],
    [`ipfs://${CID_V1}/%zz`],
    // Not a CID: made up, a host or a port, another multibase, CIDv0 of the wrong length.
    ['ipfs://x/1.json'],
    ['ipfs://gateway.example/1.json'],
    ['ipfs://127.0.0.1:8080/1.json'],
    ['ipfs://@evil.example/1.json'],
    ['ipfs://'],
    ['ipfs://ipfs/'],
    [`ipfs://${CID_V1.toUpperCase()}/1.json`],
    [`ipfs://z${CID_V1.slice(1)}/1.json`],
    [`ipfs://${CID_V0}x/1.json`],
    [`ipfs://${CID_V0.replace('W', '0')}`],
    ['ipfs:/relative'],
  ])('refuses %s, for good, saying the ipfs URI is not accepted', (uri) => {
    const error = fetchError(() => locateMetadata(uri, GATEWAY));
    expect(error.message).toMatch(/^the ipfs URI is not accepted: /);
    expect(error.retryable).toBe(false);
  });

  it('tells whether a URL is under the gateway: its origin and below its path', () => {
    expect(isUnderGateway(new URL(`https://gateway.example/ipfs/${CID_V1}`), gateway)).toBe(true);
    expect(isUnderGateway(new URL('https://gateway.example/ipfs/'), gateway)).toBe(false);
    expect(isUnderGateway(new URL('https://gateway.example/internal/secret.json'), gateway)).toBe(false);
    expect(isUnderGateway(new URL('https://gateway.example/ipfs/../internal'), gateway)).toBe(false);
    expect(isUnderGateway(new URL('https://gateway.example/ipfsx/a'), gateway)).toBe(false);
    expect(isUnderGateway(new URL(`https://gateway.example:8443/ipfs/${CID_V1}`), gateway)).toBe(false);
    expect(isUnderGateway(new URL(`http://gateway.example/ipfs/${CID_V1}`), gateway)).toBe(false);
  });
});

describe('tokenUriAnswerMaxBytes', () => {
  it('leaves room for a data: document of the cap, percent-encoded and hex-encoded, and stays far below 10 MiB', () => {
    expect(tokenUriAnswerMaxBytes(256 * 1024)).toBe(6 * 256 * 1024 + 16 * 1024);
    expect(tokenUriAnswerMaxBytes(10 * 1024 * 1024)).toBe(4 * 1024 * 1024);
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

  it('keeps a data: link only when it is an image, and maps the rest of the document', () => {
    const png = 'data:image/png;base64,iVBORw0KGgo=';
    const svg = 'data:IMAGE/SVG+XML;charset=utf-8,%3Csvg%2F%3E';
    expect(
      mapMetadataDocument(
        JSON.stringify({
          name: 'n',
          image: png,
          animation_url: 'data:text/html,<script>alert(1)</script>',
          external_url: 'data:application/javascript;base64,YWxlcnQoMSk=',
        }),
      ),
    ).toEqual({ name: 'n', description: null, image: png, animationUrl: null, externalUrl: null, backgroundColor: null });
    expect(
      mapMetadataDocument(JSON.stringify({ image: 'data:text/html;base64,PGI+', animation_url: svg, external_url: 'data:,x' })),
    ).toMatchObject({
      image: null,
      animationUrl: svg,
      externalUrl: null,
    });
    // An image link that is not an image falls back to image_url, as an absent one does.
    expect(mapMetadataDocument(JSON.stringify({ image: 'data:text/html,x', image_url: png })).image).toBe(png);
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
