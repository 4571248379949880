// The "NYC flights 2013" example in the browser: its 8 MB of files are
// downloaded only when it is picked (the progress line says so), a year of
// real flights goes through every layer, and a rule edit re-runs it all.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { APP_URL, appProxy, count, hearWorker, heard, waitForCount, withPage } from './lib.mjs';

test('the flights example downloads its files when picked and runs 336,776 flights through every layer', () => withPage(async (page, problems) => {
  const fetched = [];
  page.on('request', (r) => { if (/downloads\//.test(r.url())) fetched.push(r.url().replace(/.*downloads\//, '')); });
  const asked = [];
  page.on('dialog', (d) => asked.push(d.message()));
  await page.goto(`${APP_URL}?lang=en`);
  await waitForCount(page, 'silver.nyc_taxi_yellow', 260, 180_000);
  assert.deepEqual(fetched, [], 'nothing is downloaded before the example is picked');

  const seen = new Set();
  const watch = setInterval(async () => {
    const text = await page.locator('#engine-progress-text').innerText({ timeout: 100 }).catch(() => '');
    if (text) seen.add(text.replace(/[\d.]+ (MB|kB|bytes)/g, 'N'));
  }, 100);
  const started = Date.now();
  await page.selectOption('#example-picker', 'nyc_flights_2013');
  await waitForCount(page, 'silver.flights', 327_346, 600_000);
  clearInterval(watch);
  console.log(`# flights example: download, ingest of 336,776 flights and the first run: ${Date.now() - started} ms`);
  assert.ok([...seen].some((t) => t.startsWith('Downloading flights.csv')), [...seen].join(' | '));
  // Nothing was changed in the scenario it replaced: no question asked.
  assert.deepEqual(asked, []);
  // Counts are written with their thousands grouped.
  assert.equal(await page.locator('#card-bronze-flights .count').innerText(), '336,776');
  assert.deepEqual(fetched.sort(), ['airlines', 'airports', 'flights', 'planes', 'weather'].map((f) => `nycflights13/${f}.csv.gz`));
  assert.equal(await count(page, 'bronze.flights'), 336_776);
  assert.equal(await count(page, 'silver.quarantine'), 9_430);
  assert.equal(await count(page, 'gold.delays_by_carrier_month'), 185);

  // A rule edit: F2 off lets the 1,175 diverted flights into silver. The
  // result is shown as soon as it is computed, marked as being written,
  // then as the new version once it is.
  await page.evaluate(() => {
    window.__saving = [];
    new MutationObserver(() => {
      const e = document.querySelector('#version-saving');
      if (e) window.__saving.push(e.textContent);
    }).observe(document.body, { childList: true, subtree: true });
  });
  await page.locator('#rule-F2 input.rule-enabled').click();
  await waitForCount(page, 'silver.flights', 328_521, 600_000);
  await page.waitForFunction(() => !document.querySelector('#engine-status.busy'), null, { timeout: 600_000 });
  const saving = await page.evaluate(() => window.__saving);
  assert.ok(saving.includes('these rows are being written as a new version…'), JSON.stringify(saving));
  assert.equal(await page.locator('#version-saving').count(), 0);
  assert.match(await page.locator('#version-select option:checked').innerText(), /^v1 · WRITE .*\(current\)$/);
  console.log(`# flights, rule F2 off: ${await page.locator('#run-status').innerText()}`);
  await page.locator('#rule-F2 input.rule-enabled').click();
  await waitForCount(page, 'silver.flights', 327_346, 600_000);
  console.log(`# flights, rule F2 on again: ${await page.locator('#run-status').innerText()}`);

  // Quick toggles, each sent while the one before is still writing its
  // versions: the engine runs them in the order they were made, so it ends
  // at the last one (the switch as shown), and so does the saved session.
  for (const round of [1, 2]) {
    await page.waitForSelector('#engine-status', { state: 'detached', timeout: 600_000 });
    for (let i = 0; i < 3; i += 1) {
      await page.locator('#rule-F2 input.rule-enabled').click();
      await page.waitForTimeout(300);
    }
    await page.waitForSelector('#engine-status', { state: 'detached', timeout: 600_000 });
    const on = await page.locator('#rule-F2 input.rule-enabled').isChecked();
    assert.equal(on, round === 2, `round ${round}`);
    assert.equal(await count(page, 'silver.flights'), on ? 327_346 : 328_521, `round ${round}`);
    assert.equal(await count(page, 'silver.quarantine'), on ? 9_430 : 8_255, `round ${round}`);
  }
  // After edits, another scenario asks first (the dialog is accepted).
  await page.waitForSelector('#engine-status', { state: 'detached', timeout: 600_000 });
  await page.selectOption('#example-picker', 'nyc_taxi_silver');
  await waitForCount(page, 'silver.nyc_taxi_yellow', 260, 180_000);
  assert.deepEqual(asked, ['Open this scenario? Everything in the current one (dropped files, rule edits, versions) is replaced.']);
  assert.deepEqual(problems, []);
}));

// Some hosts send a `.gz` file with `Content-Encoding: gzip` (Apache's
// `AddEncoding gzip .gz`, S3 objects with that metadata): the browser then
// hands over the unzipped bytes, five times the gzip size the example
// knows. The progress must not read "31 MB / 6 MB": the total is unknown.
test('the flights example loads from a host that sends its .gz files with Content-Encoding: gzip', () => withPage(async (page, problems) => {
  const proxy = await appProxy('.csv.gz', { headers: { 'content-encoding': 'gzip' } });
  try {
    await hearWorker(page, '"step":"downloading"');
    await page.goto(`${proxy.url}?lang=en`);
    await waitForCount(page, 'silver.nyc_taxi_yellow', 260, 180_000);
    const seen = new Set();
    const watch = setInterval(async () => {
      const text = await page.locator('#engine-progress-text').innerText({ timeout: 100 }).catch(() => '');
      if (text.startsWith('Downloading')) seen.add(text);
    }, 100);
    await page.selectOption('#example-picker', 'nyc_flights_2013');
    await waitForCount(page, 'silver.flights', 327_346, 600_000);
    clearInterval(watch);
    assert.equal(await count(page, 'bronze.flights'), 336_776);
    assert.equal(await count(page, 'gold.delays_by_carrier_month'), 185);
    const downloads = (await heard(page, '"step":"downloading"')).map((m) => m.progress);
    assert.ok(downloads.some((d) => d.file === 'flights.csv' && d.bytes > 10e6), JSON.stringify(downloads.slice(-3)));
    for (const d of downloads) assert.equal(d.total_bytes, 0, JSON.stringify(d));
    for (const text of seen) assert.match(text, /^Downloading [a-z]+\.csv: [\d.]+ (MB|KB|B)$/);
    assert.deepEqual(problems, []);
  } finally {
    await proxy.close();
  }
}));
