// A real voiceapi server for the tests: the binary built from this repository (or the one
// VOICEAPI_BIN names), serving a fresh data directory on a free loopback port, as the Go
// tests and docs/tour.md start it.

import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../../..');

/** The go command, on PATH or where .ci/run looks; null when there is none. */
export function findGo() {
  for (const candidate of ['go', '/usr/local/go/bin/go']) {
    if (spawnSync(candidate, ['version'], { stdio: 'ignore' }).status === 0) return candidate;
  }
  return null;
}

/**
 * Why the tests cannot start a server here, or null when they can. Under CI=true the
 * caller fails on it instead of skipping.
 */
export function missingPrerequisite() {
  if (process.env.VOICEAPI_BIN) {
    return existsSync(process.env.VOICEAPI_BIN) ? null : `VOICEAPI_BIN ${process.env.VOICEAPI_BIN} does not exist`;
  }
  return findGo() ? null : 'Go is not installed (looked for go on PATH and in /usr/local/go/bin): the tests build voiceapi';
}

let built = null;

function binary(dir) {
  if (process.env.VOICEAPI_BIN) return process.env.VOICEAPI_BIN;
  if (built) return built;
  const out = join(dir, 'voiceapi');
  const go = findGo();
  const res = spawnSync(go, ['build', '-o', out, '.'], { cwd: repoRoot, encoding: 'utf8' });
  if (res.status !== 0) throw new Error(`go build failed:\n${res.stderr}`);
  built = out;
  return out;
}

/**
 * Starts a server and returns its URL, the owner's token and a request helper.
 * @param {string[]} [extraArgs] more serve flags
 */
export async function startVoiceAPI(extraArgs = []) {
  const dir = mkdtempSync(join(tmpdir(), 'voiceapi-livekit-'));
  const bin = binary(process.env.VOICEAPI_BIN ? dir : mkdtempSync(join(tmpdir(), 'voiceapi-bin-')));
  const args = ['serve', '--data', join(dir, 'data'), '--addr', '127.0.0.1:0', '--allow-private-urls', ...extraArgs];
  const proc = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  proc.stdout.on('data', (d) => (stdout += d));
  proc.stderr.on('data', (d) => (stderr += d));
  const exited = new Promise((res) => proc.on('exit', res));

  // The first start prints the owner's token on standard output once it listens.
  const deadline = Date.now() + 60_000;
  let addr;
  let token;
  while (!(addr && token)) {
    if (proc.exitCode !== null) throw new Error(`voiceapi serve exited ${proc.exitCode}:\n${stderr}`);
    if (Date.now() > deadline) throw new Error(`voiceapi serve did not start within a minute:\n${stderr}`);
    addr ??= stderr.match(/"msg":"listening","addr":"([^"]+)"/)?.[1];
    token ??= stdout.match(/api token:\s+(\S+)/)?.[1];
    await new Promise((r) => setTimeout(r, 50));
  }
  const url = `http://${addr}`;

  async function api(method, path, body, { token: as = token, headers = {} } = {}) {
    const res = await fetch(url + path, {
      method,
      headers: { Authorization: `Bearer ${as}`, ...(body ? { 'Content-Type': 'application/json' } : {}), ...headers },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    const json = text ? JSON.parse(text) : null;
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
    return json;
  }

  async function stop() {
    proc.kill('SIGTERM');
    await exited;
    rmSync(dir, { recursive: true, force: true });
  }

  return { url, ownerToken: token, api, stop, logs: () => stderr };
}
