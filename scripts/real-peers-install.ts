/**
 * Installs the real ACP peers (the private package in spec/real-peers/) when they are missing or
 * were installed from another lockfile: `npm ci` there, then a stamp holding the lockfile's hash.
 * `npm run test:real-peers` runs it first; with a fresh install it does nothing and prints nothing.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** The nested package: its package.json, package-lock.json and (once installed) node_modules/. */
export const REAL_PEERS_PACKAGE = resolve(__dirname, '..', 'spec', 'real-peers');

const LOCKFILE = join(REAL_PEERS_PACKAGE, 'package-lock.json');
/** Written after a successful `npm ci`; `npm ci` removes node_modules/ first, stamp included. */
const STAMP = join(REAL_PEERS_PACKAGE, 'node_modules', '.acp-wire-lockfile-sha256');

/** The SHA-256 of the nested package's lockfile, hex. */
function lockfileHash(): string {
  return createHash('sha256').update(readFileSync(LOCKFILE)).digest('hex');
}

/** Whether node_modules/ was installed from the lockfile as it is now. */
export function isInstalled(): boolean {
  return existsSync(STAMP) && readFileSync(STAMP, 'utf8').trim() === lockfileHash();
}

/**
 * Runs `npm ci` in the nested package unless {@link isInstalled}.
 *
 * @throws Error if `npm ci` fails (its output has gone to this process's stdout and stderr)
 */
export function installRealPeers(): void {
  if (isInstalled()) return;
  console.log(`Installing the real peers into ${REAL_PEERS_PACKAGE}/node_modules (npm ci, once per lockfile change)…`);
  // --prefix: under `npm run`, npm_config_* variables of the root project are in the environment.
  const result = spawnSync('npm', ['ci', '--prefix', REAL_PEERS_PACKAGE, '--no-audit', '--no-fund'], {
    cwd: REAL_PEERS_PACKAGE,
    stdio: 'inherit',
  });
  if (result.status !== 0) throw new Error(`npm ci in ${REAL_PEERS_PACKAGE} failed (${result.error?.message ?? `exit ${result.status}`})`);
  writeFileSync(STAMP, `${lockfileHash()}\n`);
}

if (require.main === module) installRealPeers();
