// End-to-end: a timed drill and a capstone played to a pass in the browser,
// from the evidence the terminal shows (never from the lab file): the drill's
// deadline is on the simulated clock, the capstone's second fault strikes
// while the trainee works, and its handoff is graded on what the cluster shows.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { start, open, terminal, run } from './harness.mjs';

let app;
before(async () => { app = await start(); });
after(async () => { await app.close(); });

const lastEntry = (page) => page.locator('.scrollback .entry').last().textContent();

/// The port that trains at 200 Gb/s, from ibstat on each of `nodes`.
async function slowRail(page, input, nodes) {
  await run(page, input, `for n in ${nodes.join(' ')}; do ssh $n ibstat | grep -B16 'Rate: 200' | grep "CA '" | sed "s/^/$n /"; done`);
  const found = (await lastEntry(page)).match(/(gpu-\d{3}) CA '(mlx5_\d)'/);
  assert.ok(found, 'one port trains at 200 Gb/s');
  return { node: found[1], hca: found[2] };
}

/// Drains the rail's node, stops the job, has the cable reseated, resumes the
/// node and relaunches the job from its checkpoint, then lets it step.
async function repairAndRelaunch(page, input, rail) {
  for (const line of [
    `sudo scontrol update nodename=${rail.node} state=drain reason="${rail.hca} at 200 Gb/s"`,
    'scancel -n llama3-8b',
    `dctech reseat-cable ${rail.node} ${rail.hca}`,
    `sudo scontrol update nodename=${rail.node} state=resume`,
    'sbatch ~/llama3-8b.sbatch',
    'sleep 300',
  ]) await run(page, input, line);
}

async function answer(page, id, fill) {
  const question = page.locator(`section[data-question="${id}"]`);
  await fill(question);
  await question.locator('button.answer-button').click();
  await question.locator('.verdict.correct').waitFor();
  return question;
}

const check = (page, id) => answer(page, id, async () => {});
const entity = (page, id, value) => answer(page, id, (q) => q.locator('input.entity-answer').fill(value));

test('a timed drill: the job back at its baseline pace within the deadline', async () => {
  const context = await app.browser.newContext({ viewport: { width: 1400, height: 1000 } });
  const page = await open(context, `${app.base}#/lab/drill-step-time/variant/1`);
  const input = await terminal(page);
  const bad = await slowRail(page, input, ['gpu-001', 'gpu-002']);
  await entity(page, 'which-hca', `${bad.node} ${bad.hca}`);
  await repairAndRelaunch(page, input, bad);
  const back = await check(page, 'back-in-time');
  assert.match(await back.locator('.verdict').textContent(), /Done — 6 \/ 6 points/);
  assert.match(await page.locator('.completion').textContent(), /Lab complete: 8 \/ 8 points\. Passed/);
  assert.deepEqual(page.errors, []);
  await context.close();
});

test('a capstone: two faults, one arriving mid-shift, noise left alone, a handoff on facts', async () => {
  const context = await app.browser.newContext({ viewport: { width: 1400, height: 1000 } });
  const page = await open(context, `${app.base}#/lab/capstone-on-shift/variant/1`);
  const input = await terminal(page);
  const jobNodes = ['gpu-001', 'gpu-002', 'gpu-003', 'gpu-004'];

  // The fault already there: a rail at half its rate.
  const rail = await slowRail(page, input, jobNodes);
  await repairAndRelaunch(page, input, rail);
  // The job is back at its pace, but the shift is not over: the lab waits for what comes.
  const early = page.locator('section[data-question="job-back"]');
  await early.locator('button.answer-button').click();
  await early.locator('.verdict').waitFor();
  assert.match(await early.locator('.verdict').textContent(), /Not yet/);

  // The second fault strikes while the trainee watches.
  await run(page, input, 'sleep 900');
  await run(page, input, 'pdsh -w gpu-[001-004] nvidia-smi --query-gpu=index,ecc.errors.uncorrected.volatile.total --format=csv,noheader | grep -v ", 0$"');
  const ecc = (await lastEntry(page)).match(/(gpu-\d{3}): (\d), [1-9]/);
  assert.ok(ecc, 'one GPU counts an uncorrectable ECC error');
  const [, eccNode, eccGpu] = ecc;
  for (const line of [
    `sudo scontrol update nodename=${eccNode} state=drain reason="GPU ${eccGpu} uncorrectable ECC"`,
    'scancel -n llama3-8b',
    `ssh ${eccNode} sudo systemctl stop dcgm-exporter nvidia-dcgm`,
    `ssh ${eccNode} sudo nvidia-smi -r -i ${eccGpu}`,
    `ssh ${eccNode} sudo systemctl start nvidia-dcgm dcgm-exporter`,
    `sudo scontrol update nodename=${eccNode} state=resume`,
    'sbatch ~/llama3-8b.sbatch',
    'sleep 300',
  ]) await run(page, input, line);

  await entity(page, 'first-cause', `${rail.node} ${rail.hca}`);
  await entity(page, 'second-cause', `${eccNode} GPU ${eccGpu}`);
  await answer(page, 'what-matters', async (q) => {
    await q.locator('input[value="An HCA link training at half its rate"]').check();
    await q.locator('input[value="A GPU with an uncorrectable ECC error"]').check();
  });
  await check(page, 'job-back');
  const handoff = await answer(page, 'handoff', async (q) => {
    const fields = q.locator('.handoff-field textarea');
    await fields.nth(0).fill('Night operator, until the next shift');
    await fields.nth(1).fill(`${rail.hca} on ${rail.node} trained at 200 Gb/s; later GPU ${eccGpu} of ${eccNode} hit an uncorrectable ECC error`);
    await fields.nth(2).fill(`Drained both nodes, the technician reseated the cable (repair), reset the GPU, resumed the nodes and relaunched the job`);
    await fields.nth(3).fill('gpu-005 stays drained for the datacenter\'s PSU replacement');
  });
  assert.match(await handoff.locator('.verdict').textContent(), /4 \/ 4 points/);
  assert.match(await page.locator('.completion').textContent(), /Lab complete: 14 \/ 14 points\. Passed/);
  assert.deepEqual(page.errors, []);
  await context.close();
});
