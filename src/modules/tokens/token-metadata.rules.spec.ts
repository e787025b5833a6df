import { applyMetadataPatch, emptyMetadata, isMetadataUrl, METADATA_FIELDS } from './token-metadata.rules';

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
});
