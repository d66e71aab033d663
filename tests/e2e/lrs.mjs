// A real Learning Record Store for the end-to-end tests: Ralph, installed by
// scripts/setup.sh --test into target/ralph, with one user and a fresh
// file-system store in a temporary folder.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { root } from './harness.mjs';

const ralph = join(root, 'target', 'ralph', 'bin', 'ralph');
const python = join(root, 'target', 'ralph', 'bin', 'python');
// Ralph 5.1's file-system LRS creates its statements file on the first
// POST and refuses every later one ("already exists and overwrite is not
// allowed"), and `ralph runserver` starts uvicorn with a reloader (another
// process): Ralph's app is served by uvicorn itself, in one process, with
// that backend appending.
const serve = (port) => [
  '-c',
  'import sys, uvicorn; from ralph.backends.data.base import BaseOperationType; from ralph.backends.lrs.fs import FSLRSBackend; '
    + 'FSLRSBackend.default_operation_type = BaseOperationType.APPEND; '
    + `uvicorn.run("ralph.api:app", host="127.0.0.1", port=${port}, log_level="warning")`,
];

/// Starts Ralph for `user`; `ready(url)` is polled until it answers.
/// Returns { url, stop }.
export async function startRalph({ user, password, ready }) {
  // Never skipped: a missing LRS is a failed setup.
  assert.ok(existsSync(ralph), `${ralph} is missing: run ./scripts/setup.sh --test`);
  const dir = await mkdtemp(join(tmpdir(), 'clusterlab-lrs-'));
  const env = {
    ...process.env,
    RALPH_APP_DIR: join(dir, 'app'),
    RALPH_RUNSERVER_BACKEND: 'fs',
    RALPH_BACKENDS__LRS__FS__DEFAULT_DIRECTORY_PATH: join(dir, 'data'),
  };
  const made = spawnSync(ralph, ['auth', '-u', user, '-p', password, '-s', 'all', '-M', `mailto:${user}@example.org`, '-w'], { env });
  assert.equal(made.status, 0, String(made.stderr));
  const port = 20000 + Math.floor(Math.random() * 20000);
  const url = `http://127.0.0.1:${port}`;
  await mkdir(join(dir, 'data'), { recursive: true });
  const lrs = spawn(python, serve(port), { env, stdio: 'ignore' });
  const stop = async () => {
    lrs.kill();
    await rm(dir, { recursive: true, force: true });
  };
  for (let tries = 0; ; tries++) {
    try {
      await ready(url);
      break;
    } catch (error) {
      if (tries > 120) {
        await stop();
        throw error;
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
  return { url, stop };
}
