import {
  applyMetadataPatch,
  dataUriMediaType,
  emptyMetadata,
  isMetadataUrl,
  isShowableMetadataLink,
  METADATA_FIELDS,
} from './token-metadata.rules';

describe('token metadata rules', () => {
  it.each([
    'https://example.com/a.png',
    'http://example.com',
    'HTTPS://EXAMPLE.COM/x?y=1#z',
    'ipfs://bafybeigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi/1.png',
    'ipfs://QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG',
    'ar://bNbA3TEQVL60xlgCcqdz4ZPHFZ711cZ3hmkpGttDt_U',
    'data:image/png;base64,iVBORw0KGgo=',
    'data:,hello',
    'data:text/plain;charset=utf-8,hi%20there',
    'data:image/svg+xml;charset=utf-8,<svg xmlns="http://www.w3.org/2000/svg"/>',
  ])('accepts %s', (url) => {
    expect(isMetadataUrl(url)).toBe(true);
  });

  it.each([
    ['javascript', 'javascript:alert(1)'],
    ['file', 'file:///etc/passwd'],
    ['ftp', 'ftp://example.com/a'],
    ['relative', '/images/a.png'],
    ['no host', 'https://'],
    ['whitespace', 'https://exa mple.com'],
    ['empty ipfs', 'ipfs://'],
    ['empty ar', 'ar://'],
    ['data without comma', 'data:image/png;base64'],
    ['data with a control character', 'data:,a\u0000b'],
    ['empty', ''],
    ['too long', `https://example.com/${'a'.repeat(2048)}`],
    ['not a string', 42],
  ])('refuses %s', (_label, url) => {
    expect(isMetadataUrl(url)).toBe(false);
  });

  it('starts with every field present and null', () => {
    const metadata = emptyMetadata();
    expect(Object.keys(metadata)).toEqual([...METADATA_FIELDS]);
    expect(Object.values(metadata).every((v) => v === null)).toBe(true);
  });

  it('patches a subset, clears with null and reports only real changes', () => {
    const current = { ...emptyMetadata(), name: 'Old', description: 'Kept', editionId: 1, image: 'https://a.example/1.png' };
    const { next, changes } = applyMetadataPatch(current, { name: 'New', editionId: 1, image: null, totalEdition: 10 });
    expect(next).toEqual({ ...current, name: 'New', image: null, totalEdition: 10 });
    expect(changes).toEqual({ name: 'New', image: null, totalEdition: 10 });
  });

  it('reports nothing when nothing changes', () => {
    const current = { ...emptyMetadata(), name: 'Same' };
    expect(applyMetadataPatch(current, { name: 'Same', description: null }).changes).toEqual({});
    expect(applyMetadataPatch(current, {}).next).toEqual(current);
  });

  it('reads the media type of a data: URI, text/plain when it names none', () => {
    expect(dataUriMediaType('data:image/png;base64,iVBO')).toBe('image/png');
    expect(dataUriMediaType('data:Image/SVG+xml;charset=utf-8,%3Csvg%2F%3E')).toBe('image/svg+xml');
    expect(dataUriMediaType('data:,hello')).toBe('text/plain');
    expect(dataUriMediaType('data:;base64,aGk=')).toBe('text/plain');
    expect(dataUriMediaType('data:image/png')).toBeNull();
  });

  it('keeps a fetched data: link only when it is an image; other links as isMetadataUrl says', () => {
    expect(isShowableMetadataLink('data:image/png;base64,iVBO')).toBe(true);
    expect(isShowableMetadataLink('data:image/svg+xml,%3Csvg%2F%3E')).toBe(true);
    for (const link of [
      'data:text/html,<script>alert(1)</script>',
      'data:TEXT/HTML;base64,PHNjcmlwdD4=',
      'data:application/javascript,alert(1)',
      'data:image,x',
      'data:,x',
      'data:imagex/png,x',
    ]) {
      expect(isShowableMetadataLink(link)).toBe(false);
    }
    expect(isShowableMetadataLink('https://cats.example/1')).toBe(true);
    expect(isShowableMetadataLink('ipfs://bafy/1.png')).toBe(true);
    expect(isShowableMetadataLink('javascript:alert(1)')).toBe(false);
  });
});
