// End to end, issue 9: the built app in headless Chromium (APP_URL, see lib.mjs).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { APP_URL, waitForCount, withPage } from './lib.mjs';

// Issue 9 in the browser: bad input gets a flag and a way out, never a silent wrong value.
test('backslash-escaped quotes are flagged then read again with escape; duplicate header names keep every column', () => withPage(async (page, problems) => {
    await page.goto(`${APP_URL}?lang=en`);
    await page.waitForSelector('#card-silver-nyc_taxi_yellow .count', { timeout: 180_000 });
    await waitForCount(page, 'silver.nyc_taxi_yellow', 260);
    const header = 'VendorID,tpep_pickup_datetime,tpep_dropoff_datetime,passenger_count,trip_distance,RatecodeID,store_and_fwd_flag,PULocationID,DOLocationID,payment_type,fare_amount,extra,mta_tax,tip_amount,tolls_amount,improvement_surcharge,total_amount,congestion_surcharge';
    const escaped = `${header}\n2,2020-07-02 10:00:00,2020-07-02 10:20:00,1,3.1,1,"N \\"late\\"",161,236,1,14,0,0.5,3,0,0.3,20.3,2.5\n`;
    await page.setInputFiles('#file-bronze-nyc_taxi_yellow', { name: 'escaped.csv', mimeType: 'text/csv', buffer: Buffer.from(escaped) });
    await waitForCount(page, 'bronze.nyc_taxi_yellow', 267);
    await waitForCount(page, 'silver.quarantine', 7);
    await page.click('#card-bronze-nyc_taxi_yellow');
    assert.match(await page.locator('#batch-log').innerText(), /read it again with escape '\\'/);
    await page.locator('#batch-log .batch-row', { hasText: 'escaped.csv' }).locator('.reread').click();
    await page.selectOption('#opt-escape', '\\');
    await page.click('#reingest-submit');
    await waitForCount(page, 'bronze.nyc_taxi_yellow', 268);
    await waitForCount(page, 'silver.nyc_taxi_yellow', 261);
    await waitForCount(page, 'silver.quarantine', 6);
    assert.match(await page.locator('#batch-log').innerText(), /escape '\\'/);
    // The first read stays in bronze, superseded: silver reads the new one, once.
    const first = page.locator('#batch-log .batch-row', { hasText: 'escaped.csv' }).first();
    assert.match(await first.locator('.superseded').innerText(), /read again: silver reads batch/);
    assert.equal(await first.locator('.reread').count(), 0);
    const dup = 'VendorID,fare_amount,FARE_AMOUNT,total_amount\n2,14,15,20.3\n';
    await page.setInputFiles('#file-bronze-nyc_taxi_yellow', { name: 'dup_header.csv', mimeType: 'text/csv', buffer: Buffer.from(dup) });
    await waitForCount(page, 'bronze.nyc_taxi_yellow', 269);
    assert.match(await page.locator('#batch-log .header-renames').innerText(), /"FARE_AMOUNT" → FARE_AMOUNT_2/);
    assert.equal(await page.locator('#crash-notice').count(), 0);
    assert.deepEqual(problems, []);
}));
