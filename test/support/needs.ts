/**
 * What some suites need from the machine (redis-server, Chromium), said once and loudly. On a
 * machine without them, the suites are skipped with one line naming the install command
 * (scripts/pretest.mjs installs them by itself where it can: Debian, as root); with `CI` set,
 * a missing tool fails the suite instead, so CI never passes by skipping.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { postgresAvailable } from './postgres.js';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const REDIS_SERVER = process.env.REDIS_SERVER ?? 'redis-server';

/** Chromium flags for a headless run in a container, with no traffic beyond the page's. */
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

const said = new Set<string>();

function need(ctx: Mocha.Context, tool: string, found: boolean, install: string): void {
  if (found) return;
  const variable = { chromium: 'CHROMIUM_PATH', 'redis-server': 'REDIS_SERVER' }[tool] ?? 'PG_BIN';
  const line = `${tool} not found: the suites that need it are skipped (first: ${ctx.test?.parent?.fullTitle() ?? 'a suite'}). Install it with: ${install} (or set ${variable})`;
  if (process.env.CI)
    throw new Error(`${line.replace(' skipped', ' cannot run')}; CI must not skip it`);
  if (!said.has(tool)) console.warn(`\n  !! ${line}\n`);
  said.add(tool);
  ctx.skip();
}

/** Skips the suite (or fails it under CI) when Chromium is missing. Call in `before`. */
export function needChromium(ctx: Mocha.Context): void {
  need(ctx, 'chromium', existsSync(CHROMIUM), 'sudo apt-get install -y chromium');
}

/** Skips the suite (or fails it under CI) when redis-server is missing. Call in `before`. */
export function needRedis(ctx: Mocha.Context): void {
  const found = spawnSync(REDIS_SERVER, ['--version'], { stdio: 'ignore' }).status === 0;
  need(ctx, 'redis-server', found, 'sudo apt-get install -y redis-server');
}

/** Skips the suite (or fails it under CI) when PostgreSQL's binaries are missing. Call in `before`. */
export function needPostgres(ctx: Mocha.Context): void {
  need(ctx, 'postgresql', postgresAvailable(), 'sudo apt-get install -y postgresql');
}
