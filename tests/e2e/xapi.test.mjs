// End-to-end: results reach a real Learning Record Store (Ralph, installed
// by scripts/setup.sh --test into target/ralph) as xAPI statements, and
// statements made offline wait and go when the network is back.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { start, open, terminal } from './harness.mjs';
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
  await page.locator('.lrs-status', { hasText: 'wait to be sent' }).waitFor();
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
