// End-to-end: the lab's one store. It survives reloads (restored, never
// replayed), keeps a damaged record aside with a notice, coordinates two
// tabs, and stops a runaway command without ever running it again.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { start, open, terminal, run, stdout, entries } from './harness.mjs';

let app;
before(async () => { app = await start(); });
after(async () => { await app.close(); });

/// Milliseconds from the lab's data in hand to its screen drawn.
async function restoreMs(page) {
  return page.evaluate(() => {
    const at = (name) => performance.getEntriesByName(name).at(-1)?.startTime;
    return at('clusterlab:screen') - at('clusterlab:lab-data');
  });
}

test('a reload after 200 commands restores the same screen and answers within 200 ms', async () => {
  const context = await app.browser.newContext({ viewport: { width: 1400, height: 1000 } });
  const page = await open(context, `${app.base}#/lab/slow-rail`);
  const input = await terminal(page);
  const question = page.locator('section[data-question="which-hca"]');
  await question.locator('input.entity-answer').fill('gpu-002 mlx5_3');
  await question.locator('button.answer-button').click();
  await question.locator('.verdict').waitFor();
  // A drain and a login change the session; long outputs fill the screen.
  await run(page, input, 'sudo scontrol update nodename=gpu-002 state=drain reason=rail');
  for (let at = 0; at < 198; at++) {
    await input.fill(at % 10 === 0 ? 'nvidia-smi -q' : `echo line ${at}`);
    await input.press('Enter');
  }
  await input.fill('ssh gpu-002');
  await input.press('Enter');
  await page.waitForFunction(() => document.querySelector('label.prompt').textContent === 'user@gpu-002:~$ ', null, { timeout: 60000 });
  await page.waitForTimeout(300);
  // textContent: offscreen entries skip layout, which innerText depends on.
  const screen = await page.locator('.scrollback').textContent();
  const verdict = await question.locator('.verdict').textContent();
  const shown = await entries(page);

  await page.reload();
  await terminal(page);
  assert.equal(await page.locator('label.prompt').textContent(), 'user@gpu-002:~$ ');
  assert.equal(await page.locator('.scrollback').textContent(), screen);
  assert.equal(await entries(page), shown);
  assert.equal(await question.locator('.verdict').textContent(), verdict);
  const restored = await restoreMs(page);
  console.log(`# restore after 200 commands: ${restored.toFixed(1)} ms`);
  assert.ok(restored < 200, `restored in ${restored} ms`);
  // The session is the one left: the drain holds, and history goes back to the start.
  await run(page, input, 'sinfo -R');
  assert.match(await stdout(page), /rail\s+\S+\s+\S+\s+gpu-002/);
  await run(page, input, 'history | head -1');
  assert.match(await stdout(page), /1  sudo scontrol update nodename=gpu-002 state=drain reason=rail\n$/);
  assert.deepEqual(page.errors, []);
  await context.close();
});

test('a damaged record is kept under a backup key with a notice, never silently replaced', async () => {
  const context = await app.browser.newContext();
  const page = await open(context, `${app.base}#/lab/first-look`);
  await terminal(page);
  // Damage the record once the page has saved it (saving follows changes shortly).
  await page.waitForTimeout(400);
  await page.evaluate(() => localStorage.setItem('clusterlab.lab.first-look', '{"version":2,"state":{"lab":'));
  await page.reload();
  const input = await terminal(page);
  const notice = await page.locator('.notices .notice').first().textContent();
  assert.match(notice, /could not be read/);
  const key = notice.match(/\u201c(clusterlab\.backup\.first-look\.\d+)\u201d/)?.[1];
  assert.ok(key, notice);
  assert.equal(await page.evaluate((k) => localStorage.getItem(k), key), '{"version":2,"state":{"lab":');
  // The lab works, and saves a fresh record beside the backup.
  await run(page, input, 'hostname');
  await page.waitForTimeout(400);
  assert.match(await page.evaluate(() => localStorage.getItem('clusterlab.lab.first-look')), /^\{"version":2,/);
  assert.equal(await page.evaluate((k) => localStorage.getItem(k), key), '{"version":2,"state":{"lab":');
  // Progress from the old format is migrated: answers kept, lines in the history.
  await page.evaluate(() => {
    localStorage.removeItem('clusterlab.lab.first-look');
    localStorage.setItem('clusterlab.progress.first-look', 'clusterlab-progress 1\nseed\t1\nanswer\tdriver\t1\t570.158.01\nran\tnvidia-smi -L\n');
  });
  await page.reload();
  await terminal(page);
  await page.locator('section[data-question="driver"] .verdict.correct').waitFor();
  assert.match(await page.locator('.notices').textContent(), /older version of ClusterLab/);
  await context.close();
});

test('two tabs on one lab lose no answer', async () => {
  const context = await app.browser.newContext();
  const first = await open(context, `${app.base}#/lab/first-look`);
  await terminal(first);
  const driver = (page) => page.locator('section[data-question="driver"]');
  await driver(first).locator('input[value="570.158.01"]').check();
  await driver(first).locator('button.answer-button').click();
  await driver(first).locator('.verdict.correct').waitFor();

  // A second tab on the same lab: read-only, with an offer to take over.
  const second = await open(context, `${app.base}#/lab/first-look`);
  await second.locator('.notice.held').waitFor();
  assert.equal(await second.locator('.terminal-input').isDisabled(), true);
  assert.equal(await driver(second).locator('button.answer-button').isDisabled(), true);
  await driver(second).locator('.verdict.correct').waitFor();

  // It takes over: the first tab becomes read-only and says so.
  await second.locator('button.take-over').click();
  await first.locator('.notice.held').waitFor();
  const input = await terminal(second);
  assert.equal(await second.locator('.notice.held').count(), 0);
  const busId = second.locator('section[data-question="bus-id-gpu5"]');
  await busId.locator('input.text-answer').fill('00000000:A3:00.0');
  await busId.locator('button.answer-button').click();
  await busId.locator('.verdict.correct').waitFor();
  await run(second, input, 'echo from-the-second-tab');
  // The read-only tab follows what the other tab saved.
  await first.locator('.scrollback .stdout', { hasText: 'from-the-second-tab' }).waitFor();
  await first.locator('section[data-question="bus-id-gpu5"] .verdict.correct').waitFor();

  // Both answers are kept.
  await second.close();
  const third = await open(context, `${app.base}#/lab/first-look`);
  await terminal(third);
  await driver(third).locator('.verdict.correct').waitFor();
  await third.locator('section[data-question="bus-id-gpu5"] .verdict.correct').waitFor();
  assert.equal(await third.locator('.score-value').textContent(), '3 / 6');
  await context.close();
});

test('a runaway command is stopped within 2 s, the page stays alive, and a reload does not run it again', async () => {
  const context = await app.browser.newContext();
  const page = await open(context, `${app.base}#/lab/first-look`);
  const input = await terminal(page);
  // Seconds of real time in the simulator: each awk runs to its step bound,
  // and the loop runs fifty of them (bounded natively, far past 1 s here).
  const runaway = "for i in $(seq 50); do awk 'BEGIN{while(1) i++}'; done";
  const started = Date.now();
  await input.fill(runaway);
  await input.press('Enter');
  // The page answers while the simulator computes.
  assert.equal(await page.evaluate(() => 1 + 1), 2);
  await page.locator('.scrollback .stderr', { hasText: 'clusterlab: stopped' }).waitFor({ timeout: 5000 });
  const took = Date.now() - started;
  console.log(`# runaway stopped after ${took} ms`);
  assert.ok(took < 2000, `stopped after ${took} ms`);
  await terminal(page);
  await run(page, input, 'hostname');
  assert.match(await stdout(page), /gpu-001\n$/);

  // Reloading restores the screen at once: the runaway line is history, not work.
  await page.reload();
  await terminal(page);
  assert.equal(await page.locator('.scrollback .stderr', { hasText: 'clusterlab: stopped' }).count(), 1);
  await input.press('ArrowUp');
  await input.press('ArrowUp');
  assert.equal(await input.inputValue(), runaway);
  assert.deepEqual(page.errors, []);
  await context.close();
});

test('a lab added to labs/ is in the catalog the build wrote', async () => {
  const context = await app.browser.newContext();
  const page = await open(context, app.base);
  await page.locator('.lab-card').first().waitFor();
  const index = await page.evaluate(async () => (await fetch('labs/index.json')).json());
  const cards = await page.locator('.lab-card').count();
  assert.equal(cards, index.labs.length);
  if (process.env.CLUSTERLAB_EXTRA_LAB) {
    await page.locator(`.lab-card[data-lab="${process.env.CLUSTERLAB_EXTRA_LAB}"]`).waitFor();
  }
  await context.close();
});

test('the lab the address names is fetched once, while the module loads, and a stale copy is fetched again by its digest', async () => {
  const requested = async (context) => {
    const searches = [];
    context.on('request', (request) => {
      const url = new URL(request.url());
      if (url.pathname.endsWith('/labs/first-look.json')) searches.push(url.search);
    });
    const page = await open(context, `${app.base}#/lab/first-look`);
    await terminal(page);
    assert.deepEqual(page.errors, []);
    return searches;
  };
  // The page's inline script asks for it (no query); the app takes that copy.
  const fresh = await app.browser.newContext();
  assert.deepEqual(await requested(fresh), ['']);
  await fresh.close();
  // A copy that is not the version the catalog names (a stale cache) is
  // never used: the app fetches the lab again under its digest.
  const stale = await app.browser.newContext();
  await stale.route(/\/labs\/first-look\.json$/, (route) => route.fulfill({ contentType: 'application/json', body: '{"format":2,"id":"first-look","stale":true}' }));
  const searches = await requested(stale);
  assert.equal(searches.length, 2);
  assert.equal(searches[0], '');
  assert.match(searches[1], /^\?v=[0-9a-f]{16}$/);
  await stale.close();
});
