// End-to-end: the shell as an operator's fingers expect it, in the page:
// a loop over nodes, a multi-line paste run line by line (with bash's `> `
// prompt inside a compound command), readline's Ctrl-W and Ctrl-R.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { start, open, terminal, run, stdout, entries } from './harness.mjs';

let app;
before(async () => { app = await start(); });
after(async () => { await app.close(); });

/// Waits until the scrollback has more than `count` entries and the prompt is back.
async function settled(page, count) {
  await page.waitForFunction(
    (n) => document.querySelectorAll('.scrollback .entry').length > n && document.querySelector('label.prompt').textContent.includes('$'),
    count,
  );
}

test('a loop over nodes, command substitution and a multi-line paste', async () => {
  const context = await app.browser.newContext();
  const page = await open(context, `${app.base}#/lab/slow-rail`);
  const input = await terminal(page);
  await run(page, input, 'for n in gpu-001 gpu-002; do ssh $n hostname; done; echo "$(ibstat | grep -c Rate)" $((1+2))');
  assert.match(await stdout(page), /gpu-001\ngpu-002\n8 3\n$/);

  // Three lines pasted at once: each runs; the compound one waits at `> `.
  const count = await entries(page);
  await input.focus();
  await page.evaluate(() => {
    const data = new DataTransfer();
    data.setData('text', 'echo first\nfor x in a b\ndo echo item-$x; done\n');
    document.querySelector('.terminal-input').dispatchEvent(new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }));
  });
  // Three entries: `echo first`, `for x in a b` (at `> ` after it), the rest.
  await settled(page, count + 2);
  assert.match(await stdout(page), /first\nitem-a\nitem-b\n$/);
  assert.equal(await input.inputValue(), '');
  assert.deepEqual(page.errors, []);
  await context.close();
});

test('a scrape of an exporter and a jsonpath query run in the page', async () => {
  const context = await app.browser.newContext();
  const page = await open(context, `${app.base}#/lab/telemetry-gap`);
  const input = await terminal(page);
  await run(page, input, 'curl -s localhost:9400/metrics | grep -c "^DCGM_FI_DEV_GPU_TEMP{"; curl -s -o /dev/null -w "%{http_code}\\n" localhost:9400/health');
  assert.match(await stdout(page), /^(8\n200|0\n000)\n$/);
  await run(page, input, "kubectl get nodes -o jsonpath='{.items[*].metadata.name}'");
  assert.match(await stdout(page), /\ngpu-001 gpu-002 gpu-003$/);
  assert.deepEqual(page.errors, []);
  await context.close();
});

test('Ctrl-W kills a word and Ctrl-R finds an earlier line', async () => {
  const context = await app.browser.newContext();
  const page = await open(context, `${app.base}#/lab/slow-rail`);
  const input = await terminal(page);
  await run(page, input, 'ibstat mlx5_1 | grep State');
  await run(page, input, 'hostname');

  await input.fill('echo keep dropme');
  await input.press('End');
  await input.press('Control+w');
  assert.equal(await input.inputValue(), 'echo keep ');
  await input.press('Control+a');
  await input.type('# ');
  assert.equal(await input.inputValue(), '# echo keep ');
  await input.fill('');

  await input.press('Control+r');
  await input.type('mlx');
  assert.match(await page.locator('label.prompt').textContent(), /\(reverse-i-search\)`mlx': /);
  assert.equal(await input.inputValue(), 'ibstat mlx5_1 | grep State');
  const count = await entries(page);
  await input.press('Enter');
  await settled(page, count);
  assert.match(await stdout(page), /State: Active\n$/);
  assert.deepEqual(page.errors, []);
  await context.close();
});

test('less pages a long output and q restores the screen; more leaves its text', async () => {
  const context = await app.browser.newContext();
  const page = await open(context, `${app.base}#/lab/slow-rail`);
  const input = await terminal(page);
  const count = await entries(page);
  await input.fill('seq 500 | less');
  await input.press('Enter');
  const pager = page.getByRole('region', { name: 'Pager' });
  await pager.waitFor();
  assert.match(await pager.locator('.pager-text').textContent(), /^1\n2\n3\n/);
  assert.equal(await pager.locator('.pager-status').textContent(), ':');
  await page.keyboard.press(' ');
  assert.doesNotMatch(await pager.locator('.pager-text').textContent(), /^1\n/);
  // A search moves to the matching line; G goes to the end.
  await page.keyboard.type('/250');
  await page.keyboard.press('Enter');
  assert.match(await pager.locator('.pager-text').textContent(), /^250\n/);
  await page.keyboard.press('G');
  assert.equal(await pager.locator('.pager-status').textContent(), '(END)');
  await page.keyboard.press('q');
  await pager.waitFor({ state: 'detached' });
  await settled(page, count);
  // less left nothing on the screen, and the keys go to the command line again.
  assert.doesNotMatch(await stdout(page), /\n499\n/);
  assert.equal(await page.evaluate(() => document.activeElement && document.activeElement.id), 'terminal-input');
  await run(page, input, 'echo after');
  assert.match(await stdout(page), /after\n$/);

  await input.fill('seq 300 | more');
  await input.press('Enter');
  await pager.waitFor();
  assert.match(await pager.locator('.pager-status').textContent(), /^--More--\(\d+%\)$/);
  await page.keyboard.press('q');
  await pager.waitFor({ state: 'detached' });
  assert.match(await stdout(page), /\n300\n$/);
  assert.deepEqual(page.errors, []);
  await context.close();
});
