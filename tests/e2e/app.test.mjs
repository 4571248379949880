// End to end: serves nothing itself; APP_URL points at the built dist/ (scripts/test.sh).
// Drives the real page in headless Chromium the way a learner would.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chromium } from 'playwright-core';

const APP_URL = process.env.APP_URL ?? 'http://127.0.0.1:8080/';
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';

const count = (page, table) =>
  page.locator(`#card-${table.replace('.', '-')} .count`).innerText().then(Number);

async function waitForCount(page, table, expected) {
  const sel = `#card-${table.replace('.', '-')} .count`;
  await page.waitForFunction(
    ([s, n]) => document.querySelector(s)?.textContent === String(n),
    [sel, expected],
    { timeout: 60_000 },
  ).catch(async (e) => {
    throw new Error(`${table}: expected ${expected} rows, page shows ${await count(page, table)} (${e.message})`);
  });
}

async function setExpression(page, ruleId, text) {
  const box = page.locator(`#rule-${ruleId} textarea.rule-expr`);
  await box.fill(text);
}

test('the playground loads the NYC taxi example, reacts to rule edits and dropped files', async () => {
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    const problems = [];
    page.on('console', (m) => { if (m.type() === 'error') problems.push(`console: ${m.text()}`); });
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));

    await page.goto(`${APP_URL}?lang=en`);
    await page.waitForSelector('#card-silver-nyc_taxi_yellow .count', { timeout: 180_000 });

    // 1. the example, loaded and run
    assert.equal(await page.locator('.example-title').innerText(), 'NYC taxi: silver module');
    assert.equal(await count(page, 'bronze.nyc_taxi_yellow'), 266);
    assert.equal(await count(page, 'bronze.taxi_zone_lookup'), 265);
    assert.equal(await count(page, 'silver.nyc_taxi_yellow'), 260);
    assert.equal(await count(page, 'silver.quarantine'), 6);
    assert.equal(await count(page, 'gold.trips_by_borough_daily'), 5);
    assert.match(await page.locator('#check-A1').innerText(), /bronze 266 = silver 260 \+ quarantine 6/);
    assert.match(await page.locator('#check-S4').innerText(), /WARN[\s\S]*Airport_fee/);
    assert.equal(await page.locator('#table-title').innerText(), 'silver.nyc_taxi_yellow');

    // quarantine rows carry rule ids
    await page.click('#card-silver-quarantine');
    await page.waitForFunction(() => document.querySelector('#table-title')?.textContent === 'silver.quarantine');
    assert.match(await page.locator('#table-view tbody').innerText(), /F1: fare_amount < 0 \(fare_amount = -21\.0\)/);

    // 2. edit F2: > 1000 → > 50
    await setExpression(page, 'F2', 'total_amount > 50');
    await waitForCount(page, 'silver.nyc_taxi_yellow', 247);
    await waitForCount(page, 'silver.quarantine', 19);
    assert.match(await page.locator('#rule-F2 .rule-stat').innerText(), /rejected 13 \/ 266/);
    // A figure, not an assertion: how long that rerun took in this build.
    console.log(`# rule edit rerun: ${await page.locator('#run-status').innerText()}`);
    assert.match(await page.locator('#check-A2').innerText(), /WARN[\s\S]*7\.14%/);

    // 3. a typo: the error sits next to F2, the last good results stay
    await setExpression(page, 'F2', 'total_amout > 50');
    await page.waitForSelector('#rule-F2 .rule-error', { timeout: 60_000 });
    assert.match(await page.locator('#rule-F2 .rule-error').innerText(), /total_amout/);
    assert.equal(await page.locator('.rule-error').count(), 1);
    assert.equal(await count(page, 'silver.nyc_taxi_yellow'), 247);
    await page.waitForSelector('#stale-banner');

    await setExpression(page, 'F2', 'total_amount > 1000');
    await waitForCount(page, 'silver.nyc_taxi_yellow', 260);
    assert.equal(await page.locator('.rule-error').count(), 0);

    // a new rule: added switched off, then edited and switched on
    await page.click('#add-filter');
    await page.waitForSelector('#rule-F5');
    assert.match(await page.locator('#rule-F5 .rule-stat').innerText(), /off/);
    await setExpression(page, 'F5', 'trip_distance > 10');
    await page.locator('#rule-F5 .rule-enabled').click();
    await waitForCount(page, 'silver.nyc_taxi_yellow', 236);
    await page.locator('#rule-F5 .delete').click();
    await waitForCount(page, 'silver.nyc_taxi_yellow', 260);
    assert.equal(await page.locator('#rule-F5').count(), 0);

    // 4. a file through the picker becomes a new bronze batch and flows downstream
    const csv = [
      'VendorID,tpep_pickup_datetime,tpep_dropoff_datetime,passenger_count,trip_distance,RatecodeID,store_and_fwd_flag,PULocationID,DOLocationID,payment_type,fare_amount,extra,mta_tax,tip_amount,tolls_amount,improvement_surcharge,total_amount,congestion_surcharge',
      '2,2020-07-02 09:00:00,2020-07-02 09:20:00,1,3.1,1,N,161,236,1,14,0,0.5,3,0,0.3,20.3,2.5',
      '2,2020-07-02 09:30:00,2020-07-02 09:40:00,1,1.0,1,N,236,161,2,-7,0,0.5,0,0,0.3,-6.2,2.5',
    ].join('\n');
    await page.setInputFiles('#file-bronze-nyc_taxi_yellow', { name: 'more_trips.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
    await waitForCount(page, 'bronze.nyc_taxi_yellow', 268);
    await waitForCount(page, 'silver.nyc_taxi_yellow', 261);
    await waitForCount(page, 'silver.quarantine', 7);
    assert.match(await page.locator('#batch-log').innerText(), /more_trips\.csv/);

    // 5. Russian
    await page.click('#lang-switch');
    await page.waitForFunction(() => document.querySelector('#checks h2')?.textContent === 'Проверки качества', null, { timeout: 60_000 });

    assert.equal(await page.locator('#crash-notice').count(), 0);
    assert.deepEqual(problems, []);
  } finally {
    await browser.close();
  }
});
