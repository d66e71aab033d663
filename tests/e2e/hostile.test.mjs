// End-to-end: hostile input in the page. Each reproducer ends within 2 s
// with a clear error, and the page stays alive and answers afterwards.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { start, open, terminal, run, stdout } from './harness.mjs';

let app;
before(async () => { app = await start(); });
after(async () => { await app.close(); });

test('three hostile reproducers end with clear errors and the page stays alive', async () => {
  const context = await app.browser.newContext();
  const page = await open(context, `${app.base}#/lab/slow-rail`);
  const input = await terminal(page);
  const cases = [
    ['scontrol show hostnames a,b[0-18446744073709551615]', 'scontrol: error: Invalid hostlist'],
    [`awk 'BEGIN{x=${'('.repeat(2500)}1${')'.repeat(2500)}; print x}'`, 'program nested too deeply'],
    ['srun -n 4294967295 hostname', 'Requested node configuration is not available'],
  ];
  for (const [line, message] of cases) {
    const started = Date.now();
    await run(page, input, line);
    const took = Date.now() - started;
    assert.ok(took < 2000, `${line.slice(0, 40)}: ${took} ms`);
    assert.match(await page.locator('.scrollback .stderr').last().textContent(), new RegExp(message.replace(/[[\]()]/g, '\\$&')));
  }
  await run(page, input, 'hostname');
  assert.match(await stdout(page), /gpu-001\n$/);
  assert.deepEqual(page.errors, []);
  await context.close();
});
