// End-to-end: a lab finished to full marks from the terminal alone, with
// state and task questions checked by the engine and a number typed in
// another unit.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { start, open, terminal, run } from './harness.mjs';

let app;
before(async () => { app = await start(); });
after(async () => { await app.close(); });

async function check(page, id) {
  const question = page.locator(`section[data-question="${id}"]`);
  await question.locator('button.answer-button').click();
  await question.locator('.verdict').waitFor();
  return question;
}

test('slow-rail: drained, repaired, re-measured, answers read as operators write them, a retry charged', async () => {
  const context = await app.browser.newContext({ viewport: { width: 1400, height: 1000 } });
  const page = await open(context, `${app.base}#/lab/slow-rail/variant/1`);
  const input = await terminal(page);
  // The evidence: which port runs at 200.
  let bad;
  for (const node of ['gpu-001', 'gpu-002']) {
    await run(page, input, `ssh ${node} "ibstat | grep -B16 'Rate: 200' | grep \\"CA '\\""`);
    const text = (await page.locator('.scrollback .entry').last().textContent());
    const found = text.match(/CA '(mlx5_\d)'/);
    if (found) bad = { node, hca: found[1] };
  }
  assert.ok(bad, 'one port runs at 200');

  // A state question checked before it holds says so, and keeps it open.
  let drained = await check(page, 'drained');
  assert.match(await drained.locator('.verdict').textContent(), /Not yet/);
  // It says what is not yet met by topic, never by node.
  assert.equal(await drained.locator('.reading').textContent(), "Conditions met: 0 of 1. Not yet: a node's state in Slurm.");
  await run(page, input, `sudo scontrol update nodename=${bad.node} state=drain reason="${bad.hca} at 200 Gb/s"`);
  drained = await check(page, 'drained');
  await drained.locator('.verdict.correct').waitFor();
  assert.match(await drained.locator('.verdict').textContent(), /Done — 1 \/ 1 point/);
  assert.equal(await drained.locator('button.answer-button').textContent(), 'Answered');
  assert.ok(await drained.locator('button.answer-button').isDisabled(), 'a correct answer is locked');

  for (const line of [
    `dctech reseat-cable ${bad.node} ${bad.hca}`,
    `sudo scontrol update nodename=${bad.node} state=resume`,
    'srun -N2 --ntasks-per-node=8 all_reduce_perf -b 1G -e 8G -f 2 -g 1',
  ]) await run(page, input, line);
  await (await check(page, 'back-to-baseline')).locator('.verdict.correct').waitFor();
  await (await check(page, 'repeat-the-comparison')).locator('.verdict.correct').waitFor();

  // The typed answers: 25 GB/s is the 200 Gb/s the question asks in.
  const answer = async (id, value) => {
    const question = page.locator(`section[data-question="${id}"]`);
    if (value.radio) await question.locator(`input[value="${value.radio}"]`).check();
    else if (value.entity) await question.locator('input.entity-answer').fill(value.entity);
    else await question.locator('input.text-answer').fill(value.text);
    await question.locator('button.answer-button').click();
    await question.locator('.verdict.correct').waitFor();
    return question;
  };
  // An HCA without its node is asked again, at no cost; `node:hca` is read.
  const which = page.locator('section[data-question="which-hca"]');
  await which.locator('input.entity-answer').fill(bad.hca);
  await which.locator('button.answer-button').click();
  await which.locator('.unclear').waitFor();
  assert.match(await which.locator('.unclear').textContent(), /on which node\? .*No attempt was used/);
  const read = await answer('which-hca', { entity: `${bad.node}:${bad.hca}` });
  assert.match(await read.locator('.verdict').textContent(), new RegExp(`Correct — 2 / 2 points .*read as ${bad.node} ${bad.hca}`));
  await answer('rate', { text: '25 GB/s' });
  await answer('lane-speed', { radio: '50.0 Gbps (64)' });
  // A tempting wrong choice says why it is wrong, and the right one after it keeps half its point (rounded down).
  const first = page.locator('section[data-question="first-step"]');
  await first.locator('input[value="Reboot the node"]').check();
  await first.locator('button.answer-button').click();
  await first.locator('.verdict.incorrect').waitFor();
  assert.match(await first.locator('.verdict').textContent(), /loses the evidence/);
  const retried = await answer('first-step', { radio: 'Drain the node in Slurm so no new job lands on it' });
  assert.match(await retried.locator('.verdict').textContent(), /Correct — 0 \/ 1 point .* 2 attempts/);

  // The score, which survives a reload.
  const score = async () => (await page.locator('.score').first().textContent());
  assert.match(await score(), /10 \/ 11/);
  // Every question answered: the lab says it is complete, passed against
  // its pass mark, with the review and the next lab on the path.
  const done = page.locator('.completion');
  assert.match(await done.textContent(), /Lab complete: 10 \/ 11 points\. Passed \(the pass mark is 70%\)\./);
  const catalog = JSON.parse(await readFile(new URL('../../dist/labs/index.json', import.meta.url), 'utf8'));
  const next = catalog.labs[catalog.labs.findIndex((lab) => lab.id === 'slow-rail') + 1];
  assert.equal(await done.getByRole('link', { name: `Next on the path: ${next.title}` }).getAttribute('href'), `#/lab/${next.id}`);
  assert.equal(await done.getByRole('link', { name: 'Review what you did' }).getAttribute('href'), '#/review/slow-rail');
  await page.reload();
  await terminal(page);
  assert.match(await score(), /10 \/ 11/);

  // The review page, and the evidence bundle it downloads.
  await page.locator('a.review-link').click();
  await page.locator('.review-score').waitFor();
  assert.match(await page.locator('.review-score').textContent(), /10 \/ 11 points \(90%\); pass mark 70%: passed/);
  assert.equal(await page.locator('.review-question.correct').count(), 7);
  assert.match(await page.title(), /^Review: Two-node jobs slower since the weekend/);
  const fetch = async (label) => {
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: label }).click()]);
    return { name: download.suggestedFilename(), text: await readFile(await download.path(), 'utf8') };
  };
  const bundle = await fetch('Download the evidence (Markdown)');
  assert.equal(bundle.name, 'clusterlab-slow-rail-variant-1-evidence.md');
  assert.match(bundle.text, /^# Evidence: Two-node jobs slower since the weekend \(slow-rail\), variant 1\n/);
  assert.match(bundle.text, /nothing ran on a real cluster/);
  assert.match(bundle.text, /\*\*Score:\*\* 10 \/ 11 points \(90%\); pass mark 70%: passed/);
  assert.match(bundle.text, new RegExp(`### 2026-03-09T\\d\\d:\\d\\d:\\d\\dZ on gpu-001: exit 0\\n\\n\`\`\`\\n\\$ dctech reseat-cable ${bad.node} ${bad.hca}\\n`));
  const json = JSON.parse((await fetch('Download the evidence (JSON)')).text);
  assert.equal(json.score, 10);
  assert.equal(json.questions.find((q) => q.id === 'rate').answer, '25 GB/s');
  const csv = (await fetch('Download the results (CSV)')).text;
  assert.match(csv, /^lab,variant,question,type,answer,correct,points,possible,attempts,hints\n/);
  assert.match(csv, /\nslow-rail,1,rate,number,25 GB\/s,true,1,1,1,0\n/);
  // Back to the lab, which the review left as it was.
  await page.getByRole('link', { name: 'Back to the lab' }).click();
  await terminal(page);
  assert.match(await score(), /10 \/ 11/);
  assert.deepEqual(page.errors, []);
  await context.close();
});
