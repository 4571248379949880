// End to end: serves nothing itself; APP_URL points at the built dist/ (scripts/test.sh).
// Drives the real page in headless Chromium the way a learner would.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { APP_URL, count, waitForCount, withPage } from './lib.mjs';

async function setExpression(page, ruleId, text) {
  const box = page.locator(`#rule-${ruleId} textarea.rule-expr`);
  await box.fill(text);
}


/// Steps of the session saved in the page's IndexedDB (its journal).
const savedSteps = (page) => page.evaluate(() => new Promise((resolve, reject) => {
  const open = indexedDB.open('medallion-playground');
  open.onerror = () => reject(open.error);
  open.onsuccess = () => {
    const count = open.result.transaction('journal').objectStore('journal').count();
    count.onsuccess = () => { open.result.close(); resolve(count.result); };
    count.onerror = () => reject(count.error);
  };
}));

test('the playground loads the NYC taxi example, reacts to rule edits and dropped files', () => withPage(async (page, problems) => {
    await page.goto(`${APP_URL}?lang=en`);
    await page.waitForSelector('#card-silver-nyc_taxi_yellow .count', { timeout: 180_000 });

    // 1. the example, loaded and run
    assert.equal(await page.locator('#example-picker option:checked').innerText(), 'NYC taxi: silver module');
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
    assert.match(await page.locator('#rows-grid tbody').innerText(), /F1: fare_amount < 0 \(fare_amount = -21\.0\)/);

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

    // 5. a ';' file with a banner line: dialect detected, banner kept aside in the batch log
    const semi = 'Exported by TLC portal 2020-07-03\nVendorID;tpep_pickup_datetime;tpep_dropoff_datetime;fare_amount;total_amount\n1;2020-07-03 10:00:00;2020-07-03 10:10:00;9;12.3\n';
    await page.setInputFiles('#file-bronze-nyc_taxi_yellow', { name: 'semi.csv', mimeType: 'text/csv', buffer: Buffer.from(semi) });
    await waitForCount(page, 'bronze.nyc_taxi_yellow', 269);
    await waitForCount(page, 'silver.nyc_taxi_yellow', 262);
    const log = await page.locator('#batch-log').innerText();
    assert.match(log, /delimiter ';'/);
    assert.match(log, /kept aside: Exported by TLC portal 2020-07-03/);
    // read it again with a wrong delimiter: a new batch that supersedes the
    // first read for silver (the trip leaves silver), quarantined with a hint
    await page.locator('#batch-log .reread').last().click();
    await page.selectOption('#opt-delimiter', ',');
    await page.click('#reingest-submit');
    await waitForCount(page, 'bronze.nyc_taxi_yellow', 270);
    await waitForCount(page, 'silver.quarantine', 8);
    await waitForCount(page, 'silver.nyc_taxi_yellow', 261);

    // 6. a record that is not valid JSON is kept in bronze and flagged
    const jsonl = [
      '{"VendorID": 2, "tpep_pickup_datetime": "2020-07-04 10:00:00", "tpep_dropoff_datetime": "2020-07-04 10:20:00", "fare_amount": 11, "total_amount": 14.3}',
      '{"VendorID": 1, "tpep_pickup_datetime": "2020-07-04 11:00:00", "fare_amount": NaN}',
    ].join('\n');
    await page.setInputFiles('#file-bronze-nyc_taxi_yellow', { name: 'feed.jsonl', mimeType: 'application/json', buffer: Buffer.from(jsonl) });
    await waitForCount(page, 'bronze.nyc_taxi_yellow', 272);
    await waitForCount(page, 'silver.quarantine', 9);
    await page.click('#card-bronze-nyc_taxi_yellow');
    await page.check('#corrupt-only');
    await page.waitForFunction(() => /of 1 /.test(document.querySelector('#table-range')?.textContent ?? ''), null, { timeout: 30_000 });
    assert.match(await page.locator('#rows-grid tbody').innerText(), /invalid JSON at byte \d+ \(line 2, column \d+\): expected value/);

    // 7. time travel: read silver's first version, restore it, replay shows the drift
    await page.click('#card-silver-nyc_taxi_yellow');
    await page.selectOption('#version-select', '0');
    await page.waitForSelector('#time-travel');
    await page.waitForFunction(() => /of 260 /.test(document.querySelector('#table-range')?.textContent ?? ''), null, { timeout: 30_000 });
    // Three clicks on Next before any page arrives go three pages on (each
    // asked for page two before), and Previous then goes back one.
    await page.evaluate(() => { const next = document.querySelector('#page-next'); next.click(); next.click(); next.click(); });
    await page.waitForFunction(() => /61–80 of 260 /.test(document.querySelector('#table-range')?.textContent ?? ''), null, { timeout: 30_000 });
    await page.click('#page-prev');
    await page.waitForFunction(() => /41–60 of 260 /.test(document.querySelector('#table-range')?.textContent ?? ''), null, { timeout: 30_000 });
    await page.click('#restore-version');
    await waitForCount(page, 'silver.nyc_taxi_yellow', 260);
    await page.click('#replay');
    await page.waitForFunction(() => /differ/.test(document.querySelector('#replay-result')?.textContent ?? ''), null, { timeout: 60_000 });
    assert.match(await page.locator('#replay-result').innerText(), /silver\.nyc_taxi_yellow: 0 rows only in the current table \/ 2 only in the rebuild/);
    await page.click('#run-now');
    await waitForCount(page, 'silver.nyc_taxi_yellow', 262);
    // The tables changed since that replay: its result says so.
    await page.waitForFunction(() => /^before the last change: silver and gold rebuilt from bronze differ/.test(document.querySelector('#replay-result')?.textContent ?? ''), null, { timeout: 30_000 });
    await page.click('#replay');
    await page.waitForFunction(() => /identical/.test(document.querySelector('#replay-result')?.textContent ?? ''), null, { timeout: 60_000 });

    // 8. Kafka: produce two trips, the consumer crashes before committing, the next poll re-delivers them
    await page.click('#card-bronze-nyc_taxi_yellow');
    await page.click('#kafka-panel summary');
    await page.click('#kafka-produce');
    await page.waitForFunction(() => /end offset 2 · committed 0/.test(document.querySelector('#kafka-offsets')?.textContent ?? ''), null, { timeout: 30_000 });
    await page.click('#kafka-crash');
    await waitForCount(page, 'bronze.nyc_taxi_yellow', 274);
    assert.match(await page.locator('#kafka-offsets').innerText(), /committed 0 · lag 2/);
    await page.click('#kafka-poll');
    await waitForCount(page, 'bronze.nyc_taxi_yellow', 276);
    // The poll says what it did (and replaces the older messages).
    await page.waitForFunction(() => /tlc_yellow_trips:0:0-1: 2 records; offsets 0-1 committed/.test(document.querySelector('.banners, #messages, body')?.innerText ?? ''), null, { timeout: 30_000 });
    await waitForCount(page, 'silver.nyc_taxi_yellow', 266);
    assert.match(await page.locator('#kafka-offsets').innerText(), /committed 2 · lag 0/);
    assert.match(await page.locator('#batch-log').innerText(), /tlc_yellow_trips:0:0-1[\s\S]*at-least-once/);

    // 8b. right to be forgotten: the plan first (exact rows per table, nothing
    // changed yet), then the erasure of the rows of one file, logged with a reason
    await page.click('#forget-panel summary');
    await page.fill('#forget-predicate', "_source_file = 'more_trips.csv'");
    await page.fill('#forget-reason', 'GDPR request 42');
    await page.click('#forget-plan');
    await page.waitForSelector('#erasure-plan', { timeout: 60_000 });
    assert.match(await page.locator('#erasure-plan .plan-head').innerText(), /matches 2 rows \(bronze\.nyc_taxi_yellow\)/);
    assert.match(await page.locator('#plan-bronze-nyc_taxi_yellow').innerText(), /−2[\s\S]*more_trips\.csv line 2/);
    assert.match(await page.locator('#plan-silver-nyc_taxi_yellow').innerText(), /−1/);
    assert.equal(await count(page, 'bronze.nyc_taxi_yellow'), 276);
    await page.click('#forget-submit');
    await waitForCount(page, 'bronze.nyc_taxi_yellow', 274);
    await waitForCount(page, 'silver.nyc_taxi_yellow', 265);
    assert.match(await page.locator('#erasures').innerText(), /GDPR request 42/);
    assert.match(await page.locator('#version-select').innerText(), /DELETE · right to be forgotten: GDPR request 42/);
    // The saved session held the files as dropped, erased records included: it is deleted.
    await page.waitForFunction(() => /Records were erased/.test(document.querySelector('#session-state')?.textContent ?? ''), null, { timeout: 30_000 });
    assert.equal(await savedSteps(page), 0);

    // 9. incremental: a rule edit touches only new batches until a full refresh
    await page.selectOption('#run-mode', 'incremental');
    await setExpression(page, 'F2', 'total_amount > 50');
    // the incremental run had no new batch to apply the edit to
    await page.waitForFunction(() => document.querySelector('#rule-F2 .rule-stat')?.textContent.trim().endsWith('/ 0'), null, { timeout: 60_000 });
    assert.equal(await count(page, 'silver.nyc_taxi_yellow'), 265);
    await page.click('#full-refresh');
    await waitForCount(page, 'silver.nyc_taxi_yellow', 252);
    await page.selectOption('#run-mode', 'full');

    // 10. typed bronze: PERMISSIVE keeps a bad record in _corrupt_record, FAILFAST refuses the file
    const header = csv.split('\n')[0];
    const bad = `${header}\n2,2020-07-05 09:00:00,2020-07-05 09:20:00,two,3.1,1,N,161,236,1,14,0,0.5,3,0,0.3,20.3,2.5\n`;
    await page.selectOption('#bronze-mode', 'PERMISSIVE');
    await waitForCount(page, 'bronze.nyc_taxi_yellow', 266);
    await waitForCount(page, 'silver.nyc_taxi_yellow', 260);
    await page.setInputFiles('#file-bronze-nyc_taxi_yellow', { name: 'bad.csv', mimeType: 'text/csv', buffer: Buffer.from(bad) });
    await waitForCount(page, 'bronze.nyc_taxi_yellow', 267);
    await waitForCount(page, 'silver.quarantine', 7);
    await page.click('#card-bronze-nyc_taxi_yellow');
    await page.check('#corrupt-only');
    await page.waitForFunction(() => /of 1 /.test(document.querySelector('#table-range')?.textContent ?? ''), null, { timeout: 30_000 });
    assert.match(await page.locator('#rows-grid thead').innerText(), /_corrupt_record/);
    assert.match(await page.locator('#rows-grid tbody').innerText(), /passenger_count: 'two' is not DOUBLE/);
    await page.selectOption('#bronze-mode', 'FAILFAST');
    await waitForCount(page, 'bronze.nyc_taxi_yellow', 266);
    await page.setInputFiles('#file-bronze-nyc_taxi_yellow', { name: 'bad.csv', mimeType: 'text/csv', buffer: Buffer.from(bad) });
    await page.waitForFunction(() => /FAILFAST: line 2 of bad\.csv/.test(document.body.innerText), null, { timeout: 30_000 });
    assert.equal(await count(page, 'bronze.nyc_taxi_yellow'), 266);
    await page.selectOption('#bronze-mode', 'raw');
    await waitForCount(page, 'silver.nyc_taxi_yellow', 260);

    // 11. scenarios: Kafka orders (MERGE removes the redelivered order), the
    // row trail, an expectation's action; then the CDC lifecycle (SCD2)
    await page.selectOption('#example-picker', 'kafka_orders');
    await waitForCount(page, 'silver.orders', 2);
    assert.equal(await count(page, 'bronze.orders'), 4);
    assert.equal(await count(page, 'silver.quarantine'), 1);
    assert.match(await page.locator('#check-A1').innerText(), /bronze 4 = silver 2 \+ quarantine 1 \+ removed by merge 1/);
    assert.match(await page.locator('#card-silver-orders').innerText(), /MERGE ON order_id · SCD1/);
    await page.click('#card-silver-orders');
    await page.waitForFunction(() => document.querySelector('#table-title')?.textContent === 'silver.orders');
    await page.click('#rows-grid tbody tr:nth-child(1)');
    await page.waitForSelector('#trail', { timeout: 30_000 });
    assert.match(await page.locator('#trail').innerText(), /duplicate[\s\S]*orders_raw:0:2/);
    assert.match(await page.locator('#trail').innerText(), /amount: '99\.99' → 99\.99 as DECIMAL\(12,2\)/);
    await page.keyboard.press('Escape');
    await page.waitForSelector('#trail', { state: 'detached', timeout: 10_000 });
    await page.selectOption('#rule-X3 select.rule-action', 'warn');
    // history: run 1's row is released, this run's row lists N1 and X2 only
    await page.waitForFunction(() => /1 more in history/.test(document.querySelector('#card-silver-quarantine')?.textContent ?? ''), null, { timeout: 30_000 });
    assert.equal(await count(page, 'silver.quarantine'), 1);
    await page.selectOption('#example-picker', 'cdc_order');
    await waitForCount(page, 'silver.order_history', 5);
    assert.equal(await count(page, 'silver.order_current'), 1);
    assert.match(await page.locator('#card-silver-order_history').innerText(), /SCD2 · SEQUENCE BY updated_at/);
    // A reload in another bronze mode that is refused changes nothing, and
    // the switch goes on showing the mode the tables are in.
    await page.selectOption('#example-picker', 'ecommerce');
    await waitForCount(page, 'bronze.orders', 8);
    const modeBefore = await page.locator('#bronze-mode').inputValue();
    await page.selectOption('#bronze-mode', 'FAILFAST');
    await page.waitForFunction(() => /FAILFAST: line \d+ of customers\.json/.test(document.body.innerText), null, { timeout: 60_000 });
    assert.equal(await page.locator('#bronze-mode').inputValue(), modeBefore);
    await page.selectOption('#example-picker', 'cdc_order');
    await waitForCount(page, 'silver.order_history', 5);

    // 12. Russian
    await page.click('#lang-switch');
    await page.waitForFunction(() => document.querySelector('#checks h2')?.textContent === 'Проверки качества', null, { timeout: 60_000 });
    // The engine's texts follow (check descriptions and observations).
    await page.waitForFunction(() => /Текущая ровно открытая версия/.test(document.querySelector('#checks')?.textContent ?? ''), null, { timeout: 60_000 });
    // No English left in the page's own words: every fold opened, the batch
    // log, the version history and the checkpoints included ("Replay" and
    // "watermark" are the field's terms, kept as they are).
    await page.click('#card-bronze-order_cdc');
    await page.waitForSelector('#batch-log', { timeout: 30_000 });
    await page.evaluate(() => document.querySelectorAll('details').forEach((d) => { d.open = true; }));
    const ruText = await page.evaluate(() => document.body.innerText);
    const english = ['Rule registry', 'Quality checks', 'Run now', 'Read again', 'Showing', 'Produce', 'Poll', 'end offset',
      'Start fresh', 'Saved in this browser', 'last_ingest_ts', 'bronze_table', 'Version', 'History', 'rows', 'batch ', 'typed ', 'full refresh']
      .filter((w) => ruText.includes(w))
      .map((w) => { const at = ruText.indexOf(w); return `${w}: …${ruText.slice(Math.max(0, at - 60), at + 60)}…`; });
    assert.deepEqual(english, [], 'English words in the Russian page');

    assert.equal(await page.locator('#crash-notice').count(), 0);
    assert.deepEqual(problems, []);
}));
