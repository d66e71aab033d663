// End-to-end: the release build in dist/, served on 127.0.0.1, driven in
// headless Chromium. Run by scripts/test.sh after `trunk build --release`.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { readFile, mkdir } from 'node:fs/promises';
import { extname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
const dist = join(root, 'dist');
const shots = join(root, 'target', 'e2e');
// playwright-core is installed by scripts/setup.sh beside the build tools.
const { chromium } = createRequire(join(root, 'scripts', 'package.json'))('playwright-core');

const types = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript',
  '.wasm': 'application/wasm',
  '.css': 'text/css',
  '.svg': 'image/svg+xml',
};

let server;
let browser;
let base;

before(async () => {
  server = createServer(async (request, response) => {
    const path = new URL(request.url, 'http://localhost').pathname;
    const file = normalize(join(dist, path === '/' ? 'index.html' : path));
    try {
      if (!file.startsWith(dist)) throw new Error('outside dist');
      const body = await readFile(file);
      response.writeHead(200, { 'content-type': types[extname(file)] ?? 'application/octet-stream' });
      response.end(body);
    } catch {
      response.writeHead(404);
      response.end('not found');
    }
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${server.address().port}/`;
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    headless: true,
    args: [
      '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
      '--no-first-run', '--disable-sync', '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1',
    ],
  });
  await mkdir(shots, { recursive: true });
});

after(async () => {
  await browser?.close();
  server?.close();
});

async function gpuLines(page) {
  const text = (await page.locator('.line.stdout').allTextContents()).join('');
  return text.split('\n').filter((line) => /^GPU \d: NVIDIA H100 80GB HBM3 \(UUID: GPU-[0-9a-f-]{36}\)$/.test(line));
}

test('a trainee opens a lab, reads nvidia-smi, answers, reloads and keeps the answers', async () => {
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  const errors = [];
  page.on('pageerror', (error) => errors.push(String(error)));

  await page.goto(base);
  await page.locator('.simulation-notice').waitFor();
  assert.match(await page.locator('.simulation-notice').textContent(), /Nothing you type runs on a real cluster/);
  await page.locator('.lab-card[data-lab="first-look"] h2 a').click();

  const input = page.locator('.terminal-input');
  await input.waitFor();
  assert.match(await page.locator('.briefing').textContent(), /simulation/);

  // Tab completes a command name.
  await input.click();
  await input.pressSequentially('nvidia');
  await input.press('Tab');
  assert.equal(await input.inputValue(), 'nvidia-smi ');
  await input.pressSequentially('-L');
  await input.press('Enter');
  await page.waitForFunction(() => document.querySelectorAll('.line.stdout').length > 0);
  assert.equal((await gpuLines(page)).length, 8);

  // Answer two questions.
  const driver = page.locator('section[data-question="driver"]');
  await driver.locator('input[value="570.158.01"]').check();
  await driver.locator('button.answer-button').click();
  await driver.locator('.verdict.correct').waitFor();
  const busId = page.locator('section[data-question="bus-id-gpu5"]');
  await busId.locator('input.text-answer').fill('00000000:A3:00.0');
  await busId.locator('button.answer-button').click();
  await busId.locator('.verdict.correct').waitFor();
  assert.equal(await page.locator('.score-value').textContent(), '3 / 5');
  await page.screenshot({ path: join(shots, 'lab.png'), fullPage: true });

  // Reload: the answers, the score and the terminal come back.
  await page.reload();
  await page.locator('section[data-question="driver"] .verdict.correct').waitFor();
  assert.equal(await page.locator('section[data-question="driver"] input[value="570.158.01"]').isChecked(), true);
  assert.equal(await page.locator('section[data-question="bus-id-gpu5"] input.text-answer').inputValue(), '00000000:A3:00.0');
  assert.equal(await page.locator('.score-value').textContent(), '3 / 5');
  assert.equal((await gpuLines(page)).length, 8);

  // Up recalls the last command; Ctrl-C cancels a line; Ctrl-L clears.
  await page.locator('.terminal-input').click();
  await page.locator('.terminal-input').press('ArrowUp');
  assert.equal(await page.locator('.terminal-input').inputValue(), 'nvidia-smi -L');
  await page.locator('.terminal-input').press('Control+c');
  assert.equal(await page.locator('.terminal-input').inputValue(), '');
  await page.locator('.terminal-input').press('Control+l');
  assert.equal(await page.locator('.line.stdout').count(), 0);
  await page.screenshot({ path: join(shots, 'after-reload.png'), fullPage: true });

  assert.deepEqual(errors, []);
  await page.close();
});

test('an unknown command answers like bash', async () => {
  const page = await browser.newPage();
  await page.goto(`${base}#/lab/first-look`);
  const input = page.locator('.terminal-input');
  await input.waitFor();
  await input.fill('ibstatt');
  await input.press('Enter');
  await page.locator('.line.stderr').waitFor();
  assert.equal(await page.locator('.line.stderr').last().textContent(), '-bash: ibstatt: command not found\n');
  await page.close();
});

test('long commands stream their output and Ctrl-C interrupts them', async () => {
  const page = await browser.newPage();
  await page.goto(`${base}#/lab/first-look`);
  const input = page.locator('.terminal-input');
  await input.waitFor();

  // 3 s on the lab's clock: the output appears shortly after, then the prompt returns.
  await input.fill('sleep 3; echo finished');
  await input.press('Enter');
  await page.locator('.line.stdout', { hasText: 'finished' }).waitFor();
  await page.waitForFunction(() => document.querySelector('label.prompt').textContent.includes('$'));

  // A long run is interrupted: ^C, the rest of its output never shows.
  await input.fill('sleep 60; nvidia-smi; nvidia-smi; nvidia-smi');
  await input.press('Enter');
  await input.press('Control+c');
  await page.locator('.line.stdout', { hasText: '^C' }).waitFor();
  const shown = (await page.locator('.line.stdout').allTextContents()).join('');
  assert.ok((shown.match(/NVIDIA-SMI 570/g) ?? []).length < 3, 'the interrupted output was cut short');
  await page.waitForFunction(() => document.querySelector('label.prompt').textContent.includes('$'));
  await page.close();
});

test('a variant lab: the trainee finds the slow rail from the output and is graded on it', async () => {
  const page = await browser.newPage();
  await page.goto(`${base}#/lab/slow-rail`);
  const input = page.locator('.terminal-input');
  await input.waitFor();
  // Count the half-rate ports on each node, as a trainee would.
  const slow = {};
  for (const node of ['gpu-001', 'gpu-002']) {
    await input.fill(`ssh ${node} ibstat | grep -c "Rate: 200"`);
    await input.press('Enter');
    await page.waitForFunction((n) => document.querySelectorAll('.line.command').length >= n, node === 'gpu-001' ? 1 : 2);
    slow[node] = Number((await page.locator('.line.stdout').last().textContent()).trim());
  }
  const bad = slow['gpu-001'] === 1 ? 'gpu-001' : 'gpu-002';
  assert.equal(slow['gpu-001'] + slow['gpu-002'], 1);
  const question = page.locator('section[data-question="which-node"]');
  await question.locator(`input[value="${bad}"]`).check();
  await question.locator('button.answer-button').click();
  await question.locator('.verdict.correct').waitFor();
  await page.close();
});
