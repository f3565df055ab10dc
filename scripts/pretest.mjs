// `npm test`'s first step (npm runs `pretest` by itself): makes sure the machine has what the
// suites need beyond npm packages, redis-server, Chromium and PostgreSQL. Where one is missing on Debian
// (or Ubuntu) as root, it installs it with apt-get, saying so in one line; elsewhere it says in
// one line what is missing and the command that installs it, and the suites that need it skip
// (test/support/needs.ts), except with CI set, where they fail. It never stops `npm test`
// itself. LIGHTNING_TEST_NO_APT=1 turns the installing off.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';

const chromium = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const redis = process.env.REDIS_SERVER ?? 'redis-server';
const runs = (command, args) => spawnSync(command, args, { stdio: 'ignore' }).status === 0;

const missing = [];
if (!runs(redis, ['--version'])) missing.push({ tool: 'redis-server', pkg: 'redis-server' });
if (!existsSync(chromium)) missing.push({ tool: 'chromium', pkg: 'chromium' });
// PostgreSQL: Debian keeps its binaries in /usr/lib/postgresql/<n>/bin (or PG_BIN names them).
const postgres =
  (process.env.PG_BIN && existsSync(`${process.env.PG_BIN}/postgres`)) ||
  (existsSync('/usr/lib/postgresql') &&
    readdirSync('/usr/lib/postgresql').some((v) =>
      existsSync(`/usr/lib/postgresql/${v}/bin/postgres`),
    )) ||
  runs('postgres', ['--version']);
if (!postgres) missing.push({ tool: 'postgresql', pkg: 'postgresql' });
if (missing.length === 0) process.exit(0);

const pkgs = missing.map((m) => m.pkg);
const canInstall =
  process.platform === 'linux' &&
  process.getuid?.() === 0 &&
  existsSync('/etc/debian_version') &&
  runs('apt-get', ['--version']) &&
  !process.env.LIGHTNING_TEST_NO_APT;

if (canInstall) {
  console.log(
    `pretest: installing ${pkgs.join(' and ')} with apt-get (the Redis and browser suites need them)`,
  );
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const apt = (args) => spawnSync('apt-get', args, { stdio: ['ignore', 'ignore', 'inherit'], env });
  const ok =
    apt(['update', '-qq']).status === 0 && apt(['install', '-y', '-qq', ...pkgs]).status === 0;
  if (ok) process.exit(0);
  console.warn(`pretest: apt-get could not install ${pkgs.join(' and ')}`);
}
for (const { tool, pkg } of missing) {
  console.warn(
    `pretest: ${tool} not found: the suites that need it will be skipped${process.env.CI ? ' (CI: they will fail)' : ''}. Install it with: sudo apt-get install -y ${pkg}`,
  );
}
