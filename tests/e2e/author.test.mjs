// End-to-end: the author page. A lab pasted with an error shows its located
// problem within a second; fixed, it previews and answers commands; the
// variant switches; a share link opens the same lab in a fresh browser; an
// oversized link is refused; a dropped file opens; "My labs" keeps the lab;
// and the trainee's page never loads the author module.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { start, open, root, violations } from './harness.mjs';

let app;
before(async () => { app = await start(); });
after(async () => { await app.close(); });

const good = await readFile(join(root, 'labs', 'lost-gpu.toml'), 'utf8');
const broken = good.replace('preset = "hgx-h100"', 'preset = "hgx-h10"');
// Where the problem is: LINE:COL of the misspelt preset's value.
const preceding = broken.slice(0, broken.indexOf('"hgx-h10"')).split('\n');
const at = `${preceding.length}:${preceding[preceding.length - 1].length + 1}`;

async function authorPage(context, hash = '#/author') {
  const page = await open(context, `${app.base}${hash}`);
  const editor = page.getByLabel('Lab file', { exact: true });
  await editor.waitFor({ timeout: 30000 });
  return { page, editor, problems: page.getByRole('list', { name: 'Problems' }) };
}

/// The preview's terminal, once its simulator answers.
async function previewTerminal(page) {
  const input = page.locator('.preview .terminal-input');
  await input.waitFor({ timeout: 30000 });
  await page.waitForFunction(() => document.querySelector('.preview label.prompt')?.textContent.includes('$'), null, { timeout: 30000 });
  return input;
}

async function runIn(page, scope, input, line) {
  const before = await page.locator(`${scope} .scrollback .entry`).count();
  await input.fill(line);
  await input.press('Enter');
  await page.waitForFunction(
    ([scope, n]) => document.querySelectorAll(`${scope} .scrollback .entry`).length > n && document.querySelector(`${scope} label.prompt`).textContent.includes('$'),
    [scope, before],
  );
  return (await page.locator(`${scope} .scrollback .entry`).last().locator('.stdout').allTextContents()).join('');
}

test('a pasted error is located within a second; fixed, the lab previews, answers and switches variant', async () => {
  const context = await app.browser.newContext({ viewport: { width: 1500, height: 1000 } });
  const { page, editor, problems } = await authorPage(context);
  // The starter lab passes every check.
  await page.getByText('No problems: the lab passes every check.').waitFor({ timeout: 30000 });

  const typed = Date.now();
  await editor.fill(broken);
  await problems.getByText(`${at}: unknown preset \`hgx-h10\``).waitFor({ timeout: 1000 });
  console.log(`# problem located ${Date.now() - typed} ms after the paste`);
  // Picking the problem puts the cursor at its line and column.
  await problems.getByRole('button').first().click();
  const caret = await editor.evaluate((area) => area.selectionStart);
  assert.equal(caret, broken.indexOf('"hgx-h10"'));
  assert.ok(await page.locator('.line-number.has-problem').count() >= 1);

  await editor.fill(good);
  await page.getByText('No problems: the lab passes every check.').waitFor({ timeout: 30000 });
  const input = await previewTerminal(page);
  assert.match(await page.locator('.preview .briefing').textContent(), /A training job failed at start-up/);
  const listed = await runIn(page, '.preview', input, 'nvidia-smi -L | wc -l');
  assert.equal(listed.trim(), '7');

  // Another variant: the preview starts over at it.
  const missing = async () => {
    const gpus = await runIn(page, '.preview', await previewTerminal(page), 'nvidia-smi -L');
    return [0, 1, 2, 3, 4, 5, 6, 7].find((n) => !gpus.includes(`GPU ${n}:`));
  };
  const first = await missing();
  let other = first;
  for (let seed = 2; seed < 8 && other === first; seed++) {
    await page.getByRole('button', { name: 'Next variant' }).click();
    await page.waitForFunction((n) => document.querySelector('.preview .variant-switcher input')?.value === String(n), seed);
    other = await missing();
  }
  assert.notEqual(other, first, 'some variant loses another GPU');
  // One h1 (the page's) and one variant control (the preview's).
  assert.equal(await page.getByRole('heading', { level: 1 }).count(), 1);
  assert.equal(await page.locator('.preview .variant-button').count(), 0);
  assert.deepEqual(page.errors, []);
  await context.close();
});

test('an unknown fault kind lists the kinds with a guess, and its problem links to the reference\'s section, which works offline', async () => {
  const context = await app.browser.newContext({ viewport: { width: 1366, height: 900 } });
  const { page, editor, problems } = await authorPage(context);
  await page.getByText('No problems: the lab passes every check.').waitFor({ timeout: 30000 });
  await editor.fill(good.replace('kind = "{incident.kind}"', 'kind = "gpu-falen-off-bus"').replace('id = "lost-gpu"', 'id = "lost-gpu-draft"'));
  const problem = problems.getByRole('listitem').filter({ hasText: 'unknown fault kind `gpu-falen-off-bus`' });
  await problem.waitFor({ timeout: 30000 });
  assert.match(await problem.textContent(), /did you mean `gpu-fallen-off-bus`\?\); the kinds are `[^`]+`, .*`hca-link-degraded`/);
  // Export follows the id as typed, though the file has an error; a link
  // to a lab with problems asks first.
  const [exported] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export .toml' }).click()]);
  assert.equal(exported.suggestedFilename(), 'lost-gpu-draft.toml');
  const asked = new Promise((resolve) => page.once('dialog', async (dialog) => { resolve(dialog.message()); await dialog.dismiss(); }));
  await page.getByRole('button', { name: 'Copy link' }).click();
  assert.match(await asked, /^This lab has \d+ problems?: whoever opens the link sees (it|them) and cannot run the lab\. Copy the link anyway\?$/);
  assert.equal(await page.getByLabel('Share link').count(), 0);
  // The link opens the section in a tab of its own; the lab file stays.
  const link = problem.getByRole('link', { name: 'Reference (opens in a new tab)' });
  assert.equal(await link.getAttribute('href'), '#/author/reference/faults');
  const [reference] = await Promise.all([context.waitForEvent('page'), link.click()]);
  await reference.waitForFunction(() => document.activeElement?.id === 'reference-faults', null, { timeout: 30000 });
  assert.match(await reference.locator('#reference-faults').textContent(), /\[\[faults\]\]/);
  assert.equal(await reference.getByRole('heading', { level: 1 }).count(), 1);
  assert.deepEqual(await violations(reference), []);
  // An in-page link of the reference moves to its section.
  await reference.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Leaks' }).click();
  await reference.waitForFunction(() => document.activeElement?.id === 'reference-leaks' && location.hash === '#/author/reference/leaks');
  assert.match(await editor.inputValue(), /gpu-falen-off-bus/);

  // Once the app is installed, the author page and its reference open offline.
  await page.evaluate(async () => { await navigator.serviceWorker.ready; });
  await context.setOffline(true);
  const offline = await open(context, `${app.base}#/author/reference/tasks`);
  await offline.waitForFunction(() => document.activeElement?.id === 'reference-tasks-judged-on-what-ran', null, { timeout: 30000 });
  await offline.goto(`${app.base}#/author`);
  await offline.getByLabel('Lab file', { exact: true }).waitFor({ timeout: 30000 });
  await offline.getByText('No problems: the lab passes every check.').waitFor({ timeout: 30000 });
  await context.setOffline(false);
  assert.deepEqual(page.errors, []);
  assert.deepEqual(offline.errors, []);
  await context.close();
});

test('a share link opens the same lab in a fresh browser, checked first; an oversized link is refused', async () => {
  const author = await app.browser.newContext({ viewport: { width: 1500, height: 1000 }, permissions: ['clipboard-read', 'clipboard-write'] });
  const { page, editor } = await authorPage(author);
  await editor.fill(good);
  await page.getByText('No problems: the lab passes every check.').waitFor({ timeout: 30000 });
  await page.getByRole('button', { name: 'Copy link' }).click();
  const link = await page.getByLabel('Share link').inputValue();
  assert.match(link, /#\/shared\/1\.[A-Za-z0-9_-]+$/);
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), link);
  await author.close();

  const trainee = await app.browser.newContext({ viewport: { width: 1400, height: 1000 } });
  const shared = await open(trainee, link);
  await shared.locator('.shared-notice').waitFor({ timeout: 30000 });
  assert.match(await shared.locator('.shared-notice').textContent(), /came from a link/);
  assert.equal(await shared.locator('.page.lab h1').textContent(), 'A job died at start-up on one node');
  const input = shared.locator('.terminal-input');
  await shared.waitForFunction(() => document.querySelector('label.prompt')?.textContent.includes('$'), null, { timeout: 30000 });
  // Whichever variant the link opens, the driver logged the failed GPU's Xid.
  assert.ok(Number((await runIn(shared, '#author-root', input, 'sudo dmesg | grep -c Xid')).trim()) >= 1);
  // The link stays the address: a reload opens the same lab, its terminal kept.
  assert.equal(shared.url(), link);
  await shared.reload();
  await shared.locator('.shared-notice').waitFor({ timeout: 30000 });
  await shared.waitForFunction(() => document.querySelector('#author-root .scrollback')?.textContent.includes('sudo dmesg | grep -c Xid'), null, { timeout: 30000 });

  const tooLong = await open(trainee, `${app.base}#/shared/1.${'A'.repeat(20000)}`);
  await tooLong.getByRole('alert').waitFor({ timeout: 30000 });
  assert.match(await tooLong.getByRole('alert').textContent(), /at most 16000 characters/);
  assert.equal(await tooLong.locator('.terminal-input').count(), 0);
  assert.deepEqual([...shared.errors, ...tooLong.errors], []);
  await trainee.close();
});

test('a dropped file opens in the editor, and My labs keeps it', async () => {
  const context = await app.browser.newContext({ viewport: { width: 1500, height: 1000 } });
  const { page, editor } = await authorPage(context);
  await page.locator('.code-editor').evaluate((target, text) => {
    const data = new DataTransfer();
    data.items.add(new File([text], 'lost-gpu.toml', { type: 'text/plain' }));
    target.dispatchEvent(new DragEvent('dragover', { dataTransfer: data, bubbles: true, cancelable: true }));
    target.dispatchEvent(new DragEvent('drop', { dataTransfer: data, bubbles: true, cancelable: true }));
  }, good);
  await page.waitForFunction((text) => document.querySelector('textarea[aria-label="Lab file"]').value === text, good);
  await page.getByText('Saved in My labs').waitFor({ timeout: 30000 });
  await page.getByText('No problems: the lab passes every check.').waitFor({ timeout: 30000 });
  const address = page.url();
  assert.match(address, /#\/author\/lab-[0-9a-z]+$/);

  await page.goto(`${app.base}#/`);
  const mine = page.locator('.my-labs');
  await mine.getByRole('link', { name: 'A job died at start-up on one node' }).click();
  await page.waitForFunction((text) => document.querySelector('textarea[aria-label="Lab file"]')?.value === text, good);
  assert.equal(page.url(), address);
  assert.equal(await editor.inputValue(), good);
  assert.deepEqual(page.errors, []);
  await context.close();
});

test('the trainee page never loads the author module', async () => {
  const context = await app.browser.newContext();
  const page = await context.newPage();
  const fetched = [];
  page.on('request', (request) => fetched.push(new URL(request.url()).pathname));
  await page.goto(`${app.base}#/lab/lost-gpu`);
  await page.locator('.terminal-input').waitFor();
  await page.waitForTimeout(500);
  assert.ok(!fetched.some((path) => path.includes('author')), fetched.join(' '));
  await context.close();
});
