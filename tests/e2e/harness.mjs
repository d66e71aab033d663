// What the end-to-end tests share: the release build in dist/, served on
// 127.0.0.1, and headless Chromium driven by playwright-core (installed by
// scripts/setup.sh beside the build tools; no browser download).
import { createServer, request as forward } from 'node:http';
import { createRequire } from 'node:module';
import { readFile, mkdir } from 'node:fs/promises';
import { extname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = fileURLToPath(new URL('../../', import.meta.url));
export const dist = join(root, 'dist');
export const shots = join(root, 'target', 'e2e');
const { chromium } = createRequire(join(root, 'scripts', 'package.json'))('playwright-core');

const types = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript',
  '.wasm': 'application/wasm',
  '.css': 'text/css',
  '.svg': 'image/svg+xml',
  '.json': 'application/json',
};

/// Serves dist/ and starts Chromium. Returns { base, browser, close }.
/// `proxy` ({ prefix, target }) forwards requests under `prefix` to another
/// server, from the app's own origin (the test LRS answers no CORS).
/// `routes(request, response, path)` may answer a request itself (a test's
/// stand-in LMS), returning true when it did.
export async function start({ proxy, routes } = {}) {
  const server = createServer(async (request, response) => {
    const path = decodeURIComponent(new URL(request.url, 'http://localhost').pathname);
    if (routes && await routes(request, response, path)) return;
    if (proxy && path.startsWith(proxy.prefix)) {
      const target = new URL(request.url, proxy.target);
      const upstream = forward(target, { method: request.method, headers: { ...request.headers, host: target.host } }, (answer) => {
        response.writeHead(answer.statusCode, answer.headers);
        answer.pipe(response);
      });
      upstream.on('error', () => { response.writeHead(502); response.end('the proxied server did not answer'); });
      request.pipe(upstream);
      return;
    }
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
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    headless: true,
    args: [
      '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
      '--no-first-run', '--disable-sync', '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1',
    ],
  });
  await mkdir(shots, { recursive: true });
  return {
    base: `http://127.0.0.1:${server.address().port}/`,
    browser,
    close: async () => {
      await browser.close();
      server.close();
    },
  };
}

/// A page that records uncaught errors in `page.errors`.
export async function open(context, url) {
  const page = await context.newPage();
  page.errors = [];
  page.on('pageerror', (error) => page.errors.push(String(error)));
  await page.goto(url);
  return page;
}

/// The app's command line (not the first paint's, index.html), once its prompt shows.
export async function terminal(page) {
  const input = page.locator('#terminal-input');
  await input.waitFor();
  await page.waitForFunction(() => document.querySelector('label.prompt[for="terminal-input"]')?.textContent.includes('$'));
  return input;
}

/// How many entries the scrollback shows.
export function entries(page) {
  return page.locator('.scrollback .entry').count();
}

/// Types a line, presses Enter, and waits for its entry and the prompt.
export async function run(page, input, line) {
  const before = await entries(page);
  await input.fill(line);
  await input.press('Enter');
  await page.waitForFunction(
    // Ended: its entry shown, the prompt back and the line no longer running or revealing.
    (n) => document.querySelectorAll('.scrollback .entry').length > n && document.querySelector('label.prompt').textContent.includes('$')
      && document.querySelector('.screen').getAttribute('aria-busy') === 'false',
    before,
  );
}

/// What the scrollback shows on standard output.
export async function stdout(page) {
  return (await page.locator('.scrollback .stdout').allTextContents()).join('');
}

const axeSource = await readFile(join(root, 'scripts', 'node_modules', 'axe-core', 'axe.min.js'), 'utf8');

/// axe-core's violations on the page as it is now (WCAG 2.x A and AA, best practices).
export async function violations(page) {
  await page.addScriptTag({ content: axeSource });
  const found = await page.evaluate(async () => {
    const result = await window.axe.run(document, { resultTypes: ['violations'] });
    return result.violations.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`);
  });
  return found;
}
