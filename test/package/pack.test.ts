/**
 * The package as npm ships it: `npm pack` (whose `prepack` builds dist/), then the tarball
 * used from a scratch project in a temporary directory, by a game in ESM and one in CommonJS
 * (fixtures/game.mjs, game.cjs), each playing a paid round: a signed-in player joins, pays the
 * entry fee through the emulator's control, and claims the prize; and by a scripted player that
 * uses colyseus-lightning/client alone (fixtures/player.mjs, player.cjs: its entries through
 * watchLightning, paid and claimed through devWallet).
 *
 * Two forms. Always (no network): the tarball unpacked as node_modules/colyseus-lightning, its
 * dependencies and @colyseus/core linked from this checkout, the room checking its own token.
 * With TEST_PACK_INSTALL=1 (CI sets it): a project made by exactly the README's Install lines
 * (readme-steps.ts; the tarball in place of the unpublished name), its four files and its page
 * built by the README's Run lines, and a player signed in with @colyseus/auth's JWT; the games
 * and players then play there only (the CommonJS game on @colyseus/core alone, checking its own
 * token), not again in the linked project, all at once.
 */
import { execFile } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { MIN_NODE, nodeVersionProblem } from '../../src/node-version.js';
import { freePort } from '../support/ports.js';
import { type Packed, pack } from './pack-checkout.js';
import {
  installAsTheReadmeSays,
  readme,
  readmeFiles,
  root,
  runLines,
  sh,
  writeReadmeFiles,
} from './readme-steps.js';

const run = promisify(execFile);
const fixtures = join(root, 'test', 'package', 'fixtures');

/** Runs a fixture game in `project` and returns the JSON line it ends with. */
async function play(
  project: string,
  fixture: string,
  env: Record<string, string> = {},
  nodeArgs: string[] = [],
) {
  copyFileSync(join(fixtures, fixture), join(project, fixture));
  const port = String(await freePort());
  const { stdout } = await run(process.execPath, [...nodeArgs, fixture], {
    cwd: project,
    env: { ...process.env, ...env, PORT: port, PUBLIC_URL: `http://127.0.0.1:${port}` },
  });
  return JSON.parse(stdout.trim().split('\n').at(-1) ?? '') as Record<string, unknown>;
}

const aPaidRound = { playerId: 'alice', fee: 'completed', reward: 'completed' };
/** What fixtures/player.mjs and player.cjs print when the kit paid and claimed. */
const aScriptedPlayer = {
  fee: 'completed',
  feeAmount: '21 sats',
  reward: 'completed',
  rewardAmount: '50 sats',
  qr: true,
};

describe('package: the packed tarball', function () {
  this.timeout(120_000);
  let dir: string;
  let packed: Packed;
  let project: string;
  let installing: Promise<string> | undefined;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'lightning-pack-'));
    // From a clean checkout's state: whatever ships, prepack built it.
    const packing = pack(dir);
    // The registry install waits mostly on the network: its first lines run while npm packs,
    // the rest while the linked tests play.
    if (process.env.TEST_PACK_INSTALL) {
      installing = installAsTheReadmeSays(
        join(dir, 'installed'),
        packing.then((p) => p.tarball),
      );
      installing.catch(() => {}); // awaited, and so reported, by the installed tests' before
    }
    packed = await packing;
    // The tarball, unpacked where an install puts it; everything else from this checkout.
    project = join(dir, 'linked');
    const modules = join(project, 'node_modules');
    mkdirSync(modules, { recursive: true });
    await run('tar', ['-xzf', packed.tarball, '-C', modules]);
    renameSync(join(modules, 'package'), join(modules, 'colyseus-lightning'));
    const ours = realpathSync(join(root, 'node_modules'));
    for (const name of readdirSync(ours)) {
      if (name.startsWith('.')) continue;
      symlinkSync(join(ours, name), join(modules, name), 'dir');
    }
    writeFileSync(join(project, 'package.json'), '{ "private": true }\n');
  });

  after(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("ships dist/ (ESM, CommonJS, types, the stores' SQL), the bin, the README and the LICENSE, and no sources", () => {
    for (const file of [
      'dist/index.js',
      'dist/index.d.ts',
      'dist/cjs/index.js',
      'dist/cjs/package.json',
      'dist/api/index.js',
      'dist/emulator/index.js',
      'dist/emulator/cli.js',
      'dist/client/index.js',
      'dist/client/index.d.ts',
      'dist/cjs/client/index.js',
      'dist/ledger/sqlite-worker.js',
      'dist/cjs/ledger/sqlite-worker.js',
      // Read at run time by name (src/ledger/sql.ts), by each build beside its own modules.
      'dist/ledger/sql/sqlite/migrations/0001-layout.sql',
      'dist/ledger/sql/postgres/migrations/0001-layout.sql',
      'dist/cjs/ledger/sql/sqlite/migrations/0001-layout.sql',
      'dist/cjs/ledger/sql/postgres/migrations/0001-layout.sql',
      'dist/ledger/sql/sqlite/insert.sql',
      'dist/cjs/ledger/sql/postgres/claim.sql',
      'bin/colyseus-lightning.js',
      'README.md',
      'LICENSE',
      'package.json',
    ]) {
      expect(packed.files, file).to.include(file);
    }
    expect(packed.files.filter((f) => /^(src|test|examples|bench)\//.test(f))).to.deep.equal([]);
    const license = readFileSync(join(project, 'node_modules/colyseus-lightning/LICENSE'), 'utf8');
    expect(license)
      .to.match(/^MIT License/)
      .and.to.include('colyseus-lightning contributors');
  });

  it('ships source maps that carry their sources', () => {
    const maps = packed.files.filter((f) => f.endsWith('.map'));
    expect(maps.length).to.be.greaterThan(50);
    for (const file of maps) {
      const map = JSON.parse(
        readFileSync(join(project, 'node_modules/colyseus-lightning', file), 'utf8'),
      ) as { sources: string[]; sourcesContent?: (string | null)[] };
      expect(map.sourcesContent?.length, file).to.equal(map.sources.length);
      expect(
        map.sourcesContent?.every((s) => typeof s === 'string' && s.length > 0),
        file,
      ).to.equal(true);
    }
  });

  it('runs its command line with no TypeScript tooling around', async () => {
    const bin = join(project, 'node_modules/colyseus-lightning/bin/colyseus-lightning.js');
    const { stdout } = await run(process.execPath, [bin, 'emulator', '--help'], { cwd: project });
    expect(stdout).to.include('Usage: colyseus-lightning emulator');
  });

  // The four plays of the linked form; with TEST_PACK_INSTALL the installed form plays the same
  // fixtures on the registry's packages (one game on @colyseus/core alone), so they run once.
  const linkedPlays = process.env.TEST_PACK_INSTALL
    ? []
    : ['game.mjs', 'game.cjs', 'player.mjs', 'player.cjs'];
  for (const fixture of linkedPlays) {
    const module = fixture.endsWith('.mjs') ? 'esm' : 'cjs';
    const player = fixture.startsWith('player');
    it(
      player
        ? `has a scripted player pay and claim with colyseus-lightning/client, from ${module === 'esm' ? 'ESM' : 'CommonJS'}`
        : `plays a paid round from ${module === 'esm' ? 'an ESM' : 'a CommonJS'} game`,
      async () => {
        const played = await play(project, fixture);
        if (player) expect(played).to.deep.include({ ...aScriptedPlayer, module });
        else expect(played).to.include({ ...aPaidRound, module });
      },
    );
  }

  it('runs a file ledger on its worker thread, from ESM and from CommonJS', async () => {
    const moves = `
      const ledger = new SqliteLedger({ path: process.argv[1], worker: true });
      const created = await ledger.create({ kind: 'reward', roomId: 'r', playerId: 'p',
        amount: '1', unit: 'msats', description: 'packed' });
      const moved = await ledger.transition(created.id, 'creating', 'pending');
      await ledger.close();
      console.log(moved.status, moved.history.length);`;
    // Each on its own file, at once.
    const [esm, cjs] = await Promise.all([
      run(
        process.execPath,
        [
          '--input-type=module',
          '-e',
          `import { SqliteLedger } from 'colyseus-lightning';${moves}`,
          join(dir, 'esm.sqlite'),
        ],
        { cwd: project },
      ),
      run(
        process.execPath,
        [
          '-e',
          `const { SqliteLedger } = require('colyseus-lightning'); (async () => {${moves}})();`,
          join(dir, 'cjs.sqlite'),
        ],
        { cwd: project },
      ),
    ]);
    expect(esm.stdout.trim()).to.equal('pending 2');
    expect(cjs.stdout.trim()).to.equal('pending 2');
  });

  it('says which Node it needs, on an older Node, from every entry point and the bin', async function () {
    const old = process.env.OLD_NODE ?? '/usr/bin/node';
    const version = existsSync(old)
      ? (await run(old, ['-p', 'process.versions.node'])).stdout.trim()
      : null;
    if (version === null || nodeVersionProblem(version) === null) {
      console.log(`      (skipped: no Node older than ${MIN_NODE} at ${old}; set OLD_NODE)`);
      this.skip();
    }
    const needs = `colyseus-lightning needs Node ${MIN_NODE} or newer`;
    for (const entry of [
      'colyseus-lightning',
      'colyseus-lightning/api',
      'colyseus-lightning/emulator',
    ]) {
      for (const how of [
        `import('${entry}')`,
        `Promise.resolve().then(() => require('${entry}'))`,
      ]) {
        const { stdout } = await run(
          old,
          ['-e', `${how}.then(() => console.log('loaded'), (e) => console.log(e.message))`],
          { cwd: project },
        );
        expect(stdout, how).to.include(needs).and.include(`this is Node ${version}`);
      }
    }
    const bin = join(project, 'node_modules/colyseus-lightning/bin/colyseus-lightning.js');
    const failed = await run(old, [bin, 'emulator'], { cwd: project }).catch((e) => e);
    expect(failed.code).to.equal(1);
    expect(failed.stderr).to.include(needs);
  });

  describe("installed from the registry by the README's Install lines (TEST_PACK_INSTALL=1)", () => {
    const jwt = { COLYSEUS: 'colyseus', JWT_SECRET: 'a secret for the test only' };
    /** Each play, started in `before` at once (each on its own ports); each test awaits its own. */
    const plays = new Map<string, Promise<unknown>>();
    const played = <T>(name: string) => plays.get(name) as Promise<T>;

    before(async function () {
      if (!installing) {
        console.log(
          "      (skipped: set TEST_PACK_INSTALL=1 to install the tarball by the README's lines from the registry)",
        );
        this.skip();
      }
      const installed = await installing;
      // TypeScript as a user runs it: through the project's tsx (the README says npx tsx).
      const tsx = pathToFileURL(join(installed, 'node_modules/tsx/dist/loader.mjs')).href;
      // Three at a time: on two cores, more would only stretch each game's own deadlines.
      let free = 3;
      const waiting: (() => void)[] = [];
      const start = (name: string, playing: () => Promise<unknown>) => {
        const started = (async () => {
          if (free > 0) free--;
          else await new Promise<void>((resolve) => waiting.push(resolve));
          try {
            return await playing();
          } finally {
            // The lane passes to the next in line, or is free again.
            const next = waiting.shift();
            if (next) next();
            else free++;
          }
        })();
        started.catch(() => {}); // awaited, and so reported, by its test
        plays.set(name, started);
      };
      // The README's four files, where its Install lines left the reader.
      const files = writeReadmeFiles(installed);
      start('page', () => sh(runLines(readme()).build, installed));
      start('tsc', () => typeCheck(installed, files));
      start('readme', () => play(installed, 'readme-match.ts', jwt, ['--import', tsx]));
      start('guide', () => guideRound(installed, jwt, tsx));
      start('game.mjs', () => play(installed, 'game.mjs', jwt));
      start('game.cjs', () => play(installed, 'game.cjs'));
      for (const fixture of ['player.mjs', 'player.cjs']) {
        start(fixture, () => play(installed, fixture, jwt));
      }
      // Once every game is done with node_modules: a later install, as a developer adds a
      // package, with the README's .npmrc (where it was needed) still in force.
      const games = [...plays.values()];
      plays.set(
        'later',
        Promise.allSettled(games).then(() => sh(['npm install --no-audit --no-fund'], installed)),
      );
      plays.get('later')?.catch(() => {}); // awaited, and so reported, by its test
    });

    it("has the README's four files in order", () => {
      expect(readmeFiles(readme()).map((f) => f.path)).to.deep.equal([
        'lightning.ts',
        'rooms/Duel.ts',
        'app.config.ts',
        'client.ts',
      ]);
    });

    it("builds the README's client into its page by the README's Run lines (ESM, top-level await)", async () => {
      await played('page');
      const project = await (installing as Promise<string>);
      const html = readFileSync(join(project, 'public/index.html'), 'utf8');
      expect(html).to.match(/<script type="module" src="client\.js"><\/script>/);
      const bundle = readFileSync(join(project, 'public/client.js'), 'utf8');
      // The kit and the SDK are in it, and its top-level await kept (an ES module).
      expect(bundle)
        .to.include('watchLightning')
        .and.match(/^var \w+ = await fetch\(/m);
    });

    it("type-checks the README's four files in the ES module project its lines make", async () => {
      expect(await played<string>('tsc'), 'tsc').to.equal('');
    });

    it('plays a paid round from an ESM game whose player signs in with a JWT', async () => {
      expect(await played('game.mjs')).to.include({ ...aPaidRound, module: 'esm', auth: 'jwt' });
    });

    it("plays the README's paid match end to end", async () => {
      expect(await played('readme')).to.deep.equal({
        funded: 2,
        payout: 'completed',
        purpose: 'payout',
        amountMsat: '180000',
        pot: '200000',
        bobHoldsTheCode: false,
      });
    });

    it("plays a paid round on the guide's first room, copied as written", async () => {
      expect(await played('guide')).to.deep.equal({
        playerId: 'alice',
        fee: 'completed',
        paid: 'alice',
        reward: 'completed',
        anonymous: 'refused',
      });
    });

    it('has a scripted player pay and claim with colyseus-lightning/client, in ESM and CommonJS', async () => {
      for (const [fixture, module] of [
        ['player.mjs', 'esm'],
        ['player.cjs', 'cjs'],
      ] as const) {
        expect(await played(fixture), fixture).to.deep.include({
          ...aScriptedPlayer,
          module,
          auth: 'jwt',
        });
      }
    });

    it('plays a paid round from a CommonJS game on @colyseus/core alone, the room checking its own token', async () => {
      expect(await played('game.cjs')).to.include({ ...aPaidRound, module: 'cjs', auth: 'token' });
    });

    it('takes a later npm install in the project, wherever the README needed its .npmrc line', async () => {
      await played('later');
    });
  });
});

/**
 * tsc's output on `files` in `project` (this checkout's TypeScript), under the project's
 * package.json: the README makes it an ES module package, as the client's top-level await
 * needs (in a CommonJS package tsc refuses it, TS1309). With declarations, as a game built as
 * a library or in project references emits them: every type the rooms infer from the package
 * must be one it exports (TS2883).
 */
async function typeCheck(project: string, files: string[]): Promise<string> {
  writeFileSync(
    join(project, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2023',
        lib: ['ES2023', 'DOM'],
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        strict: true,
        skipLibCheck: true,
        declaration: true,
        emitDeclarationOnly: true,
        outDir: '.types',
        types: [],
      },
      include: files,
    }),
  );
  const tsc = join(root, 'node_modules/.bin/tsc');
  const compiled = await run(tsc, ['-p', project]).catch((e: { stdout?: string }) => e);
  return (compiled as { stdout?: string }).stdout ?? '';
}

/** The guide's first room, copied as written into its own folder of `project`, played once. */
async function guideRound(project: string, env: Record<string, string>, tsx: string) {
  const guide = readFileSync(join(root, 'docs/GUIDE.md'), 'utf8');
  const folder = join(project, 'guide');
  for (const file of ['lightning.ts', 'rooms/Arena.ts', 'app.config.ts']) {
    const block = guide.match(new RegExp(`\`\`\`ts\n// ${file}\n([\\s\\S]*?)\`\`\``))?.[1];
    if (typeof block !== 'string') throw new Error(`docs/GUIDE.md has no ${file} block`);
    mkdirSync(dirname(join(folder, file)), { recursive: true });
    writeFileSync(join(folder, file), block);
  }
  return play(folder, 'readme-round.ts', env, ['--import', tsx]);
}
