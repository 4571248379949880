// End to end: PII in an immutable bronze (seed 000 §7), the right to be
// forgotten three ways side by side on the same orders. A learner opens the
// panel, picks a customer and forgets them under each method; the page must
// show crypto-shredded payloads unreadable with bronze's row count unchanged,
// tokenization's vault entries gone with bronze not rewritten, and the
// physical DELETE's row count down by the customer's rows. Screenshots go to
// $ARTIFACTS (default target/e2e-artifacts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { APP_URL, withPage } from './lib.mjs';

const ARTIFACTS = process.env.ARTIFACTS ?? 'target/e2e-artifacts';

const until = (page, fn, arg) => page.waitForFunction(fn, arg, { timeout: 120_000 });
/// `[data-before, data-after]` of a fact row of a method's column.
const fact = (page, method, key) => page.$eval(`#pii-${method} tr[data-fact="${key}"]`,
  (tr) => [tr.dataset.before, tr.dataset.after]);
const cells = (page, sel) => page.$$eval(sel, (tds) => tds.map((td) => td.dataset.readable));
const forgotten = (m) => document.querySelector(`#pii-${m}`)?.dataset.forgotten === 'true';

test('the right to be forgotten three ways: tokenization, crypto-shredding and DELETE side by side', () => withPage(async (page, problems) => {
  await page.goto(`${APP_URL}?lang=en`);
  await page.waitForSelector('#card-silver-nyc_taxi_yellow .count', { timeout: 180_000 });

  await page.click('#pii > summary');
  await page.waitForSelector('#pii-customer', { timeout: 120_000 });
  await page.selectOption('#pii-customer', 'U-2');
  await until(page, () => document.querySelector('#pii-forget-all')?.textContent.endsWith('U-2'));
  // Before: every personal cell readable, in all three lakes.
  for (const m of ['token', 'shred', 'delete']) {
    assert.deepEqual(await cells(page, `#pii-${m} .pii-bronze-now td.pii-cell`), Array(6).fill('true'), m);
    assert.deepEqual(await fact(page, m, 'bronze_rows'), ['', '6']);
  }
  assert.match(await page.locator('#pii-token .pii-bronze-now td.pii-cell').first().getAttribute('title'), /^tok_/);
  assert.match(await page.locator('#pii-shred .pii-bronze-now td.pii-cell').first().getAttribute('title'), /^enc:/);
  assert.equal(await page.locator('#pii-delete .pii-bronze-now td.pii-cell').first().getAttribute('title'), 'Ben Miller');

  // Crypto-shredding: the key goes, the rows stay, the payloads cannot be read.
  await page.click('#pii-forget-shred');
  await until(page, forgotten, 'shred');
  assert.deepEqual(await fact(page, 'shred', 'bronze_rows'), ['6', '6']);
  assert.deepEqual(await fact(page, 'shred', 'customer_rows'), ['2', '2']);
  assert.deepEqual(await fact(page, 'shred', 'key'), ['yes', 'no']);
  assert.equal((await fact(page, 'shred', 'rewritten'))[1], 'no');
  assert.deepEqual(await cells(page, '#pii-shred .pii-bronze-now td.pii-cell'), Array(6).fill('false'));
  assert.deepEqual(await cells(page, '#pii-shred .pii-time-travel td.pii-cell'), Array(6).fill('false'));
  assert.deepEqual(await cells(page, '#pii-shred .pii-replay td.pii-cell'), Array(2).fill('false'));
  assert.deepEqual(await cells(page, '#pii-shred .pii-bronze-before td.pii-cell'), Array(6).fill('true'));
  assert.match(await page.locator('#pii-shred .pii-findings').innerText(), /0 of 6 decrypt: the key was deleted from the key store/);
  // The other lakes are untouched by it.
  assert.equal(await page.locator('#pii-token').getAttribute('data-forgotten'), 'false');
  assert.deepEqual(await cells(page, '#pii-token .pii-bronze-now td.pii-cell'), Array(6).fill('true'));

  // Tokenization: the vault entries go, bronze is not rewritten.
  await page.click('#pii-forget-token');
  await until(page, forgotten, 'token');
  assert.deepEqual(await fact(page, 'token', 'vault_entries'), ['3', '0']);
  assert.deepEqual(await fact(page, 'token', 'bronze_rows'), ['6', '6']);
  assert.equal((await fact(page, 'token', 'rewritten'))[1], 'no');
  assert.deepEqual(await fact(page, 'token', 'bronze_version'), ['v2 APPEND', 'v2 APPEND']);
  assert.deepEqual(await cells(page, '#pii-token .pii-bronze-now td.pii-cell'), Array(6).fill('false'));

  // The physical DELETE: two rows fewer, bronze rewritten, snapshots expired.
  await page.click('#pii-forget-delete');
  await until(page, forgotten, 'delete');
  assert.deepEqual(await fact(page, 'delete', 'bronze_rows'), ['6', '4']);
  assert.deepEqual(await fact(page, 'delete', 'customer_rows'), ['2', '0']);
  assert.deepEqual(await fact(page, 'delete', 'bronze_version'), ['v2 APPEND', 'v3 DELETE']);
  assert.equal((await fact(page, 'delete', 'rewritten'))[1], 'yes');
  assert.deepEqual(await fact(page, 'delete', 'replay_revenue'), ['572.65', '377.40']);
  assert.equal(await page.locator('#pii-delete .pii-bronze-now').getAttribute('data-rows'), '0');
  assert.equal(await page.locator('#pii-delete .pii-time-travel').getAttribute('data-rows'), '0');
  // Replay keeps the facts under the first two methods only.
  assert.deepEqual(await fact(page, 'shred', 'replay_revenue'), ['572.65', '572.65']);

  mkdirSync(ARTIFACTS, { recursive: true });
  await page.setViewportSize({ width: 1920, height: 1080 });
  await page.evaluate(() => { const d = document.querySelector('#pii'); d.scrollTop = 0; d.scrollIntoView(); });
  await page.screenshot({ path: `${ARTIFACTS}/pii-1920x1080.png` });
  await page.evaluate(() => document.querySelector('#pii-delete .pii-findings').scrollIntoView());
  await page.screenshot({ path: `${ARTIFACTS}/pii-findings-1920x1080.png` });
  await page.setViewportSize({ width: 1280, height: 800 });

  // In Russian the engine's findings are Russian too.
  await page.click('#lang-switch');
  await until(page, () => /ключ удалён из хранилища ключей/.test(document.querySelector('#pii-shred .pii-findings')?.textContent ?? ''));
  assert.match(await page.locator('#pii-delete .pii-findings').innerText(), /строк было 6, стало 4/);
  assert.equal(await page.locator('#pii-shred .pii-bronze-now td.pii-cell .pii-read').first().innerText(), 'не читается');

  // Reset brings the customer back everywhere.
  await page.click('#pii-reset');
  await until(page, () => ['token', 'shred', 'delete'].every((m) => document.querySelector(`#pii-${m}`)?.dataset.forgotten === 'false'));
  assert.deepEqual(await fact(page, 'delete', 'bronze_rows'), ['', '6']);
  assert.deepEqual(await cells(page, '#pii-shred .pii-bronze-now td.pii-cell'), Array(6).fill('true'));
  assert.deepEqual(problems, []);
}));
