// Shared by the end-to-end tests: Chromium launched as the machine allows,
// a page that collects console and page errors, and waits on table counts.
import { chromium } from 'playwright-core';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/// The course's taxi sample repeated to `mb` megabytes (one header).
export function bigTaxiCsv(mb) {
  const text = readFileSync(join(root, 'static/examples/nyc_taxi/yellow_tripdata_sample_2020-07.csv'), 'utf8');
  const [header, ...rows] = text.trimEnd().split('\n');
  const body = rows.join('\n') + '\n';
  const copies = Math.ceil((mb * 1_000_000) / body.length);
  return { csv: header + '\n' + body.repeat(copies), rows: rows.length * copies };
}

export const APP_URL = process.env.APP_URL ?? 'http://127.0.0.1:8080/';
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';

export const count = (page, table) =>
  page.locator(`#card-${table.replace('.', '-')} .count`).innerText().then(digits);

/// A count as the page writes it (`336,776`; `336 776` in Russian) as a number.
export const digits = (text) => Number(text.replace(/\D/g, ''));

export async function waitForCount(page, table, expected, timeout = 60_000) {
  const sel = `#card-${table.replace('.', '-')} .count`;
  await page.waitForFunction(
    ([s, n]) => document.querySelector(s)?.textContent.replace(/\D/g, '') === String(n),
    [sel, expected],
    { timeout },
  ).catch(async (e) => {
    throw new Error(`${table}: expected ${expected} rows, page shows ${await count(page, table)} (${e.message})`);
  });
}

/// Runs `body(page, problems)` in a fresh headless Chromium page; console
/// errors and page errors land in `problems`. Destructive actions ask first
/// (reload, bronze mode): the dialogs are accepted.
export async function withPage(body) {
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  try {
    // A context of its own (a fresh browser profile: nothing saved from another
    // test); a test may open a second tab in it (page.context().newPage()).
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    const problems = [];
    page.on('console', (m) => { if (m.type() === 'error') problems.push(`console: ${m.text()}`); });
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('dialog', (d) => d.accept());
    await body(page, problems);
  } finally {
    await browser.close();
  }
}

/// From the page's start, keeps every message the engine's worker posts
/// whose text contains `needle` (parsed); `heard(page, needle)` returns them.
export const hearWorker = (page, needle) => page.addInitScript((n) => {
  window.__heard = window.__heard ?? {};
  window.__heard[n] = [];
  const Base = window.Worker;
  window.Worker = class extends Base {
    constructor(...args) {
      super(...args);
      this.addEventListener('message', (e) => {
        if (typeof e.data === 'string' && e.data.includes(n)) window.__heard[n].push(JSON.parse(e.data));
      });
    }
  };
}, needle);
export const heard = (page, needle) => page.evaluate((n) => window.__heard[n], needle);

/// A proxy in front of `APP_URL` that, for every response whose path ends
/// with `suffix`, waits `delay` milliseconds and adds `headers`; resolves to
/// `{ url, close }`. Playwright's page.route does not reliably see a Web
/// Worker's own fetches in Chromium (microsoft/playwright#32355), so a test
/// that needs the engine's load to be slow, or a file served as another
/// host serves it, changes it where every fetch passes: the server.
export function appProxy(suffix, { delay = 0, headers = {} } = {}) {
  const target = new URL(APP_URL);
  const server = http.createServer((req, res) => {
    const matches = new URL(req.url, 'http://x').pathname.endsWith(suffix);
    const forward = () => {
      const up = http.request({
        host: target.hostname, port: target.port, path: req.url, method: req.method,
        headers: { ...req.headers, host: target.host },
      }, (r) => { res.writeHead(r.statusCode, { ...r.headers, ...(matches ? headers : {}) }); r.pipe(res); });
      up.on('error', (e) => { res.writeHead(502); res.end(String(e)); });
      req.pipe(up);
    };
    if (matches && delay > 0) setTimeout(forward, delay);
    else forward();
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({
    url: `http://127.0.0.1:${server.address().port}/`,
    close: () => new Promise((r) => { server.closeAllConnections?.(); server.close(r); }),
  })));
}
