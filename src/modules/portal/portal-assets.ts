import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** One file the portal page loads, held in memory: a handful of small files, read once. */
export interface PortalAsset {
  body: Buffer;
  contentType: string;
}

/** The page's script modules besides its entry (portal.js), one per view and one they share. */
export const PORTAL_VIEW_SCRIPTS = [
  'core.js',
  'endpoints.js',
  'endpoint-form.js',
  'endpoint-form-view.js',
  'deliveries.js',
  'stats.js',
  'wallets.js',
] as const;

const script = (name: string) => ({ path: () => join(__dirname, 'assets', name), contentType: 'text/javascript; charset=utf-8' });

/** URL name under /portal → where the file lives and how it is served. */
const ASSET_SOURCES: Record<string, { path: () => string; contentType: string }> = {
  'index.html': { path: () => join(__dirname, 'assets', 'index.html'), contentType: 'text/html; charset=utf-8' },
  'portal.js': script('portal.js'),
  ...Object.fromEntries(PORTAL_VIEW_SCRIPTS.map((name) => [name, script(name)])),
  'portal.css': { path: () => join(__dirname, 'assets', 'portal.css'), contentType: 'text/css; charset=utf-8' },
  // The chart library comes from npm, not a CDN: the page works offline and under `script-src 'self'`.
  'uplot.js': { path: () => require.resolve('uplot/dist/uPlot.iife.min.js'), contentType: 'text/javascript; charset=utf-8' },
  'uplot.css': { path: () => require.resolve('uplot/dist/uPlot.min.css'), contentType: 'text/css; charset=utf-8' },
};

export type PortalAssetName = keyof typeof ASSET_SOURCES;

/** Reads every asset at start-up, so a missing file stops the process instead of failing a page later. */
export function loadPortalAssets(): Map<string, PortalAsset> {
  return new Map(
    Object.entries(ASSET_SOURCES).map(([name, source]) => [name, { body: readFileSync(source.path()), contentType: source.contentType }]),
  );
}
