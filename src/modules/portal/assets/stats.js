// @ts-check
/**
 * The Statistics view: delivery outcomes and latency per hour, as a table and a chart.
 */
import { $, api, cell, DAY_MS, describe, el, loads, ORG, query, state, utc } from './core.js';
/** @typedef {import('./core.js').Chart} Chart */
/** @typedef {import('./core.js').ChartLibrary} ChartLibrary */
/** @typedef {{legend: {idx?: number|null}, setLegend(options: {idx: number}): void}} LegendChart */
/** @typedef {import('./core.js').StatsBucket} StatsBucket */

const statsLoads = loads('stats-view');

// ---- statistics ----------------------------------------------------------------------------

export async function loadStats() {
  const note = $('stats-note');
  const endpointId = /** @type {HTMLSelectElement} */ ($('stats-endpoint')).value;
  const since = new Date(Date.now() - DAY_MS);
  const load = statsLoads.start();
  try {
    const answer = /** @type {{buckets: StatsBucket[]}} */ (
      await api('GET', `${ORG}/webhooks/stats${query({ since: utc(since), bucket: '1h', endpointId })}`)
    );
    if (!statsLoads.isLatest(load)) return;
    note.hidden = true;
    renderStats(answer.buckets);
  } catch (error) {
    if (!statsLoads.isLatest(load)) return;
    if (state.chart) state.chart.destroy();
    state.chart = null;
    $('chart').replaceChildren();
    $('stats-summary').textContent = '';
    $('stats-table').querySelector('tbody')?.replaceChildren();
    delete $('stats-table').dataset.loaded;
    note.textContent = `Could not load the statistics: ${describe(error)}`;
    note.hidden = false;
  } finally {
    statsLoads.end(load);
  }
}

/** "2026-11-23 15:00" for the bucket that starts at 15:00 UTC. @param {string} startUtc */
function hourOf(startUtc) {
  return startUtc.slice(0, 16).replace('T', ' ');
}

/** @param {number|null} ms */
function latency(ms) {
  return ms === null ? '—' : `${ms} ms`;
}

/** @param {StatsBucket[]} buckets */
function renderStats(buckets) {
  const totals = buckets.reduce(
    (sum, b) => ({ succeeded: sum.succeeded + b.succeeded, failed: sum.failed + b.failed, retried: sum.retried + b.retried }),
    { succeeded: 0, failed: 0, retried: 0 },
  );
  const summary = `${totals.succeeded} succeeded, ${totals.failed} failed and ${totals.retried} retried in the last 24 hours.`;
  $('stats-summary').textContent = summary;
  // The numbers behind the chart, for screen readers and anyone who wants them exactly.
  const active = buckets.filter((b) => b.succeeded + b.failed + b.retried > 0);
  $('stats-table')
    .querySelector('tbody')
    ?.replaceChildren(
      ...active.map((b) =>
        el('tr', { attrs: { 'data-start': b.startUtc } }, [
          cell('Hour from (UTC)', hourOf(b.startUtc)),
          cell('Succeeded', String(b.succeeded)),
          cell('Failed', String(b.failed)),
          cell('Retried', String(b.retried)),
          cell('p50 latency', latency(b.p50Ms)),
          cell('p99 latency', latency(b.p99Ms)),
        ]),
      ),
      el('tr', { className: 'total', attrs: { 'data-total': 'true' } }, [
        cell('Hour from (UTC)', 'All 24 hours'),
        cell('Succeeded', String(totals.succeeded)),
        cell('Failed', String(totals.failed)),
        cell('Retried', String(totals.retried)),
        cell('p50 latency', ''),
        cell('p99 latency', ''),
      ]),
    );
  $('stats-table').dataset.loaded = 'true';
  $('chart').setAttribute('aria-label', `Chart of succeeded and failed webhooks per hour, with p50 and p99 latency: ${summary}`);
  renderChart(buckets);
}

/** @param {StatsBucket[]} buckets */
function renderChart(buckets) {
  const uPlot = /** @type {{uPlot?: ChartLibrary}} */ (/** @type {unknown} */ (window)).uPlot;
  const container = $('chart');
  if (state.chart) state.chart.destroy();
  state.chart = null;
  container.replaceChildren();
  if (!uPlot || buckets.length === 0) return;
  const HOUR = 3600;
  const starts = buckets.map((b) => Math.floor(new Date(b.startUtc).getTime() / 1000 / HOUR) * HOUR);
  // Each hour's two bars stand side by side around its middle; latencies are points on lines.
  const data = [
    starts.map((start) => start + HOUR / 2),
    buckets.map((b) => b.succeeded),
    buckets.map((b) => b.failed),
    buckets.map((b) => b.p50Ms),
    buckets.map((b) => b.p99Ms),
  ];
  const active = buckets.map((b, index) => (b.succeeded + b.failed + b.retried > 0 ? index : -1)).filter((index) => index >= 0);
  const latestActive = active.length > 0 ? active[active.length - 1] : buckets.length - 1;
  const width = Math.max(280, container.clientWidth);
  state.chart = new uPlot(
    {
      width,
      height: width < 600 ? 240 : 320,
      // UTC on the axis, as everywhere else on the page.
      tzDate: (/** @type {number} */ seconds) => uPlot.tzDate(new Date(seconds * 1000), 'Etc/UTC'),
      scales: {
        x: { time: true, range: () => [starts[0], starts[starts.length - 1] + HOUR] },
        count: { range: (/** @type {unknown} */ _chart, /** @type {number} */ _min, /** @type {number} */ max) => [0, Math.max(1, max)] },
      },
      series: [
        {},
        {
          label: 'succeeded',
          stroke: '#2e7d32',
          fill: 'rgba(46,125,50,.6)',
          scale: 'count',
          paths: uPlot.paths.bars({ align: -1, size: [0.4, 24] }),
          points: { show: false },
        },
        {
          label: 'failed',
          stroke: '#c62828',
          fill: 'rgba(198,40,40,.6)',
          scale: 'count',
          paths: uPlot.paths.bars({ align: 1, size: [0.4, 24] }),
          points: { show: false },
        },
        { label: 'p50 ms', stroke: '#0b57d0', width: 2, scale: 'ms' },
        { label: 'p99 ms', stroke: '#7b1fa2', width: 2, dash: [6, 4], scale: 'ms' },
      ],
      axes: [{}, { scale: 'count', label: 'webhooks' }, { scale: 'ms', side: 1, label: 'latency (ms)', grid: { show: false } }],
      // Without the cursor over the chart the legend would read `--`: it shows the latest hour
      // with webhooks instead, and the hovered hour while the cursor is on the chart.
      hooks: {
        setLegend: [
          (/** @type {LegendChart} */ chart) => {
            if (chart.legend.idx === null || chart.legend.idx === undefined) chart.setLegend({ idx: latestActive });
          },
        ],
      },
    },
    data,
    container,
  );
}

window.addEventListener('resize', () => {
  if (state.chart) {
    const width = Math.max(280, $('chart').clientWidth);
    state.chart.setSize({ width, height: width < 600 ? 240 : 320 });
  }
});
