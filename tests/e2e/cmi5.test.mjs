// End-to-end: an exam launched by an LMS (cmi5). The test plays the LMS: it
// serves the one-time token endpoint and the LMS.LaunchData state document,
// builds the launch address, and reads the statements back from a real LRS
// (Ralph, installed by scripts/setup.sh --test into target/ralph).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { start, terminal, run, dist } from './harness.mjs';
import { startRalph } from './lrs.mjs';

const [user, password] = ['lms', 'also-not-a-secret'];
const token = Buffer.from(`${user}:${password}`).toString('base64');
const registration = '2f3b2c1e-6c1a-4a63-9d57-0f0c8f5a9e11';
const auId = 'https://clusterlab.invalid/course/labs/first-look/exam';
const actor = { objectType: 'Agent', name: 'Ada Learner', account: { homePage: 'https://lms.example.org', name: 'ada-7' } };
let app, ralph, lrsUrl;
const lms = { fetches: 0, launchDataReads: 0 };

async function statements() {
  // Without `ascending`: Ralph's file backend keeps the order stored and
  // reverses it when asked for ascending. Sorted by the stored time (a
  // stable sort keeps a batch in the order it was sent).
  const response = await fetch(`${lrsUrl}/xAPI/statements?registration=${registration}&limit=100`, {
    headers: { Authorization: `Basic ${token}`, 'X-Experience-API-Version': '1.0.3' },
  });
  assert.equal(response.status, 200);
  return (await response.json()).statements.sort((a, b) => Date.parse(a.stored) - Date.parse(b.stored));
}

/// The LMS's own endpoints: the token (once), the launch data, the return page.
async function routes(request, response, path) {
  if (path === '/lms/fetch' && request.method === 'POST') {
    lms.fetches += 1;
    const body = lms.fetches === 1 ? { 'auth-token': token } : { 'error-code': '1', 'error-text': 'the fetch URL was used already' };
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify(body));
    return true;
  }
  if (path === '/xAPI/activities/state' && request.method === 'GET') {
    const query = new URL(request.url, 'http://localhost').searchParams;
    assert.equal(query.get('stateId'), 'LMS.LaunchData');
    assert.equal(query.get('registration'), registration);
    assert.deepEqual(JSON.parse(query.get('agent')), actor);
    assert.equal(request.headers.authorization, `Basic ${token}`);
    lms.launchDataReads += 1;
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify({
      contextTemplate: {
        contextActivities: { grouping: [{ objectType: 'Activity', id: auId }] },
        extensions: { 'https://w3id.org/xapi/cmi5/context/extensions/sessionid': 'session-1' },
      },
      launchMode: 'Normal',
      launchMethod: 'AnyWindow',
      moveOn: 'Passed',
      masteryScore: 0.3,
      returnURL: `${app.base}lms/returned`,
    }));
    return true;
  }
  if (path === '/lms/returned') {
    response.writeHead(200, { 'content-type': 'text/html' });
    response.end('<!doctype html><title>Back in the LMS</title><p>Back in the LMS.</p>');
    return true;
  }
  return false;
}

before(async () => {
  ralph = await startRalph({ user, password, ready: async (url) => { lrsUrl = url; await statements(); } });
  app = await start({ proxy: { prefix: '/xAPI/', target: lrsUrl }, routes });
});

after(async () => {
  await app?.close();
  await ralph?.stop();
});

test('the build writes a cmi5 course package whose units are the labs and their exams', async () => {
  const xml = await readFile(join(dist, 'cmi5.xml'), 'utf8');
  assert.match(xml, /<courseStructure xmlns="https:\/\/w3id.org\/xapi\/profiles\/cmi5\/v1\/CourseStructure.xsd">/);
  assert.ok(xml.includes(`<au id="${auId}" moveOn="Passed" masteryScore="0.7"`), xml.slice(0, 2000));
  assert.ok(xml.includes('<url>index.html?au=exam&amp;lab=first-look</url>'));
  const zip = await readFile(join(dist, 'clusterlab-cmi5.zip'));
  assert.equal(zip.subarray(0, 4).toString('binary'), 'PK\u0003\u0004');
  // Python's zipfile reads it, with cmi5.xml at its root beside the app.
  const listed = spawnSync('python3', ['-c', 'import sys, zipfile; print("\\n".join(zipfile.ZipFile(sys.argv[1]).namelist()))', join(dist, 'clusterlab-cmi5.zip')]);
  assert.equal(listed.status, 0, String(listed.stderr));
  const names = String(listed.stdout).split('\n');
  for (const name of ['cmi5.xml', 'index.html', 'labs/index.json', 'labs/first-look.json']) assert.ok(names.includes(name), name);
});

test('an LMS launches an exam: token, launch data, initialized, the result, terminated, and back', async () => {
  const context = await app.browser.newContext({ viewport: { width: 1400, height: 1000 } });
  const page = await context.newPage();
  page.errors = [];
  page.on('pageerror', (error) => page.errors.push(String(error)));
  page.on('dialog', (dialog) => dialog.accept());
  const query = new URLSearchParams({
    au: 'exam',
    lab: 'first-look',
    endpoint: `${app.base}xAPI/`,
    fetch: `${app.base}lms/fetch`,
    actor: JSON.stringify(actor),
    registration,
    activityId: auId,
  });
  await page.goto(`${app.base}index.html?${query}`);
  await page.locator('.cmi5-bar', { hasText: 'Launched from your LMS (Normal mode)' }).waitFor({ timeout: 30000 });
  const input = await terminal(page);
  assert.match(page.url(), /#\/exam\/first-look$/);
  assert.equal(lms.fetches, 1);

  // A reload keeps the session: the token is not fetched again, initialized not sent again.
  await page.reload();
  await page.locator('.cmi5-bar', { hasText: 'Launched from your LMS' }).waitFor({ timeout: 30000 });
  await terminal(page);
  assert.equal(lms.fetches, 1);

  const driver = page.locator('section[data-question="driver"]');
  await driver.locator('input[value="570.158.01"]').check();
  await driver.locator('button.answer-button').click();
  await driver.locator('.verdict.held').waitFor();
  await run(page, await terminal(page), 'ssh gpu-002 nvidia-smi -L');
  await page.getByRole('button', { name: 'Submit the exam' }).click();
  // The session sends the result, then returns to the LMS.
  await page.waitForURL(`${app.base}lms/returned`, { timeout: 30000 });

  const stored = await statements();
  const verbs = stored.map((s) => s.verb.id.split('/').pop());
  assert.deepEqual(verbs, ['initialized', 'passed', 'completed', 'terminated']);
  for (const statement of stored) {
    assert.equal(statement.object.id, auId);
    assert.equal(statement.context.registration, registration);
    assert.equal(statement.actor.account.name, 'ada-7');
    assert.equal(statement.context.extensions['https://w3id.org/xapi/cmi5/context/extensions/sessionid'], 'session-1');
    const categories = statement.context.contextActivities.category.map((c) => c.id);
    assert.ok(categories.includes('https://w3id.org/xapi/cmi5/context/categories/cmi5'));
    const moveOn = categories.includes('https://w3id.org/xapi/cmi5/context/categories/moveon');
    assert.equal(moveOn, ['passed', 'completed'].includes(statement.verb.id.split('/').pop()), statement.verb.id);
    assert.ok(statement.context.contextActivities.grouping.some((g) => g.id === auId));
  }
  const passed = stored[1];
  // 2 of 6 points against the LMS's masteryScore of 0.3: passed.
  assert.deepEqual([passed.result.success, passed.result.score.raw, passed.result.score.max], [true, 2, 6]);
  assert.equal(passed.context.extensions['https://w3id.org/xapi/cmi5/context/extensions/masteryscore'], 0.3);
  assert.equal(stored[2].result.completion, true);
  assert.match(stored[3].result.duration, /^PT/);
  assert.deepEqual(page.errors, []);
  await context.close();
});
