// End to end: the instructor's anti-patterns lab on the bundled scenarios,
// driven as an instructor would, with the consequence asserted on the page.
// Screenshots of the lab at 1280×800 and 1920×1080 go to
// $ARTIFACTS (default target/e2e-artifacts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { APP_URL, count, waitForCount, withPage } from './lib.mjs';

const ARTIFACTS = process.env.ARTIFACTS ?? 'target/e2e-artifacts';

const text = (page, sel) => page.locator(sel).innerText();
const countsRow = (page, table) => text(page, `#lab-counts tr[data-table="${table}"]`);
const until = (page, fn, arg) => page.waitForFunction(fn, arg, { timeout: 120_000 });

test('each anti-pattern runs in a twin beside the correct pipeline and its damage is shown', () => withPage(async (page, problems) => {
  await page.goto(`${APP_URL}?lang=en`);
  await page.waitForSelector('#card-silver-nyc_taxi_yellow .count', { timeout: 180_000 });
  await page.selectOption('#example-picker', 'kafka_orders');
  await waitForCount(page, 'silver.orders', 2);

  // INSERT instead of MERGE: one run looks right...
  await page.click('#lab > summary');
  await page.click('#lab-insert_instead_of_merge input');
  await page.waitForSelector('#lab-counts');
  assert.equal(await countsRow(page, 'silver.orders'), 'silver.orders\t2\t2');
  assert.match(await text(page, '#lab-findings'), /One run of the job gives the same silver with INSERT INTO \(silver\.orders\) as with MERGE/);
  assert.match(await text(page, '#lab-gold-revenue_daily .lab-measure[data-column="revenue"]'), /Σ revenue: 99\.99 → 99\.99 \(×1\)/);

  // ...until the orchestrator re-runs the job: revenue exactly doubled, MERGE unchanged.
  const versionsBefore = await page.locator('#card-silver-orders').innerText();
  await page.click('#lab-rerun-job');
  await until(page, () => /\(×2\)/.test(document.querySelector('#lab-gold-revenue_daily .lab-measure[data-column="revenue"]')?.textContent ?? ''));
  assert.equal(await text(page, '#lab-gold-revenue_daily .lab-measure[data-column="revenue"]'), 'Σ revenue: 99.99 → 199.98 (×2)');
  assert.equal(await countsRow(page, 'silver.orders'), 'silver.orders\t2\t4');
  assert.equal(await count(page, 'silver.orders'), 2);
  assert.equal(await page.locator('#card-silver-orders').innerText(), versionsBefore);
  assert.match(await text(page, '#lab-checks [data-check="R3"]'), /R3\s*PASS\s*→\s*FAIL/);
  // The changed cells are marked on the twin's side only.
  assert.equal(await page.locator('#lab-gold-revenue_daily [data-side="anti"] td.changed').first().innerText(), '199.98');
  assert.equal(await page.locator('#lab-gold-revenue_daily [data-side="correct"] td.changed').first().innerText(), '99.99');
  assert.match(await text(page, '#lab-timeline'), /The orchestrator re-ran the job[\s\S]*Correct: no table changed[\s\S]*With the anti-pattern: silver\.orders: 2 → 4 rows/);

  // The health panel: the re-run turned one sign red, on the twin only.
  const colours = () => page.$$eval('#lab-health tbody tr', (rows) => rows.map((r) => `${r.dataset.sign}:${r.dataset.correct}/${r.dataset.anti}`));
  assert.deepEqual(await colours(), [
    'bronze_keeps_everything:green/green', 'nothing_reads_bronze:green/green', 'gold_speaks_business:green/green',
    'gold_rebuildable:green/red', 'lineage_known:green/green',
  ]);

  mkdirSync(ARTIFACTS, { recursive: true });
  await page.locator('#lab').scrollIntoViewIfNeeded();
  await page.screenshot({ path: `${ARTIFACTS}/lab-1280x800.png` });
  await page.setViewportSize({ width: 1920, height: 1080 });
  await page.screenshot({ path: `${ARTIFACTS}/lab-1920x1080.png` });
  // Instructor mode: larger type for the projector, kept across a visit.
  await page.click('#instructor-mode');
  await page.waitForSelector('.app.instructor');
  assert.equal(await page.locator('#instructor-mode').getAttribute('aria-pressed'), 'true');
  assert.equal(await page.evaluate(() => localStorage.getItem('medallion-playground-instructor')), '1');
  await page.screenshot({ path: `${ARTIFACTS}/lab-instructor-1920x1080.png` });
  // Everything by keyboard: focus the re-run button and press Enter.
  await page.focus('#lab-rerun-job');
  await page.keyboard.press('Enter');
  await until(page, () => /\(×3\)/.test(document.querySelector('#lab-gold-revenue_daily .lab-measure[data-column="revenue"]')?.textContent ?? ''));
  await page.click('#instructor-mode');
  await page.waitForSelector('.app:not(.instructor)');
  await page.setViewportSize({ width: 1280, height: 800 });

  // A business filter at ingest: the rejected record exists nowhere.
  await page.click('#lab-insert_instead_of_merge input');
  await page.click('#lab-filter_at_ingest input');
  await until(page, () => document.querySelector('#lab-counts tr[data-table="silver.quarantine"]')?.innerText === 'silver.quarantine\t1\t0');
  assert.equal(await countsRow(page, 'bronze.orders'), 'bronze.orders\t4\t3');
  assert.match(await text(page, '#lab-findings'), /An audit query over bronze for them finds 0 rows/);
  assert.equal((await colours())[0], 'bronze_keeps_everything:green/red');
  assert.match(await text(page, '#lab-health tr[data-sign="bronze_keeps_everything"]'), /1 record the source sent is not in bronze: bronze\.orders: 1 \(filter_at_ingest\)/);

  // OVERWRITE of the day's partition on the landing-zone retry: the first file is gone.
  await page.click('#lab-filter_at_ingest input');
  await page.click('#lab-overwrite_partition input');
  await page.selectOption('#example-picker', 'landing_retry');
  await until(page, () => document.querySelector('#lab-counts tr[data-table="silver.orders"]')?.innerText === 'silver.orders\t2\t1');
  assert.equal(await countsRow(page, 'bronze.orders'), 'bronze.orders\t4\t2');
  assert.match(await text(page, '#lab-findings'), /1 of its 2 batches was overwritten by a later batch of the same day/);

  // dropDuplicates at ingest on the CDC scenario: the history is gone.
  await page.click('#lab-overwrite_partition input');
  await page.click('#lab-dedup_at_ingest input');
  await page.selectOption('#example-picker', 'cdc_order');
  await waitForCount(page, 'silver.order_history', 5);
  await until(page, () => document.querySelector('#lab-counts tr[data-table="silver.order_history"]')?.innerText === 'silver.order_history\t5\t1');
  assert.match(await text(page, '#lab-gold-time_in_status .lab-measure[data-column="versions"]'), /Σ versions: 5 → 1 \(×0\.2\)/);
  assert.equal(await page.locator('#lab-gold-time_in_status [data-side="anti"] tr.lab-absent').count(), 1);

  // Russian, then back to the correct pipeline.
  await page.click('#lang-switch');
  await until(page, () => document.querySelector('#lab > summary h2')?.textContent === 'Лаборатория антипаттернов');
  await until(page, () => /источник прислал 5 записей, bronze с dropDuplicates хранит 1/.test(document.querySelector('#lab-findings')?.textContent ?? ''));
  await page.click('#lab-reset');
  await page.waitForSelector('#lab-counts', { state: 'detached', timeout: 60_000 });
  assert.equal(await page.locator('#lab-dedup_at_ingest input').isChecked(), false);
  assert.deepEqual(problems, []);
}));

test('events a real pipeline meets land in the session and on the timeline', () => withPage(async (page, problems) => {
  await page.goto(`${APP_URL}?lang=en`);
  await page.waitForSelector('#card-silver-nyc_taxi_yellow .count', { timeout: 180_000 });
  await page.selectOption('#example-picker', 'kafka_orders');
  await waitForCount(page, 'silver.orders', 2);
  await page.click('#lab > summary');

  // A business error goes to the quarantine: the data owner fixes it.
  await page.click('#lab-business-error');
  await waitForCount(page, 'silver.quarantine', 2);
  assert.equal(await count(page, 'bronze.orders'), 5);
  assert.match(await text(page, '#lab-timeline'), /A business error arrived[\s\S]*A record with amount = -100 arrived in bronze\.orders[\s\S]*the data owner fixes the record, from the quarantine/);

  // The consumer crashes before commit: the last micro-batch comes again.
  await page.click('#lab-kafka-redelivery');
  await waitForCount(page, 'bronze.orders', 6);
  assert.equal(await count(page, 'silver.orders'), 2);
  assert.match(await text(page, '#lab-timeline'), /The Kafka consumer crashed before commit[\s\S]*offsets 4–4/);

  // The source re-sends its file: bronze keeps both, MERGE takes it once.
  await page.click('#lab-resend-file');
  await waitForCount(page, 'bronze.users', 4);
  assert.equal(await count(page, 'silver.users'), 2);

  // Schema drift: raw bronze takes it; silver reads the declared amount as missing.
  await page.click('#lab-schema-drift');
  await page.waitForFunction(() => /The source re-sent its file[\s\S]*The source changed its schema/.test(document.querySelector('#lab-timeline')?.textContent ?? ''), null, { timeout: 60_000 });
  assert.match(await text(page, '#lab-timeline'), /renamed amount to amount_v2 and added source_version/);
  // Rapid toggles build on each other, not on the view before the engine answered.
  await page.click('#lab-dedup_at_ingest input');
  await page.click('#lab-filter_at_ingest input');
  await page.click('#lab-overwrite_partition input');
  await page.waitForFunction(() => document.querySelectorAll('.lab-switch.on').length === 3 && document.querySelector('#lab-counts'), null, { timeout: 120_000 });
  await page.waitForFunction(() => !document.querySelector('.busy, progress'), null, { timeout: 120_000 }).catch(() => {});
  assert.deepEqual(await page.$$eval('.lab-switch.on', (ls) => ls.map((l) => l.id)),
    ['lab-dedup_at_ingest', 'lab-filter_at_ingest', 'lab-overwrite_partition']);
  await page.click('#lab-reset');
  await page.waitForSelector('#lab-counts', { state: 'detached', timeout: 60_000 });

  // A technical failure: 503 halfway, nothing visible, the platform's retry lands it.
  await page.click('#lab-technical-failure');
  await page.waitForFunction(() => /A technical failure, then the retry/.test(document.querySelector('#lab-timeline')?.textContent ?? ''), null, { timeout: 60_000 });
  assert.match(await text(page, '#lab-timeline'), /answered 503 Service Unavailable after 1 write; nothing became visible[\s\S]*the platform fixes it by retrying/);
  assert.deepEqual(problems, []);
}));

test('bronze rewritten after publication, the shortcut and late records show their damage', () => withPage(async (page, problems) => {
  await page.goto(`${APP_URL}?lang=en`);
  await page.waitForSelector('#card-silver-nyc_taxi_yellow .count', { timeout: 180_000 });
  await page.selectOption('#example-picker', 'kafka_orders');
  await waitForCount(page, 'silver.orders', 2);
  await page.click('#lab > summary');
  const colours = () => page.$$eval('#lab-health tbody tr', (rows) => rows.map((r) => `${r.dataset.sign}:${r.dataset.correct}/${r.dataset.anti}`));
  const findings = (re) => until(page, (src) => new RegExp(src).test(document.querySelector('#lab-findings')?.textContent ?? ''), re.source);

  // Late records: dated three days back, taken by the watermark on _ingest_ts.
  await page.click('#lab-late-records');
  await waitForCount(page, 'silver.orders', 4);
  assert.match(await text(page, '#lab-timeline'), /Late records arrived[\s\S]*created_at on 2024-01-12, 3 days before the newest records \(2024-01-15\)[\s\S]*gold\.revenue_daily: 1 → 2 rows/);

  // The weekly fix job: the business error's -100 becomes 100 in bronze, so a replay changes published gold.
  await page.click('#lab-business-error');
  await page.waitForFunction(() => /A business error arrived/.test(document.querySelector('#lab-timeline')?.textContent ?? ''), null, { timeout: 60_000 });
  await page.click('#lab-fix_job_in_bronze input');
  await findings(/the weekly fix job rewrote 2 records the source sent: 1 UPDATEd in place/);
  assert.match(await text(page, '#lab-findings'), /gold\.revenue_daily: the version published before bronze was rewritten and a replay of today's bronze differ/);
  assert.match(await text(page, '#lab-gold-revenue_daily .lab-measure[data-column="revenue"]'), /Σ revenue: 199\.98 → 299\.98/);
  assert.deepEqual(await colours(), [
    'bronze_keeps_everything:green/red', 'nothing_reads_bronze:green/green', 'gold_speaks_business:green/green',
    'gold_rebuildable:green/red', 'lineage_known:green/green',
  ]);

  // The weekly DELETE request: the customer with most records leaves bronze.
  await page.click('#lab-fix_job_in_bronze input');
  await page.click('#lab-weekly_delete input');
  await findings(/The weekly DELETE … WHERE user_id = 42 removed that customer's records from bronze\.orders/);
  assert.deepEqual(await colours(), [
    'bronze_keeps_everything:green/red', 'nothing_reads_bronze:green/green', 'gold_speaks_business:green/green',
    'gold_rebuildable:green/red', 'lineage_known:green/green',
  ]);

  // The shortcut: two gold models over bronze, each cleaning its own way.
  await page.click('#lab-weekly_delete input');
  await page.click('#lab-shortcut input');
  await findings(/Two gold models read bronze\.orders and clean it their own way[\s\S]*They disagree/);
  await page.waitForSelector('#lab-gold-orders_total_a');
  await page.waitForSelector('#lab-gold-orders_total_b');
  assert.deepEqual(await colours(), [
    'bronze_keeps_everything:green/green', 'nothing_reads_bronze:green/red', 'gold_speaks_business:green/green',
    'gold_rebuildable:green/green', 'lineage_known:green/green',
  ]);
  assert.deepEqual(problems, []);
}));

test('a JOIN at ingest keeps yesterday\'s lookup in bronze when a customer moves', () => withPage(async (page, problems) => {
  await page.goto(`${APP_URL}?lang=en`);
  await page.waitForSelector('#card-silver-nyc_taxi_yellow .count', { timeout: 180_000 });
  await page.selectOption('#example-picker', 'kafka_orders');
  await waitForCount(page, 'silver.orders', 2);
  await page.click('#lab > summary');
  await page.click('#lab-join_at_ingest input');
  await until(page, () => /stored country, segment in them/.test(document.querySelector('#lab-findings')?.textContent ?? ''));
  await page.click('#lab-dimension-change');
  await until(page, () => /3 of them hold values silver\.users no longer has/.test(document.querySelector('#lab-findings')?.textContent ?? ''));
  assert.match(await text(page, '#lab-last-event'), /the record uid = 42 now has country = RU \(was DE\)/);
  // The correct side's gold moved to RU; the twin's stayed DE.
  assert.match(await text(page, '#lab-gold-revenue_daily [data-side="correct"]'), /RU/);
  assert.match(await text(page, '#lab-gold-revenue_daily [data-side="anti"]'), /DE/);
  const colours = await page.$$eval('#lab-health tbody tr', (rows) => rows.map((r) => `${r.dataset.sign}:${r.dataset.correct}/${r.dataset.anti}`));
  assert.deepEqual(colours, [
    'bronze_keeps_everything:green/green', 'nothing_reads_bronze:green/green', 'gold_speaks_business:green/green',
    'gold_rebuildable:green/red', 'lineage_known:green/red',
  ]);
  assert.deepEqual(problems, []);
}));

test('DROPMALFORMED at ingest leaves the quarantine empty because the evidence never landed', () => withPage(async (page, problems) => {
  await page.goto(`${APP_URL}?lang=en`);
  await page.waitForSelector('#card-silver-nyc_taxi_yellow .count', { timeout: 180_000 });
  await page.selectOption('#example-picker', 'ecommerce');
  await page.waitForSelector('#card-silver-customers .count', { timeout: 60_000 });
  await page.click('#lab > summary');
  await page.click('#lab-drop_malformed input');
  await until(page, () => /DROPMALFORMED dropped 1 of 6 records that did not fit the declared schema/.test(document.querySelector('#lab-findings')?.textContent ?? ''));
  assert.match(await text(page, '#lab-findings'), /bronze\.orders: DROPMALFORMED dropped 3 of 8 records/);
  assert.equal(await countsRow(page, 'bronze.orders'), 'bronze.orders\t8\t5');
  const colours = await page.$$eval('#lab-health tbody tr', (rows) => rows.map((r) => `${r.dataset.sign}:${r.dataset.correct}/${r.dataset.anti}`));
  assert.equal(colours[0], 'bronze_keeps_everything:green/red');
  assert.deepEqual(problems, []);
}));

test('a failed silver job stops a monolithic silver; independent jobs refresh what does not read it', () => withPage(async (page, problems) => {
  await page.goto(`${APP_URL}?lang=en`);
  await page.waitForSelector('#card-silver-nyc_taxi_yellow .count', { timeout: 180_000 });
  await page.selectOption('#example-picker', 'cdc_order');
  await page.waitForSelector('#card-silver-order_history .count', { timeout: 60_000 });
  await page.click('#lab > summary');
  // The lab explains its terms for a learner.
  assert.match(await page.locator('#lab-glossary').textContent(), /Watermark[\s\S]*an incremental run reads only what landed after it/);
  await page.click('#lab-monolithic_silver input');
  await until(page, () => /One job builds every silver table in the twin/.test(document.querySelector('#lab-findings')?.textContent ?? ''));
  await page.click('#lab-silver-job-fails');
  await until(page, () => /Monolithic silver: the whole run stopped/.test(document.querySelector('#lab-findings')?.textContent ?? ''));
  assert.match(await text(page, '#lab-findings'), /With independent jobs only these wait: silver\.order_current \(gold models: 0 of 1\); up to date: silver\.order_history, gold\.time_in_status/);
  assert.match(await text(page, '#lab-last-event'), /the job of silver\.order_current failed halfway \(injected by the lab, once\)/);
  // The session's history and its gold took the new records; the monolithic twin's did not.
  assert.equal(await countsRow(page, 'silver.order_history'), 'silver.order_history\t7\t5');
  assert.equal(await countsRow(page, 'silver.order_current'), 'silver.order_current\t1\t1');
  assert.match(await text(page, '#lab-gold-time_in_status .lab-measure[data-column="versions"]'), /7 → 5/);
  assert.match(await text(page, '#stale-banner'), /silver\.order_current: the job failed halfway/);
  // The retry: both sides catch up.
  await page.click('#lab-rerun-job');
  await until(page, () => /The retry: the job of silver\.order_current ran again and succeeded/.test(document.querySelector('#lab-last-event')?.textContent ?? ''));
  await until(page, () => /One job builds every silver table in the twin/.test(document.querySelector('#lab-findings')?.textContent ?? ''));
  assert.equal(await countsRow(page, 'silver.order_history'), 'silver.order_history\t7\t7');
  assert.equal(await page.locator('#stale-banner').count(), 0);
  assert.deepEqual(problems, []);
}));
