// End-to-end: a trainee's terminal and questions in the release app.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { start, open, terminal, run, stdout, shots } from './harness.mjs';

let app;
before(async () => { app = await start(); });
after(async () => { await app.close(); });

function gpuLines(text) {
  return text.split('\n').filter((line) => /^GPU \d: NVIDIA H100 80GB HBM3 \(UUID: GPU-[0-9a-f-]{36}\)$/.test(line));
}

test('a trainee opens a lab, reads nvidia-smi, answers, reloads and keeps everything', async () => {
  const context = await app.browser.newContext({ viewport: { width: 1400, height: 1000 } });
  const page = await open(context, app.base);
  await page.locator('.simulation-notice').waitFor();
  assert.match(await page.locator('.simulation-notice').textContent(), /Nothing you type runs on a real cluster/);
  await page.locator('.lab-card[data-lab="first-look"] h2 a').click();

  const input = await terminal(page);
  assert.match(await page.locator('.briefing').textContent(), /simulation/);

  // Tab completes a command name.
  await input.click();
  await input.pressSequentially('nvidia');
  await input.press('Tab');
  await page.waitForFunction(() => document.querySelector('.terminal-input').value === 'nvidia-smi ');
  await input.pressSequentially('-L');
  await input.press('Enter');
  await page.waitForFunction(() => document.querySelectorAll('.scrollback .stdout').length > 0);
  assert.equal(gpuLines(await stdout(page)).length, 8);

  // Answer two questions.
  const driver = page.locator('section[data-question="driver"]');
  await driver.locator('input[value="570.158.01"]').check();
  await driver.locator('button.answer-button').click();
  await driver.locator('.verdict.correct').waitFor();
  // The verdict takes the focus; the next Tab and Enter go back to the terminal.
  await page.waitForFunction(() => document.activeElement?.classList.contains('verdict'));
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Back to the terminal');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => document.activeElement?.id === 'terminal-input');
  const busId = page.locator('section[data-question="bus-id-gpu5"]');
  await busId.locator('input.text-answer').fill('00000000:A3:00.0');
  await busId.locator('button.answer-button').click();
  await busId.locator('.verdict.correct').waitFor();
  assert.equal(await page.locator('.score-value').textContent(), '3 / 6');
  await page.screenshot({ path: join(shots, 'lab.png'), fullPage: true });

  // Reload: the answers, the score and the terminal come back, without running anything.
  await page.waitForTimeout(100);
  await page.reload();
  await page.locator('section[data-question="driver"] .verdict.correct').waitFor();
  assert.equal(await page.locator('section[data-question="driver"] input[value="570.158.01"]').isChecked(), true);
  assert.equal(await page.locator('section[data-question="bus-id-gpu5"] input.text-answer').inputValue(), '00000000:A3:00.0');
  assert.equal(await page.locator('.score-value').textContent(), '3 / 6');
  await terminal(page);
  assert.equal(gpuLines(await stdout(page)).length, 8);

  // Up recalls the last command; Ctrl-C cancels a line; Ctrl-L clears.
  await input.click();
  await input.press('ArrowUp');
  assert.equal(await input.inputValue(), 'nvidia-smi -L');
  await input.press('Control+c');
  assert.equal(await input.inputValue(), '');
  assert.match(await page.locator('.scrollback .command').last().textContent(), /nvidia-smi -L\^C$/);
  await input.press('Control+l');
  await page.waitForFunction(() => document.querySelectorAll('.scrollback .entry').length === 0);
  await page.screenshot({ path: join(shots, 'after-reload.png'), fullPage: true });

  assert.deepEqual(page.errors, []);
  await context.close();
});

test('the terminal shows what it printed: the screen at its end and the command line in the window, after long output and a reload', async () => {
  const context = await app.browser.newContext({ viewport: { width: 1366, height: 768 } });
  const page = await open(context, `${app.base}#/lab/first-look`);
  const input = await terminal(page);
  // The screen's end, and the command line inside the window: measured once
  // the frames that lay out the new output have passed.
  const shown = () => page.waitForFunction(() => {
    const screen = document.querySelector('.screen');
    const line = document.querySelector('#terminal-input').getBoundingClientRect();
    return screen.scrollTop + screen.clientHeight >= screen.scrollHeight - 2 && line.top >= 0 && line.bottom <= window.innerHeight;
  }, null, { timeout: 5000 });
  for (const line of ['ibstat', 'nvidia-smi topo -m', 'ssh gpu-002 ibstat']) {
    await run(page, input, line);
    await shown();
  }
  await page.reload();
  await terminal(page);
  await shown();
  assert.deepEqual(page.errors, []);
  await context.close();
});

test('the lab page paints and takes keys before its module runs; the app runs what was typed there', async () => {
  const context = await app.browser.newContext({ viewport: { width: 1366, height: 900 } });
  // The page's module is held back until the trainee has typed.
  let release;
  const held = new Promise((resolve) => { release = resolve; });
  await context.route(/clusterlab-web-[0-9a-f]+_bg\.wasm$/, async (route) => { await held; await route.continue(); });
  // Whether the first paint ever showed (it goes when the app takes over).
  await context.addInitScript(() => {
    window.earlySeen = false;
    new MutationObserver(() => { if (document.getElementById('early-lab')) window.earlySeen = true; })
      .observe(document, { subtree: true, childList: true });
  });
  const page = await context.newPage();
  page.errors = [];
  page.on('pageerror', (error) => page.errors.push(String(error)));
  await page.goto(`${app.base}#/lab/first-look`, { waitUntil: 'commit' });
  const early = page.locator('#early-input');
  await early.waitFor();
  assert.equal(await page.locator('#early-lab label.prompt').textContent(), 'user@gpu-001:~$ ');
  assert.equal(await page.locator('#early-lab h1').textContent(), 'First look at an HGX H100 node');
  assert.match(await page.locator('#early-lab .briefing').textContent(), /You have just been given access to gpu-001/);
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'early-input');
  await page.keyboard.type('echo early');
  await page.keyboard.press('Enter');
  await page.keyboard.type('hostna');
  assert.equal(await page.locator('#early-lab .scrollback').textContent(), 'user@gpu-001:~$ echo early');
  release();
  const input = await terminal(page);
  await page.waitForFunction(() => document.querySelector('.scrollback .stdout')?.textContent === 'early\n');
  assert.equal(await input.inputValue(), 'hostna');
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'terminal-input');
  assert.equal(await page.locator('#early-lab').count(), 0);
  // The keys go on where they were.
  await page.keyboard.type('me');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => document.querySelectorAll('.scrollback .stdout').length === 2);
  assert.equal(await page.locator('.scrollback .stdout').nth(1).textContent(), 'gpu-001\n');
  // With progress saved, the lab opens as it was left: the app draws it, with no first paint.
  await context.unroute(/clusterlab-web-[0-9a-f]+_bg\.wasm$/);
  await page.waitForTimeout(100);
  await page.reload();
  await terminal(page);
  assert.equal(await page.evaluate(() => window.earlySeen), false);
  assert.equal(await page.locator('.scrollback .stdout').count(), 2);
  assert.deepEqual(page.errors, []);
  await context.close();
});

test('the first paint gives way to any other page: another address before the module ran, a lab that does not exist', async () => {
  const context = await app.browser.newContext();
  let release;
  const held = new Promise((resolve) => { release = resolve; });
  await context.route(/clusterlab-web-[0-9a-f]+_bg\.wasm$/, async (route) => { await held; await route.continue(); });
  const page = await context.newPage();
  page.errors = [];
  page.on('pageerror', (error) => page.errors.push(String(error)));
  await page.goto(`${app.base}#/lab/first-look`, { waitUntil: 'commit' });
  await page.locator('#early-input').waitFor();
  // The trainee goes back to the catalog before the module has run.
  await page.evaluate(() => { location.hash = '#/'; });
  await page.waitForFunction(() => !document.getElementById('early-lab'));
  release();
  await page.locator('.lab-list .lab-card').first().waitFor();
  // A lab the catalog does not have: no data, no first paint, the app says so.
  await page.goto(`${app.base}#/lab/no-such-lab`);
  await page.locator('main.missing').waitFor();
  assert.equal(await page.locator('#early-lab').count(), 0);
  assert.deepEqual(page.errors, []);
  await context.close();
});

test('what was typed or picked and not sent survives a reload, and a sent line or answer leaves no draft', async () => {
  const context = await app.browser.newContext({ viewport: { width: 1366, height: 900 } });
  const page = await open(context, `${app.base}#/lab/first-look/variant/1`);
  const input = await terminal(page);
  await input.click();
  await input.pressSequentially('nvidia-smi --query-gpu=name');
  await page.locator('section[data-question="driver"] input[type="radio"]').nth(1).check();
  const picked = await page.locator('section[data-question="driver"] input[type="radio"]').nth(1).getAttribute('value');
  await page.locator('section[data-question="bus-id-gpu5"] input.text-answer').fill('00000000:1');
  await page.waitForTimeout(100);
  await page.reload();
  const again = await terminal(page);
  assert.equal(await again.inputValue(), 'nvidia-smi --query-gpu=name');
  assert.equal(await page.locator(`section[data-question="driver"] input[value="${picked}"]`).isChecked(), true);
  assert.equal(await page.locator('section[data-question="bus-id-gpu5"] input.text-answer').inputValue(), '00000000:1');
  // Sent, the line is no longer a draft.
  await again.press('Enter');
  await page.waitForFunction(() => document.querySelectorAll('.scrollback .stdout').length > 0);
  await page.waitForTimeout(100);
  await page.reload();
  assert.equal(await (await terminal(page)).inputValue(), '');
  assert.deepEqual(page.errors, []);
  await context.close();
});

test('an unknown command answers like bash', async () => {
  const context = await app.browser.newContext();
  const page = await open(context, `${app.base}#/lab/first-look`);
  const input = await terminal(page);
  await run(page, input, 'ibstatt');
  assert.equal(await page.locator('.scrollback .stderr').last().textContent(), '-bash: ibstatt: command not found\n');
  await context.close();
});

test('a screen reader hears nvidia-smi as words, and the new user or host after ssh', async () => {
  const context = await app.browser.newContext();
  const page = await open(context, `${app.base}#/lab/first-look`);
  const input = await terminal(page);
  const said = () => page.locator('p.visually-hidden[role="status"]').textContent();
  await run(page, input, 'nvidia-smi');
  await page.waitForFunction(() => document.querySelector('p.visually-hidden[role="status"]').textContent.includes('NVIDIA-SMI'));
  const table = await said();
  // Cells read as a list: no box borders, no separators.
  assert.doesNotMatch(table, /[+|]|---|===/);
  assert.match(table, /NVIDIA-SMI [0-9.]+ +Driver Version: /);
  await run(page, input, 'ssh gpu-002');
  await page.waitForFunction(() => document.querySelector('p.visually-hidden[role="status"]').textContent.endsWith('Now user on gpu-002.'));
  await context.close();
});

test('long commands stream their output, keys typed meanwhile run next, and Ctrl-C stops the clock', async () => {
  const context = await app.browser.newContext();
  const page = await open(context, `${app.base}#/lab/first-look`);
  const input = await terminal(page);

  // 3 s on the lab's clock: the output appears after, then the prompt returns;
  // a line typed while it runs runs next.
  await input.fill('sleep 3; echo finished');
  await input.press('Enter');
  await input.fill('echo typed-ahead');
  await input.press('Enter');
  await page.locator('.scrollback .stdout', { hasText: 'typed-ahead' }).waitFor();
  assert.match(await stdout(page), /finished\ntyped-ahead\n/);

  // A long run is interrupted: ^C, and the clock stops where it was.
  const lastOutput = async () => Number((await page.locator('.scrollback .stdout').last().textContent()).trim());
  await run(page, input, 'date +%s');
  const before = await lastOutput();
  await input.fill('sleep 600; nvidia-smi; nvidia-smi; nvidia-smi');
  await input.press('Enter');
  await page.waitForTimeout(300);
  await input.press('Control+c');
  await page.locator('.scrollback .stdout', { hasText: '^C' }).waitFor();
  await page.waitForFunction(() => document.querySelector('label.prompt').textContent.includes('$'));
  assert.equal(((await stdout(page)).match(/NVIDIA-SMI 570/g) ?? []).length, 0, 'the interrupted output was cut short');
  await run(page, input, 'date +%s');
  const after = await lastOutput();
  assert.ok(after - before < 600 && after - before > 0, `the clock moved ${after - before} s, not the whole sleep`);
  await context.close();
});

test('a variant lab: the trainee finds the slow rail from the output and is graded on it', async () => {
  const context = await app.browser.newContext();
  const page = await open(context, `${app.base}#/lab/slow-rail`);
  const input = await terminal(page);
  // Find the half-rate port on each node, as a trainee would.
  const slow = {};
  for (const node of ['gpu-001', 'gpu-002']) {
    await run(page, input, `echo "[$(ssh ${node} ibstatus | grep -B6 'rate:.*200' | grep -o 'mlx5_[0-9]')]"`);
    slow[node] = (await page.locator('.scrollback .stdout').last().textContent()).trim().slice(1, -1);
  }
  const bad = slow['gpu-001'] ? 'gpu-001' : 'gpu-002';
  assert.ok(Boolean(slow['gpu-001']) !== Boolean(slow['gpu-002']), JSON.stringify(slow));
  const question = page.locator('section[data-question="which-hca"]');
  await question.locator('input.entity-answer').fill(`${bad} ${slow[bad]}`);
  await question.locator('button.answer-button').click();
  await question.locator('.verdict.correct').waitFor();
  // Fan-out sees the whole cluster.
  await run(page, input, 'pdsh -w gpu-001 sinfo');
  assert.match(await stdout(page), /gpu-001: gpu\*\s+up\s+infinite\s+2\s+idle gpu-\[001-002\]/);
  await context.close();
});
