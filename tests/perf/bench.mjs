// The side-by-side benchmark (not a test: it prints figures). Over cold
// loads in headless Chromium it measures, for the app, for xterm.js alone
// writing the same bytes, and for a naive DOM page:
// - load to a usable prompt;
// - Enter to painted output for a 100-line and a 3,000-line output;
// - Enter to painted output for a short command, fresh and after 200
//   `nvidia-smi -q`;
// - on the author page, open to editor and a paste to its first problem;
// and every asset's size raw, gzipped and brotli-compressed.
// Run after `trunk build --release`:  node tests/perf/bench.mjs [LOADS]
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { readFile, readdir, writeFile, mkdir } from 'node:fs/promises';
import { execFileSync } from 'node:child_process';
import { extname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync, brotliCompressSync, constants } from 'node:zlib';

const root = fileURLToPath(new URL('../../', import.meta.url));
const dist = join(root, 'dist');
const perf = join(root, 'tests', 'perf');
const xtermDir = join(root, 'scripts', 'node_modules', '@xterm', 'xterm');
const { chromium } = createRequire(join(root, 'scripts', 'package.json'))('playwright-core');
const LOADS = Number(process.argv[2] ?? 21);
const SAMPLES = 5;

const LAB = 'first-look';
const SHORT = 'echo ok';
const HUNDRED = 'nvidia-smi -q -i 0 | head -100';
const THREE_THOUSAND = '(nvidia-smi -q; nvidia-smi -q) | head -3000';
const LONG = 'nvidia-smi -q';

// The bytes each command prints, from the engine itself (the CLI).
function output(line) {
  return execFileSync('cargo', ['run', '-q', '--profile', 'tool', '-p', 'clusterlab-cli', '--', 'run', `labs/${LAB}.toml`, '--', line], { cwd: root, maxBuffer: 1 << 26 }).toString();
}
const outputs = Object.fromEntries([SHORT, HUNDRED, THREE_THOUSAND, LONG].map((line) => [line, output(line)]));
for (const [line, lines] of [[HUNDRED, 100], [THREE_THOUSAND, 3000]]) {
  const count = outputs[line].split('\n').length - 1;
  if (count !== lines) throw new Error(`${line}: ${count} lines, expected ${lines}`);
}

const types = { '.html': 'text/html', '.js': 'text/javascript', '.wasm': 'application/wasm', '.css': 'text/css', '.json': 'application/json', '.svg': 'image/svg+xml' };
const server = createServer(async (request, response) => {
  const path = decodeURIComponent(new URL(request.url, 'http://x').pathname);
  let file;
  if (path === '/perf/outputs.json') {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify(outputs));
    return;
  } else if (path.startsWith('/perf/')) file = normalize(join(perf, path.slice(6)));
  else if (path.startsWith('/xterm/')) file = normalize(join(xtermDir, path.slice(7)));
  else file = normalize(join(dist, path === '/' ? 'index.html' : path));
  try {
    const body = await readFile(file);
    response.writeHead(200, { 'content-type': types[extname(file)] ?? 'application/octet-stream' });
    response.end(body);
  } catch {
    response.writeHead(404);
    response.end();
  }
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const base = `http://127.0.0.1:${server.address().port}`;
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run', '--disable-sync'],
});
const probe = await readFile(join(perf, 'probe.js'), 'utf8');

const PAGES = {
  app: { url: `${base}/#/lab/${LAB}`, input: '.terminal-input', init: probe },
  xterm: { url: `${base}/perf/xterm.html`, input: '.xterm-helper-textarea' },
  naive: { url: `${base}/perf/naive.html`, input: '#line' },
};

async function marks(page) {
  return page.evaluate(() => window.marks ?? marks);
}

/// Types a line and waits until its output is painted: ms from Enter.
async function enterToPaint(page, kind, line) {
  const before = (await marks(page)).output.length;
  await page.locator(PAGES[kind].input).focus();
  await page.keyboard.insertText(line);
  await page.keyboard.press('Enter');
  await page.waitForFunction((n) => (window.marks ?? marks).output.length > n, before, { timeout: 120000 });
  const m = await marks(page);
  return m.output[before] - m.enter.at(-1);
}

/// One cold load: a new context (no cache), the page, its measures.
async function coldLoad(kind, { after200 = false } = {}) {
  const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
  if (PAGES[kind].init) await context.addInitScript(PAGES[kind].init);
  const page = await context.newPage();
  await page.goto(PAGES[kind].url);
  await page.waitForFunction(() => (window.marks ?? marks).prompt.length > 0, null, { timeout: 60000 });
  const result = { load: (await marks(page)).prompt[0] };
  if (kind === 'app') {
    // The prompt takes keys at once: at first on the page's first paint
    // (index.html), which the app's own command line then takes over.
    await page.waitForFunction(() => document.getElementById('terminal-input') && !document.getElementById('terminal-input').disabled);
    result.app = await page.evaluate(() => performance.getEntriesByName('clusterlab:app-prompt')[0]?.startTime ?? NaN);
  }
  // Each measure is of a second run: the first runs the code paths for the
  // first time (the page's, xterm.js's or the simulator's), the second is
  // what a trainee meets from then on. The first is reported too.
  // Frames are 16 ms apart and a paint lands in one or the next: each warm
  // measure is the median of SAMPLES runs.
  const samples = async (line) => {
    const times = [];
    for (let at = 0; at < SAMPLES; at++) times.push(await enterToPaint(page, kind, line));
    return median(times);
  };
  result.firstShort = await enterToPaint(page, kind, SHORT);
  result.short = await samples(SHORT);
  result.firstHundred = await enterToPaint(page, kind, HUNDRED);
  result.hundred = await samples(HUNDRED);
  await enterToPaint(page, kind, THREE_THOUSAND);
  result.threeThousand = await samples(THREE_THOUSAND);
  if (after200) {
    for (let at = 0; at < 200; at++) await enterToPaint(page, kind, LONG);
    result.after200 = await samples(SHORT);
  }
  await context.close();
  return result;
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

const results = {};
for (const kind of Object.keys(PAGES)) {
  const runs = [];
  for (let at = 0; at < LOADS; at++) runs.push(await coldLoad(kind, { after200: at === 0 }));
  results[kind] = {
    load: median(runs.map((r) => r.load)),
    app: median(runs.map((r) => r.app ?? NaN)),
    loadRange: [Math.min(...runs.map((r) => r.load)), Math.max(...runs.map((r) => r.load))],
    short: median(runs.map((r) => r.short)),
    firstShort: median(runs.map((r) => r.firstShort)),
    firstHundred: median(runs.map((r) => r.firstHundred)),
    hundred: median(runs.map((r) => r.hundred)),
    threeThousand: median(runs.map((r) => r.threeThousand)),
    after200: runs[0].after200,
  };
  if (process.env.BENCH_VERBOSE) console.error(kind, JSON.stringify(runs.map((r) => [r.hundred.toFixed(1), r.short.toFixed(1)])));
}
// The author page, cold: from opening it to its editor, and from a paste
// made as soon as the editor shows to the pasted error's problem (the
// checker's module starting meanwhile).
const broken = (await readFile(join(root, 'labs', `${LAB}.toml`), 'utf8')).replace(/^id = "[^"]*"/m, 'id = "Not An Id"');
const author = { editor: [], problem: [] };
for (let at = 0; at < LOADS; at++) {
  const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
  const page = await context.newPage();
  await page.goto(`${base}/#/author`);
  const editor = page.getByLabel('Lab file', { exact: true });
  await editor.waitFor({ timeout: 60000 });
  author.editor.push(await page.evaluate(() => performance.now()));
  const pasted = await page.evaluate(() => performance.now());
  await editor.fill(broken);
  await page.locator('.problems li', { hasText: 'Not An Id' }).first().waitFor({ timeout: 60000 });
  author.problem.push((await page.evaluate(() => performance.now())) - pasted);
  await context.close();
}
await browser.close();
server.close();

const ms = (value) => `${value.toFixed(1)} ms`;
const ratio = (a, b) => `${(a / b).toFixed(2)}x`;
let report = `## ClusterLab side by side (${LOADS} cold loads each, medians)\n\n`;
report += '| measure | app | xterm.js alone | naive DOM | target |\n|---|---|---|---|---|\n';
const r = results;
report += `| load to a usable prompt | ${ms(r.app.load)} (${ms(r.app.loadRange[0])}-${ms(r.app.loadRange[1])}) | ${ms(r.xterm.load)} | ${ms(r.naive.load)} | app <= xterm.js: ${ratio(r.app.load, r.xterm.load)} |\n`;
report += `| load to the app's own command line (the first paint taken over) | ${ms(r.app.app)} | | | |\n`;
report += `| Enter to painted, first command (\`${SHORT}\`) | ${ms(r.app.firstShort)} | ${ms(r.xterm.firstShort)} | ${ms(r.naive.firstShort)} | |\n`;
report += `| Enter to painted, first 100 lines | ${ms(r.app.firstHundred)} | ${ms(r.xterm.firstHundred)} | ${ms(r.naive.firstHundred)} | |\n`;
report += `| Enter to painted, short, warm (\`${SHORT}\`) | ${ms(r.app.short)} | ${ms(r.xterm.short)} | ${ms(r.naive.short)} | |\n`;
report += `| Enter to painted, 100 lines | ${ms(r.app.hundred)} | ${ms(r.xterm.hundred)} | ${ms(r.naive.hundred)} | app <= 1.5x naive: ${ratio(r.app.hundred, r.naive.hundred)} |\n`;
report += `| Enter to painted, 3,000 lines | ${ms(r.app.threeThousand)} | ${ms(r.xterm.threeThousand)} | ${ms(r.naive.threeThousand)} | app <= xterm.js: ${ratio(r.app.threeThousand, r.xterm.threeThousand)} |\n`;
report += `| short command after 200 \`${LONG}\` | ${ms(r.app.after200)} | ${ms(r.xterm.after200)} | ${ms(r.naive.after200)} | app <= 1.5x its fresh short: ${ratio(r.app.after200, r.app.short)} |\n`;
report += `| author page: open to its editor (cold) | ${ms(median(author.editor))} | | | |\n`;
report += `| author page: paste to the first problem (cold checker) | ${ms(median(author.problem))} (${ms(Math.min(...author.problem))}-${ms(Math.max(...author.problem))}) | | | within 1 s |\n`;

async function files(dir) {
  const found = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...(await files(path)));
    else found.push(path);
  }
  return found;
}
report += '\n| asset | raw | gzip -9 | brotli |\n|---|---|---|---|\n';
const assets = [...(await files(dist)), join(xtermDir, 'lib', 'xterm.js'), join(xtermDir, 'css', 'xterm.css')];
for (const file of assets.sort()) {
  const body = await readFile(file);
  const gz = gzipSync(body, { level: 9 }).length;
  const br = brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }).length;
  report += `| ${relative(root, file)} | ${body.length} | ${gz} | ${br} |\n`;
}
console.log(report);
await mkdir(join(root, 'target', 'perf'), { recursive: true });
await writeFile(join(root, 'target', 'perf', 'results.md'), report);
