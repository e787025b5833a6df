import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadPortalAssets } from './portal-assets';

describe('portal assets', () => {
  const assets = loadPortalAssets();
  const html = readFileSync(join(__dirname, 'assets', 'index.html'), 'utf8');

  it('serves every file the page links to, and nothing it does not', () => {
    const linked = [...html.matchAll(/(?:src|href)="\/portal\/([^"]+)"/g)].map((m) => m[1]).sort();
    expect(linked).toEqual([...assets.keys()].filter((name) => name !== 'index.html').sort());
  });

  it('links nothing outside the service: no CDN, so the page works offline', () => {
    expect(html).not.toMatch(/(?:src|href)="(?:https?:)?\/\//);
  });

  it('labels each file with its type, so nosniff browsers run the scripts and apply the styles', () => {
    for (const [name, asset] of assets) {
      const extension = name.split('.').pop();
      expect({ name, type: asset.contentType }).toEqual({
        name,
        type: { html: 'text/html', js: 'text/javascript', css: 'text/css' }[extension!] + '; charset=utf-8',
      });
      expect(asset.body.length).toBeGreaterThan(100);
    }
  });
});
