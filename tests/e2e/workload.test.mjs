// End-to-end: a lab with a training job. The job's log is in the home
// directory, the metrics panel draws its step time against the baseline
// with the slowdown marked (never its cause), summarises each chart in words, passes axe-core,
// and redraws after a command changes the job.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { start, open, terminal, run, stdout, shots, root } from './harness.mjs';

let app;
before(async () => { app = await start(); });
after(async () => { await app.close(); });

const axeSource = await readFile(join(root, 'scripts', 'node_modules', 'axe-core', 'axe.min.js'), 'utf8');

test('the metrics panel draws the job against its baseline and follows it', async () => {
  const context = await app.browser.newContext({ viewport: { width: 1366, height: 900 } });
  const page = await open(context, `${app.base}#/lab/training-slowdown/variant/1`);
  const input = await terminal(page);
  await run(page, input, 'tail -n 6 ~/slurm-*.out');
  assert.match(await stdout(page), /elapsed time per iteration \(ms\): 21\d\.\d \| throughput per GPU \(TFLOP\/s\/GPU\): 4\d\d\.\d/);

  // Open in a lab with jobs, under the briefing.
  await page.waitForFunction(() => document.querySelectorAll('.metrics figure').length === 7);
  const [briefing, metrics] = await Promise.all(['.briefing', '.metrics'].map((s) => page.locator(s).boundingBox()));
  assert.ok(metrics.y > briefing.y && Math.abs(metrics.x - briefing.x) < 2, 'the metrics sit under the briefing');
  assert.equal(await page.getByRole('button', { name: 'Hide metrics' }).getAttribute('aria-expanded'), 'true');
  // Each chart is an image named by its title, with its summary as the caption.
  assert.equal(await page.getByRole('img', { name: 'Step time (ms)' }).count(), 1);
  const step = await page.locator('.metrics figcaption').first().textContent();
  assert.match(step, /^Step time \(ms\): 17\d at the start, 21\d at the end, range 17\d to 21\d; baseline 17\d\. The slowdown began at \d\d:\d\d\.$/);
  assert.equal(await page.locator('.metrics path.change').count(), 7);
  // The panel shows what a monitor shows, not the diagnosis the lab asks for.
  assert.doesNotMatch(await page.locator('.metrics').textContent(), /hca|degraded|fault|gpu-00/i);
  assert.equal(await page.locator('.metrics path.baseline').count(), 7);
  await page.locator('.metrics').screenshot({ path: join(shots, 'metrics-panel.png') });

  await page.addScriptTag({ content: axeSource });
  const found = await page.evaluate(async () => {
    const result = await window.axe.run(document.querySelector('.metrics'), { resultTypes: ['violations'] });
    return result.violations.map((v) => `${v.id}: ${v.help}`);
  });
  assert.deepEqual(found, []);

  // Cancelling the job shows at once: throughput falls to nothing.
  await run(page, input, 'scancel -n llama3-8b');
  await run(page, input, 'sleep 120');
  await page.waitForFunction(() => [...document.querySelectorAll('.metrics figcaption')].some((c) => c.textContent.startsWith('GPU utilization (%): ') && c.textContent.includes(' 0.0 at the end')));
  await page.getByRole('button', { name: 'Hide metrics' }).click();
  assert.equal(await page.locator('.metrics figure').count(), 0);
  await context.close();
});
