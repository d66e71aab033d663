// End-to-end: results reach a real Learning Record Store (Ralph, installed
// by scripts/setup.sh --test into target/ralph) as xAPI statements, and
// statements made offline wait and go when the network is back.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { start, open, terminal, root, violations } from './harness.mjs';
import { startRalph } from './lrs.mjs';

const [user, password] = ['trainer', 'not-a-secret'];
const auth = `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
let app, ralph, lrsUrl;

async function statements() {
  const response = await fetch(`${lrsUrl}/xAPI/statements?limit=500`, { headers: { Authorization: auth, 'X-Experience-API-Version': '1.0.3' } });
  assert.equal(response.status, 200);
  return (await response.json()).statements;
}

before(async () => {
  ralph = await startRalph({ user, password, ready: async (url) => { lrsUrl = url; await statements(); } });
  app = await start({ proxy: { prefix: '/xAPI/', target: lrsUrl } });
});

after(async () => {
  await app?.close();
  await ralph?.stop();
});

test('the review page sends one statement per answer and one for the lab, and queues them while offline', async () => {
  const context = await app.browser.newContext({ viewport: { width: 1400, height: 1000 } });
  const page = await open(context, `${app.base}#/lab/first-look`);
  await terminal(page);
  const answer = async (id, value) => {
    const question = page.locator(`section[data-question="${id}"]`);
    await question.locator(`input[value="${value}"]`).check();
    await question.locator('button.answer-button').click();
    await question.locator('.verdict').waitFor();
  };
  await answer('driver', '570.158.01');
  await answer('power-cap', '400 W');

  await page.goto(`${app.base}#/review/first-look`);
  await page.locator('.review-score').waitFor();
  await page.getByLabel('LRS endpoint').fill(`${app.base}xAPI/`);
  await page.getByLabel('LRS username').fill(user);
  await page.getByLabel('LRS password').fill(password);
  await page.getByLabel('Your name').fill('Ada Trainee');
  await page.getByLabel('Your email').fill('ada@example.org');
  await page.getByRole('button', { name: 'Send the results' }).click();
  await page.locator('.lrs-status', { hasText: 'Sent 3 statements' }).waitFor();
  // The credentials live only as long as the tab: none in localStorage.
  assert.doesNotMatch(await page.evaluate(() => JSON.stringify({ ...localStorage })), /not-a-secret/);

  let stored = (await statements()).filter((s) => s.actor.mbox === 'mailto:ada@example.org');
  assert.equal(stored.length, 3);
  const byVerb = (verb) => stored.filter((s) => s.verb.id.endsWith(`/${verb}`));
  assert.equal(byVerb('answered').length, 2);
  const driver = byVerb('answered').find((s) => s.object.id.endsWith('/labs/first-look/questions/driver'));
  assert.deepEqual([driver.result.success, driver.result.score.raw, driver.result.response], [true, 1, '570.158.01']);
  const lab = byVerb('completed')[0];
  assert.ok(lab.object.id.endsWith('/labs/first-look'));
  assert.deepEqual([lab.result.score.raw, lab.result.score.max, lab.result.success, lab.result.completion], [1, 6, false, false]);

  // Sent again: nothing new goes, and the LRS holds each statement once.
  await page.getByRole('button', { name: 'Send the results' }).click();
  await page.locator('.lrs-status', { hasText: 'the LRS has these results already' }).waitFor();
  assert.equal((await statements()).filter((s) => s.actor.mbox === 'mailto:ada@example.org').length, 3);

  // Offline: another answer's statements wait, survive a reload, and go when the network is back.
  await page.goto(`${app.base}#/lab/first-look`);
  await terminal(page);
  await answer('power-cap', '700 W');
  await page.goto(`${app.base}#/review/first-look`);
  await page.locator('.review-score').waitFor();
  await context.setOffline(true);
  await page.getByRole('button', { name: 'Send the results' }).click();
  await page.locator('.lrs-status', { hasText: 'wait to be sent: the browser is offline' }).waitFor();
  assert.equal(await page.evaluate(() => JSON.parse(localStorage.getItem('clusterlab.xapi.queue')).length), 2);
  await context.setOffline(false);
  await page.locator('.lrs-status', { hasText: 'Sent 2 statements' }).waitFor({ timeout: 10000 });
  stored = (await statements()).filter((s) => s.actor.mbox === 'mailto:ada@example.org');
  assert.equal(stored.length, 5);
  // The right answer at the second attempt keeps half its point, rounded down: none.
  assert.ok(stored.some((s) => s.verb.id.endsWith('/answered') && s.object.id.endsWith('/power-cap') && s.result.success === true && s.result.score.raw === 0));
  assert.ok(stored.some((s) => s.verb.id.endsWith('/completed') && s.result.score.raw === 1));
  assert.deepEqual(page.errors, []);
  await context.close();
});

const jsQR = await readFile(join(root, 'scripts', 'node_modules', 'jsqr', 'dist', 'jsQR.js'), 'utf8');

/// What the page's QR code says, read back by jsQR from its pixels.
async function readQr(page) {
  // Its UMD wrapper sets window.jsQR in a page.
  await page.addScriptTag({ content: jsQR });
  return page.evaluate(async () => {
    const svg = document.querySelector('svg.room-qr');
    const image = new Image();
    image.src = `data:image/svg+xml;charset=utf-8,${encodeURIComponent(new XMLSerializer().serializeToString(svg))}`;
    await image.decode();
    const canvas = document.createElement('canvas');
    canvas.width = canvas.height = 600;
    const context = canvas.getContext('2d');
    context.drawImage(image, 0, 0, 600, 600);
    const pixels = context.getImageData(0, 0, 600, 600);
    return window.jsQR(pixels.data, 600, 600)?.data ?? null;
  });
}

test('a room: the instructor makes one link (its QR code reads back), trainees type only their name, and every statement carries the registration', async () => {
  const instructor = await app.browser.newContext({ viewport: { width: 1366, height: 900 }, permissions: ['clipboard-read', 'clipboard-write'] });
  const setup = await open(instructor, `${app.base}#/`);
  await setup.getByRole('link', { name: 'Set up a room' }).click();
  await setup.getByLabel('LRS endpoint').fill(`${app.base}xAPI/`);
  await setup.getByLabel('LRS username').fill(user);
  await setup.getByLabel('LRS password').fill(password);
  await setup.getByLabel('Labs of the session (ids, optional)').fill('first-look, lost-gpu');
  await setup.getByRole('button', { name: 'Make the room link' }).click();
  const link = await setup.getByLabel('Room link', { exact: true }).inputValue();
  assert.match(link, /#\/\?course=first-look,lost-gpu&room=http[^&]+&token=Basic%20[^&]+&registration=[0-9a-f-]{36}$/);
  assert.equal(await readQr(setup), link);
  assert.deepEqual(await violations(setup), []);
  // The instructor's browser keeps nothing of it.
  assert.doesNotMatch(await setup.evaluate(() => JSON.stringify({ ...localStorage, ...sessionStorage })), /not-a-secret|Basic /);
  await instructor.close();

  const trainee = await app.browser.newContext({ viewport: { width: 1366, height: 900 } });
  const page = await open(trainee, link);
  await page.locator('.lab-card').first().waitFor();
  // The token leaves the address at once; the course stays.
  assert.match(page.url(), /#\/\?course=first-look,lost-gpu$/);
  await page.locator('#room-notice', { hasText: 'You are in a room' }).waitFor();
  await page.goto(`${app.base}#/lab/first-look`);
  await terminal(page);
  const question = page.locator('section[data-question="driver"]');
  await question.locator('input[value="570.158.01"]').check();
  await question.locator('button.answer-button').click();
  await question.locator('.verdict').waitFor();
  await page.goto(`${app.base}#/review/first-look`);
  await page.locator('.review-score').waitFor();
  assert.equal(await page.getByLabel('LRS endpoint').count(), 0, 'the room gives the endpoint');
  const send = page.getByRole('button', { name: 'Send the results' });
  assert.equal(await send.isDisabled(), true);
  assert.equal(await page.locator('#lrs-why-not').textContent(), 'To send, fill in your name.');
  await page.getByLabel('Your name').fill('Grace Trainee');
  await send.click();
  await page.locator('.lrs-status', { hasText: 'Sent 2 statements' }).waitFor();
  const registration = decodeURIComponent(link.split('registration=')[1]);
  const stored = (await statements()).filter((s) => s.actor.account?.name === 'Grace Trainee');
  assert.equal(stored.length, 2);
  assert.ok(stored.every((s) => s.context.registration === registration), JSON.stringify(stored.map((s) => s.context)));
  // The evidence names the trainee and the real date.
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download the evidence (Markdown)' }).click()]);
  const evidence = await readFile(await download.path(), 'utf8');
  assert.match(evidence, new RegExp(`\\*\\*Trainee:\\*\\* Grace Trainee  \\n\\*\\*Written:\\*\\* ${new Date().toISOString().slice(0, 10)}T`));
  // Statements made in the room that cannot go yet wait for the room: a tab
  // outside it (no room in its session) does not send them elsewhere.
  await page.goto(`${app.base}#/lab/first-look`);
  await terminal(page);
  const power = page.locator('section[data-question="power-cap"]');
  await power.locator('input[value="400 W"]').check();
  await power.locator('button.answer-button').click();
  await power.locator('.verdict').waitFor();
  await page.goto(`${app.base}#/review/first-look`);
  await page.locator('.review-score').waitFor();
  // The LRS cannot be reached (the browser is online): told apart from offline.
  await trainee.route('**/xAPI/**', (route) => route.abort());
  await send.click();
  await page.locator('.lrs-status', { hasText: 'could not be reached' }).waitFor();
  const outside = await open(trainee, `${app.base}#/review/first-look`);
  await outside.locator('.lrs-status', { hasText: 'made in another room (or outside this one) wait for that LRS' }).waitFor();
  await outside.close();
  // The room's tab tries again (every 30 s) and they go.
  await trainee.unroute('**/xAPI/**');
  await page.locator('.lrs-status', { hasText: 'Sent 2 statements' }).waitFor({ timeout: 45000 });
  // The next person: "Not you? Clear" empties the name, and Send says why it waits.
  await page.getByRole('button', { name: 'Not you? Clear' }).click();
  assert.equal(await page.getByLabel('Your name').inputValue(), '');
  assert.equal(await send.isDisabled(), true);
  assert.doesNotMatch(await page.evaluate(() => JSON.stringify({ ...localStorage })), /Basic |Grace/);
  assert.deepEqual(await violations(page), []);
  assert.deepEqual(page.errors, []);
  await trainee.close();
});
