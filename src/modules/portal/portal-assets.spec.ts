import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadPortalAssets } from './portal-assets';

describe('portal assets', () => {
  const assets = loadPortalAssets();
  const html = readFileSync(join(__dirname, 'assets', 'index.html'), 'utf8');

  it('serves every file the page links to or its scripts import, and nothing else', () => {
    const linked = new Set([...html.matchAll(/(?:src|href)="\/portal\/([^"]+)"/g)].map((m) => m[1]));
    // The entry script's modules, and theirs, by their relative imports.
    const pending = [...linked].filter((name) => name.endsWith('.js') && name !== 'uplot.js');
    while (pending.length > 0) {
      const source = readFileSync(join(__dirname, 'assets', pending.pop()!), 'utf8');
      for (const [, name] of source.matchAll(/from '\.\/([^']+)'/g)) {
        if (!linked.has(name)) pending.push(name);
        linked.add(name);
      }
    }
    expect([...linked].sort()).toEqual([...assets.keys()].filter((name) => name !== 'index.html').sort());
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
