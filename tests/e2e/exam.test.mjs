// End-to-end: a lab taken as an exam (#/exam/ID): no hints and no verdicts
// while it runs, one answer a question, the wall-clock limit submitting it,
// then the review of what was submitted.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { start, terminal, run } from './harness.mjs';

let app;
before(async () => { app = await start(); });
after(async () => { await app.close(); });

test('an exam is taken without hints or verdicts, submitted at its time limit and reviewed', async () => {
  const context = await app.browser.newContext({ viewport: { width: 1400, height: 1000 } });
  const page = await context.newPage();
  page.errors = [];
  page.on('pageerror', (error) => page.errors.push(String(error)));
  // The page's clock is the test's: the time limit is reached without waiting for it.
  await page.clock.install();
  await page.goto(`${app.base}#/exam/first-look/variant/2`);
  const input = await terminal(page);
  const bar = page.locator('.exam-bar');
  await bar.waitFor();
  assert.match(await bar.textContent(), /Exam · variant 2 · no hints, no verdicts until you submit/);
  assert.match(await page.locator('.exam-clock').textContent(), /^(10:00|9:5\d) left$/);
  // No score, no start over, no hints while it runs.
  assert.equal(await page.locator('.score').count(), 0);
  assert.equal(await page.getByRole('button', { name: 'Show a hint' }).count(), 0);

  // An answer is kept without a verdict, and may change until the end.
  const driver = page.locator('section[data-question="driver"]');
  await driver.locator('input[value="550.90.07"]').check();
  await driver.locator('button.answer-button').click();
  await driver.locator('.verdict.held').waitFor();
  assert.match(await driver.locator('.verdict').textContent(), /Recorded/);
  await driver.locator('input[value="570.158.01"]').check();
  await driver.locator('button.answer-button').click();
  assert.equal(await driver.locator('.verdict.correct, .verdict.incorrect').count(), 0, 'no verdict before submission');
  // A task is decided at submission, on what ran.
  await run(page, input, 'ssh gpu-002 nvidia-smi -L');
  const listed = page.locator('section[data-question="listed-gpus"]');
  assert.ok(await listed.locator('button.answer-button').isDisabled());

  // The time runs out: the exam submits itself.
  await page.clock.fastForward('10:30');
  await page.locator('.exam-bar.submitted').waitFor({ timeout: 15000 });
  assert.match(await page.locator('.exam-bar').textContent(), /Exam submitted at the time limit · 2 \/ 6 points/);
  await driver.locator('.verdict.correct').waitFor();
  await listed.locator('.verdict.correct').waitFor();
  assert.ok(await driver.locator('button.answer-button').isDisabled(), 'no answer changes after submission');

  // The review of the exam says how it ended; a reload keeps it submitted.
  await page.getByRole('link', { name: 'Review your exam' }).click();
  await page.locator('.review-exam').waitFor();
  assert.match(await page.locator('.review-exam').textContent(), /Exam: submitted at the time limit after \d+ of 10 minutes\./);
  assert.match(await page.locator('.review-score').textContent(), /2 \/ 6 points/);
  await page.goto(`${app.base}#/exam/first-look/variant/2`);
  await page.locator('.exam-bar.submitted').waitFor();
  // Practice of the same lab is kept apart from the exam.
  await page.goto(`${app.base}#/lab/first-look`);
  await terminal(page);
  assert.equal(await page.locator('.exam-bar').count(), 0);
  assert.match(await page.locator('.score').first().textContent(), /0 \/ 6/);
  assert.deepEqual(page.errors, []);
  await context.close();
});
