// The session survives a reload: counts, versions, quarantine history, the
// batch log and a rule edit come back exactly; a second tab opens it
// read-only and can take it over; Start fresh clears it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { APP_URL, bigTaxiCsv, count, waitForCount, withPage } from './lib.mjs';

const TABLES = ['bronze.nyc_taxi_yellow', 'bronze.taxi_zone_lookup', 'silver.nyc_taxi_yellow', 'silver.quarantine', 'gold.trips_by_borough_daily'];

/// What a learner sees of the session: every card's count, the quarantine
/// card (with its history), silver's versions, the batch log and F2's expression.
async function state(page) {
  // A run shows its rows before its commit lands (silver's version bar says
  // "being written as a new version…"); the session is compared once that
  // commit is in the log and saved in the browser.
  await page.click('#card-silver-nyc_taxi_yellow');
  await page.waitForSelector('#version-select');
  await page.waitForSelector('#version-saving', { state: 'detached', timeout: 60_000 });
  await page.waitForFunction(() => /Saved in this browser/.test(document.querySelector('#session-state')?.textContent ?? ''), null, { timeout: 60_000 });
  const counts = {};
  for (const t of TABLES) counts[t] = await count(page, t);
  const versions = await page.locator('#version-select option').allInnerTexts();
  await page.click('#card-bronze-nyc_taxi_yellow');
  await page.waitForSelector('#batch-log .batch-row');
  const batchLog = await page.locator('#batch-log').innerText();
  return {
    counts,
    quarantineCard: await page.locator('#card-silver-quarantine').innerText(),
    versions,
    batchLog,
    f2: await page.locator('#rule-F2 textarea.rule-expr').inputValue(),
  };
}

test('a reload restores the session; a second tab is read-only until it takes over; Start fresh clears it', () => withPage(async (page, problems) => {
  await page.goto(`${APP_URL}?lang=en`);
  await page.waitForSelector('#card-silver-nyc_taxi_yellow .count', { timeout: 180_000 });
  await page.waitForFunction(() => /Saved in this browser/.test(document.querySelector('#session-state')?.textContent ?? ''), null, { timeout: 30_000 });

  // A rule edit, then a file with one good and one bad trip.
  await page.locator('#rule-F2 textarea.rule-expr').fill('total_amount > 50');
  await waitForCount(page, 'silver.nyc_taxi_yellow', 247);
  const csv = 'VendorID,tpep_pickup_datetime,tpep_dropoff_datetime,passenger_count,trip_distance,RatecodeID,store_and_fwd_flag,PULocationID,DOLocationID,payment_type,fare_amount,extra,mta_tax,tip_amount,tolls_amount,improvement_surcharge,total_amount,congestion_surcharge\n'
    + '1,2020-07-01 00:25:32,2020-07-01 00:33:39,1,1.50,1,N,238,75,2,8,0.5,0.5,0,0,0.3,9.3,0\n'
    + '2,2020-07-01 00:05:00,2020-07-01 00:15:00,1,2.00,1,N,161,236,1,-10,0.5,0.5,2,0,0.3,-6.7,2.5\n';
  await page.setInputFiles('#file-bronze-nyc_taxi_yellow', { name: 'two_trips.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
  await waitForCount(page, 'bronze.nyc_taxi_yellow', 268);
  await waitForCount(page, 'silver.nyc_taxi_yellow', 248);
  await waitForCount(page, 'silver.quarantine', 20);
  // A looser F2 releases rows: the quarantine keeps them as history.
  await page.locator('#rule-F2 textarea.rule-expr').fill('total_amount > 200');
  await page.waitForFunction(() => /more in history/.test(document.querySelector('#card-silver-quarantine')?.textContent ?? ''), null, { timeout: 60_000 });
  const before = await state(page);
  assert.equal(before.f2, 'total_amount > 200');
  assert.ok(before.versions.length >= 3, `silver has versions: ${before.versions}`);
  assert.match(before.quarantineCard, /more in history/);

  // Reload: the same session, to the cell. The page says what it is doing.
  await page.reload();
  await page.waitForFunction(() => /Restoring your saved session/.test(document.querySelector('#engine-status')?.textContent ?? ''), null, { timeout: 180_000, polling: 50 });
  await page.waitForSelector('#card-silver-nyc_taxi_yellow .count', { timeout: 180_000 });
  await waitForCount(page, 'bronze.nyc_taxi_yellow', 268, 180_000);
  const after = await state(page);
  assert.deepEqual(after, before);
  await page.waitForFunction(() => /Saved in this browser · [\d.]+ [KM]B/.test(document.querySelector('#session-state')?.textContent ?? ''), null, { timeout: 30_000 });
  console.log(`# after the reload: ${await page.locator('#session-state span').first().innerText()}`);

  // A second tab: the same session, read-only, until it takes over.
  const second = await page.context().newPage();
  const asked = [];
  second.on('dialog', (d) => { asked.push(d.message()); d.accept(); });
  second.on('pageerror', (e) => problems.push(`second tab: ${e.message}`));
  await second.goto(`${APP_URL}?lang=en`);
  await second.waitForFunction(() => /Read-only: another tab owns this session/.test(document.querySelector('#session-state')?.textContent ?? ''), null, { timeout: 180_000 });
  await waitForCount(second, 'silver.nyc_taxi_yellow', before.counts['silver.nyc_taxi_yellow'], 180_000);
  // Nothing that would change the lake can be used there: each control is
  // off, and says why.
  const locked = (tab) => tab.evaluate(() => ['#run-mode', '#run-now', '#replay', '#example-picker', '#reload-scenario', '#bronze-mode',
    '#file-bronze-nyc_taxi_yellow', '#rule-F2 textarea.rule-expr', '#rule-F2 select.rule-action', '#add-filter']
    .map((sel) => { const el = document.querySelector(sel); return `${sel}: ${el === null ? 'missing' : el.matches(':disabled') ? 'off' : 'ON'}`; }));
  const lockedSelectors = (await locked(second)).filter((l) => !l.endsWith(': off'));
  assert.deepEqual(lockedSelectors, [], 'every control that changes the lake is off in the read-only tab');
  assert.match(await second.locator('#run-now').getAttribute('title'), /Read-only tab: another tab owns this session/);
  // Reading stays possible: another table, its rows.
  await second.click('#card-silver-quarantine');
  await second.waitForFunction(() => document.querySelector('#table-title')?.textContent === 'silver.quarantine', null, { timeout: 30_000 });
  // The language is no change of the session: switching it there and back
  // leaves nothing to discard (taking over asks nothing).
  await second.click('#lang-switch');
  await second.waitForFunction(() => /Только чтение/.test(document.querySelector('#session-state')?.textContent ?? ''), null, { timeout: 30_000 });
  await second.click('#lang-switch');
  await second.waitForFunction(() => /Read-only/.test(document.querySelector('#session-state')?.textContent ?? ''), null, { timeout: 30_000 });
  assert.equal(await count(second, 'silver.nyc_taxi_yellow'), before.counts['silver.nyc_taxi_yellow']);
  await second.click('#take-over');
  assert.deepEqual(asked, [], 'nothing to discard: no question');
  await second.waitForFunction(() => /Saved in this browser/.test(document.querySelector('#session-state')?.textContent ?? ''), null, { timeout: 180_000 });
  // The first tab lost the session: it says so, its controls are off, and it can take it back.
  await page.waitForFunction(() => /Another tab took this session over/.test(document.querySelector('#session-state')?.textContent ?? ''), null, { timeout: 30_000 });
  assert.deepEqual((await locked(page)).filter((l) => !l.endsWith(': off')), [], 'the tab that lost the session is read-only');
  assert.equal(await page.locator('#session-state #take-over').count(), 1);
  await waitForCount(second, 'silver.nyc_taxi_yellow', before.counts['silver.nyc_taxi_yellow'], 180_000);
  assert.equal(await second.locator('#rule-F2 textarea.rule-expr').inputValue(), 'total_amount > 200');
  assert.equal(await second.locator('#run-now').isDisabled(), false);

  // Start fresh (confirmed): the default example, as on a first visit.
  await second.click('#start-fresh');
  await second.waitForFunction(() => document.querySelector('#card-bronze-nyc_taxi_yellow .count')?.textContent === '266', null, { timeout: 180_000 });
  await waitForCount(second, 'silver.nyc_taxi_yellow', 260);
  assert.equal(await second.locator('#rule-F2 textarea.rule-expr').inputValue(), 'total_amount > 1000');
  await second.close();

  assert.deepEqual(problems, []);
}));

test('taking over while the owner is at work stops that work first: nothing of it is saved, and the new owner keeps its own changes', () => withPage(async (page, problems) => {
  await page.goto(`${APP_URL}?lang=en`);
  await page.waitForSelector('#card-silver-nyc_taxi_yellow .count', { timeout: 180_000 });
  await page.waitForFunction(() => /Saved in this browser/.test(document.querySelector('#session-state')?.textContent ?? ''), null, { timeout: 30_000 });
  const before = await count(page, 'bronze.nyc_taxi_yellow');
  const second = await page.context().newPage();
  second.on('dialog', (d) => d.accept());
  second.on('pageerror', (e) => problems.push(`second tab: ${e.message}`));
  second.on('console', (m) => { if (m.type() === 'error') problems.push(`second tab: ${m.text()}`); });
  await second.goto(`${APP_URL}?lang=en`);
  await second.waitForFunction(() => /Read-only/.test(document.querySelector('#session-state')?.textContent ?? ''), null, { timeout: 180_000 });
  await waitForCount(second, 'bronze.nyc_taxi_yellow', before, 180_000);

  // The owner starts a long ingest; the second tab takes over while it runs.
  const { csv } = bigTaxiCsv(8);
  await page.setInputFiles('#file-bronze-nyc_taxi_yellow', { name: 'big_trips.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
  await page.waitForSelector('#engine-cancel', { state: 'visible', timeout: 60_000 });
  await second.click('#take-over');
  await second.waitForFunction(() => /Saved in this browser/.test(document.querySelector('#session-state')?.textContent ?? ''), null, { timeout: 180_000 });

  // The old owner stopped that work and says so; it shows the session read-only.
  await page.waitForFunction(() => /Another tab took this session over: this change was stopped and nothing of it was kept/.test(document.body.innerText), null, { timeout: 60_000 });
  await page.waitForFunction(() => /Another tab took this session over/.test(document.querySelector('#session-state')?.textContent ?? ''), null, { timeout: 30_000 });
  await page.waitForSelector('#engine-status', { state: 'detached', timeout: 180_000 });
  assert.equal(await count(page, 'bronze.nyc_taxi_yellow'), before);
  assert.equal(await page.locator('#run-now').isDisabled(), true);

  // The new owner has the session without the stopped ingest, and its own
  // change survives a reload (no second engine wrote the lake meanwhile).
  await waitForCount(second, 'bronze.nyc_taxi_yellow', before, 180_000);
  await second.locator('#rule-F2 textarea.rule-expr').fill('total_amount > 50');
  await waitForCount(second, 'silver.nyc_taxi_yellow', 247, 120_000);
  await second.waitForFunction(() => /Saved in this browser/.test(document.querySelector('#session-state')?.textContent ?? ''), null, { timeout: 30_000 });
  await second.waitForTimeout(1000);
  await second.reload();
  await waitForCount(second, 'silver.nyc_taxi_yellow', 247, 180_000);
  assert.equal(await count(second, 'bronze.nyc_taxi_yellow'), before);
  assert.equal(await second.locator('#rule-F2 textarea.rule-expr').inputValue(), 'total_amount > 50');

  // A third tab opens read-only; when the owner's tab closes it says so,
  // and a reload makes it the owner with the latest state.
  const third = await page.context().newPage();
  third.on('pageerror', (e) => problems.push(`third tab: ${e.message}`));
  await third.goto(`${APP_URL}?lang=en`);
  await third.waitForFunction(() => /Read-only/.test(document.querySelector('#session-state')?.textContent ?? ''), null, { timeout: 180_000 });
  await second.close({ runBeforeUnload: true });
  await third.waitForFunction(() => /The tab that owned this session was closed or reloaded/.test(document.querySelector('#session-state')?.textContent ?? ''), null, { timeout: 30_000 });
  await third.click('#reload-page');
  await third.waitForFunction(() => /Saved in this browser/.test(document.querySelector('#session-state')?.textContent ?? ''), null, { timeout: 180_000 });
  await waitForCount(third, 'silver.nyc_taxi_yellow', 247, 180_000);
  await third.close();
  assert.deepEqual(problems, []);
}));

test('the lake kept in the browser (OPFS) alone restores the session: its logs, files and state', () => withPage(async (page, problems) => {
  await page.goto(`${APP_URL}?lang=en`);
  await page.waitForSelector('#card-silver-nyc_taxi_yellow .count', { timeout: 180_000 });
  await page.waitForFunction(() => /Saved in this browser/.test(document.querySelector('#session-state')?.textContent ?? ''), null, { timeout: 30_000 });
  await page.locator('#rule-F2 textarea.rule-expr').fill('total_amount > 50');
  await waitForCount(page, 'silver.nyc_taxi_yellow', 247);
  // The count shows once computed; the edit is saved once the engine is idle.
  await page.waitForSelector('#engine-status', { state: 'detached', timeout: 60_000 });
  await page.waitForFunction(() => /Saved in this browser/.test(document.querySelector('#session-state')?.textContent ?? ''), null, { timeout: 30_000 });
  const before = await state(page);
  // What the worker wrote: every table's log and files, and the session's own log.
  const files = await page.evaluate(async () => {
    const dir = await (await navigator.storage.getDirectory()).getDirectoryHandle('medallion-lake');
    const names = [];
    for await (const name of dir.keys()) names.push(decodeURIComponent(name));
    return names.sort();
  });
  for (const f of ['meta/session/_delta_log/00000000000000000001.json', 'silver/nyc_taxi_yellow/_delta_log/00000000000000000001.json', 'bronze/nyc_taxi_yellow/part-000001.parquet']) {
    assert.ok(files.includes(f), `${f} in ${files.join(', ')}`);
  }
  console.log(`# the lake in OPFS: ${files.length} files`);
  // Without the saved requests, the lake alone brings the session back.
  await page.evaluate(() => new Promise((resolve, reject) => {
    const open = indexedDB.open('medallion-playground', 1);
    open.onsuccess = () => {
      const tx = open.result.transaction('journal', 'readwrite');
      tx.objectStore('journal').clear();
      tx.oncomplete = () => { open.result.close(); resolve(); };
      tx.onerror = () => reject(tx.error);
    };
    open.onerror = () => reject(open.error);
  }));
  const started = Date.now();
  await page.reload();
  await page.waitForSelector('#card-silver-nyc_taxi_yellow .count', { timeout: 180_000 });
  await waitForCount(page, 'silver.nyc_taxi_yellow', 247, 180_000);
  console.log(`# reload → the session opened from the lake: ${Date.now() - started} ms`);
  assert.deepEqual(await state(page), before);
  // And it goes on: the next edit is saved in the lake too.
  await page.locator('#rule-F2 textarea.rule-expr').fill('total_amount > 1000');
  await waitForCount(page, 'silver.nyc_taxi_yellow', 260);
  assert.deepEqual(problems, []);
}));

// The browser's storage for the lake (OPFS, written by the engine's worker)
// refuses every write after the first session commit (the example's load).
const lakeFullAfterTheFirstSave = (page) => page.route('**/engine-loader.js*', async (route) => {
  const response = await route.fetch();
  const body = `${await response.text()}
const medallion_lake_write_real = medallion_lake_write;
let medallion_lake_full = false;
medallion_lake_write = async (path, bytes) => {
  if (medallion_lake_full) throw new DOMException('The quota has been exceeded.', 'QuotaExceededError');
  await medallion_lake_write_real(path, bytes);
  if (path === 'meta/session/_delta_log/00000000000000000000.json') medallion_lake_full = true;
};
`;
  await route.fulfill({ response, body });
});

test('when the browser storage is full the session goes on, says so, and keeps what was saved', () => withPage(async (page, problems) => {
  // The browser refuses every write after the first (the example's load).
  await page.addInitScript(() => {
    const add = IDBObjectStore.prototype.add;
    let writes = 0;
    IDBObjectStore.prototype.add = function (...args) {
      if (++writes > 1) throw new DOMException('The quota has been exceeded.', 'QuotaExceededError');
      return add.apply(this, args);
    };
  });
  // So does its storage for the lake (OPFS, written by the engine's worker):
  // every write after the load's session commit is refused.
  await lakeFullAfterTheFirstSave(page);
  await page.goto(`${APP_URL}?lang=en`);
  await page.waitForSelector('#card-silver-nyc_taxi_yellow .count', { timeout: 180_000 });
  await page.waitForFunction(() => /Saved in this browser/.test(document.querySelector('#session-state')?.textContent ?? ''), null, { timeout: 30_000 });
  await page.locator('#rule-F2 textarea.rule-expr').fill('total_amount > 50');
  await waitForCount(page, 'silver.nyc_taxi_yellow', 247);
  await page.waitForFunction(() => /Browser storage is full: the session goes on in this tab, but the last change and the ones after it are not saved \(a reload returns to the state before them\)/.test(document.querySelector('#session-state')?.textContent ?? ''), null, { timeout: 30_000 });
  // Nothing lost here: the next edit still runs.
  await page.locator('#rule-F2 textarea.rule-expr').fill('total_amount > 100');
  await page.waitForFunction(() => Number(document.querySelector('#card-silver-nyc_taxi_yellow .count')?.textContent.replace(/\D/g, '')) > 247, null, { timeout: 60_000 });
  // A reload brings back what was saved: the example as loaded.
  await page.reload();
  await page.waitForSelector('#card-silver-nyc_taxi_yellow .count', { timeout: 180_000 });
  await waitForCount(page, 'silver.nyc_taxi_yellow', 260, 180_000);
  assert.equal(await page.locator('#rule-F2 textarea.rule-expr').inputValue(), 'total_amount > 1000');
  assert.deepEqual(problems, []);
}));

test('a change the lake in the browser cannot take is not saved half: a reload returns to the state before it, as the page said', () => withPage(async (page, problems) => {
  // Only the lake's storage (OPFS, written by the engine's worker) is full;
  // the saved requests (IndexedDB) would still take the change's copy.
  await lakeFullAfterTheFirstSave(page);
  await page.goto(`${APP_URL}?lang=en`);
  await page.waitForSelector('#card-silver-nyc_taxi_yellow .count', { timeout: 180_000 });
  await page.waitForFunction(() => /Saved in this browser/.test(document.querySelector('#session-state')?.textContent ?? ''), null, { timeout: 30_000 });
  await page.locator('#rule-F2 textarea.rule-expr').fill('total_amount > 50');
  await waitForCount(page, 'silver.nyc_taxi_yellow', 247);
  await page.waitForFunction(() => /Browser storage is full: the session goes on in this tab, but the last change/.test(document.querySelector('#session-state')?.textContent ?? ''), null, { timeout: 30_000 });
  // What the page said: the edit is not in the saved session.
  await page.reload();
  await page.waitForSelector('#card-silver-nyc_taxi_yellow .count', { timeout: 180_000 });
  await waitForCount(page, 'silver.nyc_taxi_yellow', 260, 180_000);
  assert.equal(await page.locator('#rule-F2 textarea.rule-expr').inputValue(), 'total_amount > 1000');
  assert.deepEqual(problems, []);
}));

test('a saved step that fails when restored is named, never silently skipped', () => withPage(async (page, problems) => {
  await page.goto(`${APP_URL}?lang=en`);
  await page.waitForSelector('#card-silver-nyc_taxi_yellow .count', { timeout: 180_000 });
  await page.waitForFunction(() => /Saved in this browser/.test(document.querySelector('#session-state')?.textContent ?? ''), null, { timeout: 30_000 });
  // The count shows with the load's preview; its step is saved once it is answered.
  await page.waitForFunction(() => new Promise((resolve) => {
    const open = indexedDB.open('medallion-playground', 1);
    open.onsuccess = () => {
      const n = open.result.transaction('journal').objectStore('journal').count();
      n.onsuccess = () => { open.result.close(); resolve(n.result === 1); };
    };
  }), null, { timeout: 30_000 });
  // A saved step the engine now refuses (as after an upgrade that changed a rule of the engine).
  await page.evaluate(() => new Promise((resolve, reject) => {
    const open = indexedDB.open('medallion-playground', 1);
    open.onsuccess = () => {
      const tx = open.result.transaction('journal', 'readwrite');
      tx.objectStore('journal').add({ request: JSON.stringify({ type: 'set_gold_sql', model: 'no_such_model', sql: 'SELECT 1' }), now: Date.now() * 1000, file: null });
      tx.oncomplete = () => { open.result.close(); resolve(); };
      tx.onerror = () => reject(tx.error);
    };
    open.onerror = () => reject(open.error);
  }));
  await page.reload();
  await page.waitForSelector('#card-silver-nyc_taxi_yellow .count', { timeout: 180_000 });
  // The steps given again are those the saved lake does not hold: here
  // the refused one alone (the load is in the lake).
  await page.waitForFunction(() => /The saved session was not restored exactly[\s\S]*step 1 of 1 \(set_gold_sql\): there is no gold model no_such_model/.test(document.body.innerText), null, { timeout: 60_000 });
  assert.equal(await count(page, 'silver.nyc_taxi_yellow'), 260);
  assert.deepEqual(problems, []);
}));

test('the language chosen is kept across a reload, also when the address names one', () => withPage(async (page, problems) => {
  await page.goto(`${APP_URL}?lang=en`);
  await page.waitForSelector('#card-silver-nyc_taxi_yellow .count', { timeout: 180_000 });
  assert.equal(await page.locator('#lang-switch').innerText(), 'Русский');
  await page.click('#lang-switch');
  await page.waitForFunction(() => document.querySelector('#lang-switch')?.textContent === 'English', null, { timeout: 60_000 });
  assert.match(page.url(), /lang=ru/);
  await page.reload();
  await page.waitForSelector('#card-silver-nyc_taxi_yellow .count', { timeout: 180_000 });
  assert.equal(await page.locator('#lang-switch').innerText(), 'English');
  // Sizes in Russian take a decimal comma.
  await page.waitForFunction(() => /Сохранено в браузере · \d+,\d [КМ]Б$/.test(document.querySelector('#session-state > span')?.textContent?.trim() ?? ''), null, { timeout: 30_000 });
  // A new visit without ?lang= opens in the language chosen last.
  await page.goto(APP_URL);
  await page.waitForSelector('#lang-switch', { timeout: 180_000 });
  assert.equal(await page.locator('#lang-switch').innerText(), 'English');
  assert.deepEqual(problems, []);
}));

test('the first screen, before any wasm has loaded, is in the language the page will speak', () => withPage(async (page, problems) => {
  // Hold the page's own wasm so the first screen (plain HTML) stays.
  await page.route(/medallion-web-.*_bg\.wasm$/, async (r) => { await new Promise((res) => setTimeout(res, 3000)); await r.continue(); });
  const first = () => page.evaluate(() => [document.documentElement.lang, document.getElementById('loading')?.textContent]);
  await page.goto(`${APP_URL}?lang=ru`);
  assert.deepEqual(await first(), ['ru', 'Загружаем Medallion Playground…']);
  // The saved choice (kept by the page in localStorage) when the address names none.
  await page.goto(`${APP_URL}?lang=en`);
  assert.deepEqual(await first(), ['en', 'Loading Medallion Playground…']);
  await page.evaluate(() => localStorage.setItem('medallion-playground-lang', 'ru'));
  await page.goto(APP_URL);
  assert.deepEqual(await first(), ['ru', 'Загружаем Medallion Playground…']);
  assert.deepEqual(problems, []);
}));

test('a reload during an ingest says after it which file did not reach bronze; a run never moves the page', () => withPage(async (page) => {
  await page.goto(`${APP_URL}?lang=en`);
  await waitForCount(page, 'silver.nyc_taxi_yellow', 260, 180_000);
  await page.waitForFunction(() => /Saved in this browser/.test(document.querySelector('#session-state')?.textContent ?? ''), null, { timeout: 60_000 });
  const top = async () => (await page.locator('#rule-F2').boundingBox()).y;
  const before = await top();

  // A long ingest: its bar and Cancel take a place kept for them, so the
  // rule under the pointer stays where it was (it moved down 38 px).
  const { csv } = bigTaxiCsv(8);
  await page.setInputFiles('#file-bronze-nyc_taxi_yellow', { name: 'big_trips.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
  await page.waitForSelector('#engine-cancel', { state: 'visible', timeout: 60_000 });
  assert.equal(await top(), before);

  // Reloaded before it is done: the file is not in bronze, and the page says so.
  await page.reload();
  await page.waitForFunction(() => /The page was left while a file was being ingested, so it is not in bronze; drop it again: big_trips\.csv → bronze\.nyc_taxi_yellow/
    .test([...document.querySelectorAll('[id^=message-banner]')].map((b) => b.textContent).join(' ')), null, { timeout: 180_000 });
  await waitForCount(page, 'silver.nyc_taxi_yellow', 260, 180_000);
  assert.equal(await count(page, 'bronze.nyc_taxi_yellow'), 266);

  // Said once: the next reload has nothing to say.
  await page.waitForSelector('#engine-status', { state: 'detached', timeout: 180_000 });
  await page.reload();
  await waitForCount(page, 'silver.nyc_taxi_yellow', 260, 180_000);
  assert.equal(await page.locator('[id^=message-banner]').filter({ hasText: 'drop it again' }).count(), 0);
}));
