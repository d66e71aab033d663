// End-to-end: the web app for a room of trainees. The keyboard leaves the
// terminal and reaches every control; axe-core finds no violation on the
// catalog, a lab with output and answers, and the author page; no width
// scrolls the page sideways after a wide output (screenshots under
// target/e2e); the variant is in the address; the display settings survive
// a reload; a lab opened once works with the network off; two shells run a
// perftest pair; Ctrl+Shift+F searches the scrollback.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFile } from 'node:fs/promises';
import { start, open, terminal, run, stdout, shots, root, dist, violations } from './harness.mjs';

let app;
before(async () => { app = await start(); });
after(async () => { await app.close(); });

test('the keyboard leaves the terminal with Escape then Tab, and reaches the questions', async () => {
  const context = await app.browser.newContext({ viewport: { width: 1366, height: 900 } });
  const page = await open(context, `${app.base}#/lab/lost-gpu`);
  const input = await terminal(page);
  // Focus starts in the terminal, without scrolling the page.
  await page.waitForFunction(() => document.activeElement?.id === 'terminal-input');
  assert.equal(await page.evaluate(() => window.scrollY), 0);
  // Tab completes and stays.
  await input.fill('nvidia-sm');
  await input.press('Tab');
  await page.waitForFunction(() => document.querySelector('.terminal-input').value === 'nvidia-smi ');
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'terminal-input');
  // While it has the keys, the terminal says, for everyone, how to leave it.
  assert.ok(await page.locator('#terminal-keys').isVisible(), 'the way out is shown');
  assert.match(await page.locator('#terminal-keys').textContent(), /press Escape, then Tab or Shift\+Tab/);
  // Escape, then Tab, moves on to the questions that follow the terminal.
  await input.press('Escape');
  await page.keyboard.press('Tab');
  const next = await page.evaluate(() => document.activeElement?.closest('.questions') !== null);
  assert.ok(next, await page.evaluate(() => document.activeElement?.outerHTML));
  assert.equal(await page.locator('#terminal-keys').isVisible(), false, 'shown only while the terminal has focus');
  // Escape, then Shift+Tab, leaves backwards.
  await input.focus();
  await input.press('Escape');
  await page.keyboard.press('Shift+Tab');
  const back = await page.evaluate(() => document.activeElement?.outerHTML?.slice(0, 120));
  assert.ok(back && !back.includes("terminal-input") && !back.startsWith("<body"), back);
  // The skip buttons reach the terminal and the questions.
  await page.getByRole('button', { name: 'Skip to the questions' }).click();
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'questions-heading');
  await page.getByRole('button', { name: 'Skip to the terminal' }).click();
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'terminal-input');
  // A screen reader hears a new output once, cut to its first lines.
  await input.fill('');
  await run(page, input, 'seq 1 40');
  const spoken = page.locator('.terminal p[aria-live="polite"]');
  await page.waitForFunction(() => document.querySelector('.terminal p[aria-live="polite"]').textContent.includes('more lines'));
  assert.equal(await spoken.textContent(), [...Array(12).keys()].map((n) => n + 1).join('\n') + '\n\u2026 and 28 more lines in the terminal.');
  assert.equal(await page.locator('.screen').getAttribute('aria-live'), 'off');
  await page.getByRole('button', { name: 'Read last output' }).click();
  assert.match(await spoken.textContent(), /^1\n2\n/);
  // After an answer, the focus is on its verdict.
  const xid = page.locator('section[data-question="xid"]');
  await xid.locator('input[value="79"]').check();
  await xid.locator('button.answer-button').click();
  await page.waitForFunction(() => document.activeElement?.classList.contains('verdict'));
  // The last hint keeps the focus on the page, on the hint.
  const question = page.locator('section[data-question="which-gpu"]');
  await question.getByRole('button', { name: 'Show a hint' }).click();
  await page.waitForFunction(() => document.activeElement?.closest('.hints') !== null);
  assert.equal(await page.title(), 'A job died at start-up on one node \u2014 ClusterLab');
  assert.deepEqual(page.errors, []);
  await context.close();
});

test('two shells run a perftest pair side by side, and the scrollback is searched', async () => {
  const context = await app.browser.newContext({ viewport: { width: 1366, height: 900 } });
  const page = await open(context, `${app.base}#/lab/rdma-every-rail`);
  const input = await terminal(page);
  // The first shell: a server on gpu-001 waits for its client.
  await run(page, input, 'ib_write_bw -d mlx5_0 --report_gbits');
  assert.match(await stdout(page), /Waiting for client to connect/);
  // A second shell, on the lab's first node; the client goes to gpu-002.
  await page.getByRole('button', { name: '+ New shell' }).click();
  await page.getByRole('button', { name: 'Shell 2: gpu-001', pressed: true }).waitFor();
  assert.equal(await page.locator('.scrollback .entry').count(), 0, 'a new shell starts with an empty screen');
  await run(page, input, 'ssh gpu-002');
  await run(page, input, 'ib_write_bw -d mlx5_0 --report_gbits gpu-001');
  await page.waitForFunction(() => /BW average/.test(document.querySelector('.scrollback').textContent) && document.querySelector('label.prompt').textContent.includes('$'), null, { timeout: 30000 });
  assert.doesNotMatch(await stdout(page), /Waiting for client/, 'the server is not in this shell');
  // The server's shell says it printed; there its report follows its banner.
  await page.getByRole('button', { name: 'Shell 1: gpu-001 (new output)' }).click();
  await page.waitForFunction(() => /BW average/.test(document.querySelector('.scrollback').textContent));
  const server = await stdout(page);
  assert.ok(server.indexOf('Waiting for client') < server.lastIndexOf('BW average'), server);
  // Each shell keeps its history: Up in the first brings back the server's line.
  await input.press('ArrowUp');
  assert.equal(await input.inputValue(), 'ib_write_bw -d mlx5_0 --report_gbits');
  await input.fill('');
  // Both shells come back after a reload, the second on gpu-002.
  await page.reload();
  await terminal(page);
  await page.getByRole('button', { name: 'Shell 2: gpu-002' }).waitFor();
  // Ctrl+Shift+F searches the scrollback: the newest match first, Enter for older ones.
  await page.getByRole('button', { name: 'Shell 1: gpu-001' }).click();
  await page.locator('.terminal-input').press('Control+Shift+F');
  const find = page.getByLabel('Search the scrollback');
  await page.waitForFunction(() => document.activeElement?.id === 'scrollback-find');
  await find.fill('bw AVERAGE');
  const status = page.locator('.find-status');
  await page.waitForFunction(() => /^\d+ of \d+$/.test(document.querySelector('.find-status').textContent));
  const [at, count] = (await status.textContent()).split(' of ').map(Number);
  assert.equal(at, count, 'the newest match first');
  if (count > 1) {
    await find.press('Enter');
    assert.equal(await status.textContent(), `${count - 1} of ${count}`);
    await find.press('Shift+Enter');
  }
  assert.equal(await status.textContent(), `${count} of ${count}`);
  // The current match is marked and on screen.
  const marked = await page.evaluate(() => {
    const current = CSS.highlights.get('scrollback-find-current');
    const range = [...current][0];
    const screen = document.querySelector('.screen').getBoundingClientRect();
    const box = range.getBoundingClientRect();
    return { text: range.toString(), visible: box.top >= screen.top && box.bottom <= screen.bottom };
  });
  assert.deepEqual(marked, { text: 'BW average', visible: true });
  assert.deepEqual(await violations(page), [], 'two shells and the search bar');
  await find.fill('no such text anywhere');
  await page.getByText('No matches').waitFor();
  // Escape closes the search and goes back to the command line.
  await find.press('Escape');
  await page.waitForFunction(() => document.activeElement?.id === 'terminal-input');
  assert.equal(await page.locator('.find-bar').count(), 0);
  // Closing the second shell stops nothing here and leaves one tab.
  await page.getByRole('button', { name: 'Close shell 2' }).click();
  assert.equal(await page.locator('.shell-tab').count(), 1);
  assert.deepEqual(page.errors, []);
  await context.close();
});

test('axe-core finds no violation on the catalog, a lab with output and answers, the review page and the author page', async () => {
  const context = await app.browser.newContext({ viewport: { width: 1366, height: 900 } });
  const page = await open(context, `${app.base}#/`);
  await page.locator('.lab-card').first().waitFor();
  assert.deepEqual(await violations(page), [], 'catalog');

  await page.goto(`${app.base}#/lab/lost-gpu`);
  const input = await terminal(page);
  await run(page, input, 'nvidia-smi -L');
  await run(page, input, 'sudo dmesg | grep -i xid; nosuchcommand');
  const question = page.locator('section[data-question="xid"]');
  await question.locator('input[value="79"]').check();
  await question.locator('button.answer-button').click();
  await question.locator('.verdict').waitFor();
  assert.deepEqual(await violations(page), [], 'lab page');

  // A state question checked, then the review page of these answers.
  await page.locator('section[data-question="drained"] button.answer-button').click();
  await page.locator('section[data-question="drained"] .verdict').waitFor();
  assert.deepEqual(await violations(page), [], 'lab page with a state question checked');
  await page.locator('a.review-link').click();
  await page.locator('.review-score').waitFor();
  assert.deepEqual(await violations(page), [], 'review page');

  await page.goto(`${app.base}#/author`);
  await page.getByLabel('Lab file', { exact: true }).waitFor({ timeout: 30000 });
  await page.getByText('No problems: the lab passes every check.').waitFor({ timeout: 30000 });
  await page.locator('.preview .terminal-input').waitFor({ timeout: 30000 });
  assert.deepEqual(await violations(page), [], 'author page');
  await context.close();
});

test('the lab file reference and the room page at 390, 1,366 and 1,920 px: by keyboard, axe-core clean, no sideways scroll', async () => {
  for (const width of [390, 1366, 1920]) {
    const context = await app.browser.newContext({ viewport: { width, height: 900 } });
    const page = await open(context, `${app.base}#/author/reference/state-facts`);
    await page.waitForFunction(() => document.activeElement?.id === 'reference-state-facts', null, { timeout: 30000 });
    const sideways = () => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(await sideways() <= 0, `${width} px: the reference scrolls sideways`);
    assert.deepEqual(await violations(page), [], `reference at ${width} px`);

    // The room's form, typed and sent from the keyboard alone.
    await page.goto(`${app.base}#/author/room`);
    const endpoint = page.getByLabel('LRS endpoint');
    await endpoint.waitFor({ timeout: 30000 });
    await endpoint.focus();
    await page.keyboard.type('https://lrs.example.org/xAPI/');
    for (const text of ['room-writer', 'write-only']) {
      await page.keyboard.press('Tab');
      await page.keyboard.type(text);
    }
    await page.keyboard.press('Enter');
    await page.locator('svg.room-qr').waitFor();
    assert.match(await page.getByLabel('Room link', { exact: true }).inputValue(), /#\/\?room=https%3A%2F%2Flrs\.example\.org%2FxAPI%2F&token=Basic%20/);
    assert.ok(await sideways() <= 0, `${width} px: the room page scrolls sideways`);
    assert.deepEqual(await violations(page), [], `room page at ${width} px`);
    assert.deepEqual(page.errors, []);
    await context.close();
  }
});

test('no width scrolls the page sideways after a wide output', async () => {
  for (const width of [390, 1366, 1920]) {
    const context = await app.browser.newContext({ viewport: { width, height: 900 } });
    const page = await open(context, `${app.base}#/lab/slow-rail`);
    const input = await terminal(page);
    await run(page, input, 'srun -N2 --ntasks-per-node=8 all_reduce_perf -b 8 -e 128M -f 2 -g 1');
    await page.waitForTimeout(4500);
    assert.match(await stdout(page), /Avg bus bandwidth/);
    const sideways = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(sideways <= 0, `${width} px: the page scrolls ${sideways} px sideways`);
    // The terminal follows the briefing in one column.
    if (width < 1000) {
      const order = await page.evaluate(() => ['.briefing', '.terminal-pane', '.questions'].map((s) => document.querySelector(s).getBoundingClientRect().top));
      assert.ok(order[0] < order[1] && order[1] < order[2], String(order));
    }
    await page.screenshot({ path: join(shots, `lab-${width}.png`), fullPage: width < 1000 });
    assert.deepEqual(page.errors, []);
    await context.close();
  }
});

/** How many columns of its own type the terminal's screen shows, and
 * whether the page scrolls sideways. */
function terminalColumns(page) {
  return page.evaluate(() => {
    const screen = document.querySelector('.screen');
    const probe = document.createElement('span');
    probe.textContent = '0'.repeat(100);
    probe.style.cssText = 'position:absolute;visibility:hidden;white-space:pre';
    screen.appendChild(probe);
    const ch = probe.getBoundingClientRect().width / 100;
    probe.remove();
    const style = getComputedStyle(screen);
    const inner = screen.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    return { columns: Math.floor(inner / ch), fontPx: parseFloat(style.fontSize), sideways: document.documentElement.scrollWidth > window.innerWidth };
  });
}

test('projector mode at 1,920 px with the largest text shows the room at least 100 columns, and the terminal bar\'s controls are 24 px or more', async () => {
  const context = await app.browser.newContext({ viewport: { width: 1920, height: 1080 } });
  const page = await open(context, `${app.base}#/lab/lost-gpu`);
  await terminal(page);
  await page.getByRole('button', { name: 'Projector' }).click();
  for (let i = 0; i < 8; i++) await page.getByRole('button', { name: 'A+ larger text' }).click();
  const room = await terminalColumns(page);
  assert.ok(room.columns >= 100 && !room.sideways && room.fontPx >= 18, JSON.stringify(room));
  // A chosen width is kept in projector mode too: 132 columns fit.
  for (const name of ['Terminal width: fit the screen', 'Terminal width: 80 columns', 'Terminal width: 100 columns']) {
    await page.getByRole('button', { name }).click();
  }
  await page.getByRole('button', { name: 'Terminal width: 132 columns' }).waitFor();
  const wide = await terminalColumns(page);
  assert.ok(wide.columns >= 132 && !wide.sideways, JSON.stringify(wide));
  const small = await page.evaluate(() => [...document.querySelectorAll('.terminal-bar button, .shell-tabs button, .display button')]
    .filter((button) => button.offsetParent !== null)
    .map((button) => { const box = button.getBoundingClientRect(); return [button.textContent, Math.round(box.width), Math.round(box.height)]; })
    .filter(([, width, height]) => width < 24 || height < 24));
  assert.deepEqual(small, []);
  await page.screenshot({ path: join(shots, 'projector-1920.png') });
  assert.deepEqual(page.errors, []);
  await context.close();
});

test('the variant is in the address, and the display settings survive a reload', async () => {
  const context = await app.browser.newContext({ viewport: { width: 1366, height: 900 } });
  const page = await open(context, `${app.base}#/lab/lost-gpu/variant/3`);
  await terminal(page);
  await page.waitForFunction(() => document.querySelector('.variant-button')?.textContent.startsWith('Variant 3'));
  assert.match(page.url(), /#\/lab\/lost-gpu\/variant\/3$/);
  // Without a variant the address gains the one shown.
  await page.goto(`${app.base}#/lab/slow-rail`);
  await terminal(page);
  await page.waitForFunction(() => /#\/lab\/slow-rail\/variant\/\d+$/.test(location.hash));

  await page.getByRole('button', { name: /^Theme:/ }).click();
  await page.getByRole('button', { name: 'A+ larger text' }).click();
  await page.getByRole('button', { name: 'Projector' }).click();
  const settings = () => page.evaluate(() => [document.documentElement.dataset.theme, getComputedStyle(document.documentElement).getPropertyValue('--font-scale'), document.documentElement.hasAttribute('data-projector')]);
  const chosen = await settings();
  assert.deepEqual(chosen, ['light', '1.1', true]);
  await page.reload();
  await terminal(page);
  assert.deepEqual(await settings(), chosen);
  assert.equal(await page.getByRole('button', { name: 'Projector' }).getAttribute('aria-pressed'), 'true');
  // The terminal sized in columns of its own type: 80, kept across a reload,
  // and no sideways scroll of the page (at the usual text size, where 80
  // columns fit beside the briefing; larger, it takes what the screen has).
  await page.getByRole('button', { name: 'Projector' }).click();
  await page.getByRole('button', { name: 'A\u2212 smaller text' }).click();
  await page.getByRole('button', { name: 'Terminal width: fit the screen' }).click();
  await page.getByRole('button', { name: 'Terminal width: 80 columns' }).waitFor();
  await page.reload();
  await terminal(page);
  const columns = await terminalColumns(page);
  // 80 whole columns at least; the width keeps room for a scrollbar, which
  // headless Chromium draws over the text.
  assert.ok(columns.columns >= 80 && columns.columns <= 82 && !columns.sideways, JSON.stringify(columns));
  await context.close();
});

test('a lab opened once works with the network off, its review page too, and a new build is offered', async () => {
  const context = await app.browser.newContext({ viewport: { width: 1366, height: 900 } });
  const page = await open(context, `${app.base}#/`);
  await page.locator('.lab-card').first().waitFor();
  await page.evaluate(async () => { await navigator.serviceWorker.ready; });
  await page.waitForFunction(() => navigator.serviceWorker.controller !== null, null, { timeout: 30000 });
  await page.goto(`${app.base}#/lab/lost-gpu`);
  await terminal(page);
  await context.setOffline(true);
  await page.reload();
  const input = await terminal(page);
  await run(page, input, 'nvidia-smi -L | wc -l');
  assert.match(await stdout(page), /7\n$/);
  assert.equal(await page.locator('#update-notice').isHidden(), true, 'no update notice on a first visit');
  // The review page's module was cached at install: it opens offline though
  // it was never opened online.
  await page.goto(`${app.base}#/review/lost-gpu`);
  await page.locator('.review-score').waitFor({ timeout: 30000 });
  await page.goto(`${app.base}#/lab/lost-gpu`);
  await terminal(page);

  // A new build: the page offers it, and Reload moves to it.
  await context.setOffline(false);
  const worker = join(dist, 'sw.js');
  const deployed = await readFile(worker, 'utf8');
  try {
    await writeFile(worker, deployed.replace(/const BUILD = '[^']*'/, "const BUILD = 'next-build'"));
    await page.evaluate(async () => { await (await navigator.serviceWorker.getRegistration()).update(); });
    await page.locator('#update-notice').waitFor({ timeout: 30000 });
    await Promise.all([page.waitForEvent('load'), page.getByRole('button', { name: 'Reload' }).click()]);
    await page.waitForFunction(async () => (await caches.keys()).includes('clusterlab-next-build'), null, { timeout: 30000 });
    await terminal(page);
  } finally {
    await writeFile(worker, deployed);
  }
  await context.close();
});

test('the catalog lists the path from "Start here", filters by stage, level and tag in the address, and shows each lab\'s score and best', async () => {
  const context = await app.browser.newContext({ viewport: { width: 1366, height: 900 }, permissions: ['clipboard-read', 'clipboard-write'] });
  const page = await open(context, `${app.base}#/lab/lost-gpu`);
  const input = await terminal(page);
  const question = page.locator('section[data-question="xid"]');
  await question.locator('input[value="79"]').check();
  await question.locator('button.answer-button').click();
  await question.locator('.verdict').waitFor();
  // A block's output, and the last one, copy to the clipboard; Clear empties the screen.
  await run(page, input, 'nvidia-smi -L | head -2');
  await page.getByRole('button', { name: 'Copy last output' }).click();
  const shown = await page.locator('.scrollback .entry').last().locator('.output').textContent();
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), shown);
  await page.getByRole('button', { name: 'Clear' }).click();
  await page.waitForFunction(() => document.querySelectorAll('.scrollback .entry').length === 0);

  await page.goto(`${app.base}#/`);
  const card = page.locator('.lab-card[data-lab="lost-gpu"]');
  await card.waitFor();
  assert.equal(await card.locator('.progress').textContent(), 'Score 1 / 10 \u00b7 best 1');
  assert.equal(await page.locator('.lab-card[data-lab="slow-rail"] .progress').textContent(), 'Not started');
  // The counts the catalog the build wrote gives.
  const catalog = JSON.parse(await readFile(join(dist, 'labs', 'index.json'), 'utf8'));
  const labs = catalog.labs;
  // Progress per stage of the path, and each lab's prerequisites, passed ones ticked.
  const stageCount = (stage) => labs.filter((lab) => lab.stage === stage).length;
  assert.equal(await page.locator('.path-stages li').first().textContent(), `understand 0/${stageCount('understand')}`);
  const firstLook = labs.find((lab) => lab.id === 'first-look');
  assert.equal(await card.locator('.requires').textContent(), `Comes after: ${firstLook.title}`);
  await page.evaluate(() => localStorage.setItem('clusterlab.summary.first-look', '{"score":4,"best":9,"possible":10}'));
  await page.reload();
  await card.waitFor();
  assert.equal(await page.locator('.path-stages li').first().textContent(), `understand 1/${stageCount('understand')}`);
  assert.equal(await card.locator('.requires').textContent(), `Comes after: ${firstLook.title} \u2713`);
  await page.locator('.path-stages').getByRole('link', { name: 'diagnose' }).click();
  await page.waitForFunction((count) => document.querySelectorAll('.lab-list .lab-card').length === count, stageCount('diagnose'));
  await page.goto(`${app.base}#/`);
  await card.waitFor();
  await page.getByLabel('Stage', { exact: true }).selectOption('diagnose');
  assert.equal(await page.locator('.lab-list').first().locator('.lab-card').count(), labs.filter((lab) => lab.stage === 'diagnose').length);
  await page.getByLabel('Tag', { exact: true }).selectOption('xid');
  const xid = await page.locator('.lab-list').first().locator('.lab-card').evaluateAll((cards) => cards.map((c) => c.dataset.lab));
  const tagged = labs.filter((lab) => lab.stage === 'diagnose' && lab.tags.includes('xid')).map((lab) => lab.id);
  assert.deepEqual([...xid].sort(), [...tagged].sort());
  assert.equal(xid[0], 'lost-gpu', 'the beginner lab leads its step of the path');
  await page.getByLabel('Stage', { exact: true }).selectOption('');
  await page.getByLabel('Tag', { exact: true }).selectOption('');
  assert.equal(await page.locator('.lab-list').first().locator('.lab-card').count(), labs.length);
  // The curriculum walks the whole workflow: every stage has labs.
  for (const stage of ['understand', 'prepare', 'validate', 'operate', 'diagnose', 'handover']) {
    assert.ok(labs.some((lab) => lab.stage === stage), `a ${stage} lab`);
  }
  // The catalog lists the path in order, the guided tour first under "Start here".
  const shownIds = () => page.locator('.lab-list .lab-card').evaluateAll((cards) => cards.map((c) => c.dataset.lab));
  assert.deepEqual(await shownIds(), labs.map((lab) => lab.id));
  assert.equal(labs[0].id, 'onboarding');
  assert.equal(await page.locator('.lab-card .start-here').count(), 1);
  assert.equal(await page.locator('.lab-card[data-lab="onboarding"] .start-here').textContent(), 'Start here');
  // A lab without a stage (the extra lab the test command drops in) comes last.
  const workflow = ['understand', 'prepare', 'validate', 'operate', 'diagnose', 'handover'];
  const stages = labs.map((lab) => (lab.stage ? workflow.indexOf(lab.stage) : workflow.length));
  assert.deepEqual(stages, [...stages].sort((a, b) => a - b), 'the path follows the workflow');
  // Filters and order are in the address: a reload or a shared link keeps them.
  await page.getByLabel('Level', { exact: true }).selectOption('beginner');
  await page.getByLabel('Order', { exact: true }).selectOption('title');
  await page.waitForFunction(() => location.hash.includes('level=beginner') && location.hash.includes('sort=title'));
  await page.reload();
  await page.locator('.lab-card').first().waitFor();
  const beginners = labs.filter((lab) => lab.level === 'beginner').map((lab) => [lab.title.toLowerCase(), lab.id]).sort().map(([, id]) => id);
  assert.deepEqual(await shownIds(), beginners);
  assert.equal(await page.getByLabel('Level', { exact: true }).inputValue(), 'beginner');
  assert.ok((await page.locator('.lab-count').textContent()).startsWith(`${beginners.length} of ${labs.length} labs`));
  // An instructor makes a course of the labs listed, then takes one out; the address keeps it.
  await page.getByRole('link', { name: 'Make a course of these labs' }).click();
  await page.waitForFunction(() => document.querySelector('.lab-count').textContent.startsWith('A course of'));
  assert.deepEqual(await shownIds(), beginners);
  await page.locator(`.lab-card[data-lab="${beginners[0]}"]`).getByRole('link', { name: 'Remove from this course' }).click();
  await page.waitForFunction((count) => document.querySelectorAll('.lab-list .lab-card').length === count, beginners.length - 1);
  await page.reload();
  await page.waitForFunction((count) => document.querySelectorAll('.lab-list .lab-card').length === count, beginners.length - 1);
  assert.deepEqual(await shownIds(), beginners.slice(1));
  assert.equal(await page.locator(`.lab-card[data-lab="${beginners[1]}"] .start-here`).textContent(), 'Start here');
  // A filter that matches nothing says so, with a way back.
  await page.goto(`${app.base}#/?stage=handover&level=beginner`);
  await page.locator('.catalog .empty').waitFor();
  assert.match(await page.locator('.catalog .empty').textContent(), /No lab matches these filters/);
  await page.getByRole('link', { name: 'Show all labs' }).click();
  await page.waitForFunction((count) => document.querySelectorAll('.lab-list .lab-card').length === count, labs.length);
  // An instructor's course is a link listing labs: those labs, in its order, the first under "Start here".
  await page.goto(`${app.base}#/?course=slow-rail,first-look,no-such-lab`);
  await page.waitForFunction(() => document.querySelectorAll('.lab-list .lab-card').length === 2);
  assert.deepEqual(await shownIds(), ['slow-rail', 'first-look']);
  assert.match(await page.locator('.lab-count').textContent(), /^A course of 2 labs/);
  assert.equal(await page.locator('.lab-card[data-lab="slow-rail"] .start-here').textContent(), 'Start here');
  // The instructor puts the day's labs in order: each move is the course's new address.
  const firstLookTitle = await page.locator('.lab-card[data-lab="first-look"] h2').textContent();
  assert.equal(await page.locator('.lab-card[data-lab="first-look"] .course-down').count(), 0);
  await page.getByRole('link', { name: `Move up: ${firstLookTitle}` }).click();
  await page.waitForFunction(() => decodeURIComponent(location.hash) === '#/?course=first-look,slow-rail,no-such-lab');
  assert.deepEqual(await shownIds(), ['first-look', 'slow-rail']);
  assert.equal(await page.locator('.lab-card[data-lab="first-look"] .start-here').textContent(), 'Start here');
  assert.equal(await page.locator('.lab-card[data-lab="first-look"] .course-up').count(), 0);
  await page.locator('.lab-count').getByRole('link', { name: 'Show all labs' }).click();
  await page.waitForFunction((count) => document.querySelectorAll('.lab-list .lab-card').length === count, labs.length);
  // At 320 px (400% zoom), nothing scrolls sideways.
  await page.setViewportSize({ width: 320, height: 700 });
  const sideways = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  assert.ok(sideways <= 0, `the catalog scrolls ${sideways} px sideways at 320 px`);
  assert.deepEqual(page.errors, []);
  await context.close();
});
