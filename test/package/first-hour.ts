/**
 * The first hour, from a clone of this repository, README only (issue 35): `npm run
 * test:first-hour`. It packs this checkout (the package is not published: the tarball stands in
 * for `colyseus-lightning` on the README's install line), then does what README.md says and
 * nothing else: a new project by the Install lines, the README's four files, the Run lines (the
 * client bundled into its page, the server, the page served), and players in Chromium, who pay
 * and claim on the emulator's dev wallet page the server printed, as the README says:
 *
 * 1. alice and bob pay into the paid match, alice presses first and claims the pot;
 * 2. a refund round: both come back, alice pays, bob leaves before paying, alice claims her fee;
 * 3. carol comes after it, and gets a match she can pay into.
 *
 * It uses the README's own ports (2567, 8000). A minute or two, mostly npm; not part of
 * `npm test`. Prints each step; exits 1 with what a player saw when one does not come.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { CHROMIUM, CHROMIUM_ARGS } from '../support/needs.js';
import { pack } from './pack-checkout.js';
import { installAsTheReadmeSays, readme, runLines, sh, writeReadmeFiles } from './readme-steps.js';

const began = Date.now();
const step = (what: string) =>
  console.log(`[${((Date.now() - began) / 1000).toFixed(1).padStart(5)} s] ${what}`);

/** A README line that runs until stopped, in its own process group; resolves on `ready`. */
function background(
  line: string,
  cwd: string,
  ready: RegExp,
): Promise<{ proc: ChildProcess; seen: RegExpMatchArray }> {
  // stdin stays open: esbuild's server stops when its stdin closes.
  const proc = spawn('sh', ['-c', line], { cwd, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
  const child = { line, proc, output: '' };
  children.push(child);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`"${line}" said nothing ready`)), 60_000);
    const onData = (chunk: Buffer) => {
      child.output += chunk.toString();
      const seen = child.output.match(ready);
      if (seen) {
        clearTimeout(timer);
        resolve({ proc, seen });
      }
    };
    proc.stdout?.on('data', onData);
    proc.stderr?.on('data', onData);
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`"${line}" exited with ${code}`));
    });
  });
}
/** What the README's long-running lines started, and what each printed. */
const children: { line: string; proc: ChildProcess; output: string }[] = [];

/** Resolves once `port` on this machine takes a connection (within 30 s). */
async function accepting(port: number): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = connect(port, 'localhost', () => {
        socket.destroy();
        resolve(true);
      }).on('error', () => resolve(false));
      socket.setTimeout(1000, () => resolve(false));
      socket.unref();
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`nothing listens on ${port}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** What a player's page shows, for a failure's message. */
const shown = async (page: Page) => (await page.textContent('body'))?.trim() ?? '';

/** Waits until the page shows `text`; fails with what it shows instead. */
async function sees(page: Page, who: string, text: string, ms = 20_000): Promise<void> {
  try {
    await page.getByText(text).first().waitFor({ timeout: ms });
  } catch {
    throw new Error(`${who}'s page never showed "${text}"; it shows: "${await shown(page)}"`);
  }
}

/** `who` joined an open match: an empty pot, and the fee to pay (issue 35, finding 1). */
async function freshMatch(page: Page, who: string, after: string): Promise<void> {
  try {
    await sees(page, who, 'pot 0 sats, 0 of 2 paid', 10_000);
    await sees(page, who, 'Pay 100 sats', 10_000);
  } catch (err) {
    throw new Error(
      `issue 35 finding 1: ${after}, ${who} joined a room whose match had ended, and cannot pay into it. ${(err as Error).message}`,
    );
  }
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'lightning-first-hour-'));
  let browser: Browser | undefined;
  try {
    step('npm pack of this checkout (the package is not published)');
    const packing = pack(dir);
    packing.catch(() => {}); // awaited by the install's lines
    step("the README's Install lines, in a new folder (the first ones while npm packs)");
    const project = await installAsTheReadmeSays(
      join(dir, 'first-hour'),
      packing.then((p) => p.tarball),
    );
    step(`the README's four files in ${project}: ${writeReadmeFiles(project).join(', ')}`);
    const run = runLines(readme());
    step(`the README's Run lines:\n    ${run.build.join('\n    ')}`);
    await sh(run.build, project);

    step(`the server: ${run.server}`);
    const server = await background(run.server, project, /dev wallet: (\S+)/);
    const devWallet = server.seen[1] as string;
    // It prints the dev wallet before it listens (lightning.ready() in beforeListen).
    await accepting(Number(run.build.join('\n').match(/listen\((\d+)\)/)?.[1] ?? 2567));
    step(`the page: ${run.page}`);
    await background(run.page, project, /Local:\s+(\S+)/);

    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    const wallet = await browser.newPage();
    await wallet.goto(devWallet);
    /** The dev wallet page's button (Pay or Claim) on `who`'s open entry, pressed. */
    const walletPress = async (who: string, button: 'Pay' | 'Claim') => {
      const row = wallet.locator('#entries tr', {
        has: wallet.locator('td:first-child', { hasText: new RegExp(`^${who}$`) }),
      });
      const press = row.locator(`button[data-${button.toLowerCase()}]`).first();
      await press.waitFor({ timeout: 20_000 }); // the page refreshes itself every 3 s
      await press.click();
    };
    /** Waits until the dev wallet shows `who`'s reward of `amount` claimed. */
    const claimed = async (who: string, amount: string) => {
      await wallet
        .locator('#entries tr', {
          has: wallet.locator('td:first-child', { hasText: new RegExp(`^${who}$`) }),
        })
        .filter({ hasText: 'reward' })
        .filter({ hasText: amount })
        .filter({ hasText: 'completed' })
        .first()
        .waitFor({ timeout: 20_000 });
    };
    const open = async (name: string) => {
      const page = await browser?.newPage();
      if (!page) throw new Error('no browser');
      page.on('pageerror', (err) => console.log(`    ${name}'s page: ${err.message}`));
      await page.goto(`http://localhost:8000/?name=${name}`);
      return page;
    };
    /** `who` presses the page's Pay button (the QR code shows), then Pay on the dev wallet. */
    const pays = async (page: Page, who: string) => {
      await sees(page, who, 'Pay 100 sats');
      await page.getByText('Pay 100 sats').click();
      await walletPress(who, 'Pay');
    };

    step('round 1: alice and bob join the paid match and pay 100 sats each');
    const alice = await open('alice');
    const bob = await open('bob');
    await pays(alice, 'alice');
    await sees(bob, 'bob', '1 of 2 paid');
    await pays(bob, 'bob');
    for (const [page, who] of [
      [alice, 'alice'],
      [bob, 'bob'],
    ] as const) {
      await sees(page, who, 'pot 200 sats, 2 of 2 paid');
      await sees(page, who, 'Press!');
    }
    step('round 1: alice presses first and claims the pot minus the rake');
    await alice.getByText('Press!').click();
    await sees(alice, 'alice', 'Claim payout');
    await alice.getByText('Claim payout').click();
    await walletPress('alice', 'Claim');
    await claimed('alice', '180 sats');
    if (await bob.getByText('Claim').count()) throw new Error("bob's page shows a claim");

    step('round 2 (a refund): alice and bob come back, alice pays, bob leaves before paying');
    await alice.reload();
    await bob.reload();
    await freshMatch(alice, 'alice', 'after a settled match');
    await pays(alice, 'alice');
    await sees(bob, 'bob', '1 of 2 paid');
    await bob.close();
    await sees(alice, 'alice', 'Claim refund');
    await alice.getByText('Claim refund').click();
    await walletPress('alice', 'Claim');
    await claimed('alice', '100 sats');

    step('after it: carol joins, and can pay into a match that is open');
    const carol = await open('carol');
    await freshMatch(carol, 'carol', 'after a refunded match');
    await pays(carol, 'carol');
    await sees(carol, 'carol', '1 of 2 paid');
    step('done: every step the README names, and nothing else');
  } finally {
    await browser?.close();
    for (const { proc } of children) {
      // The whole group: sh and what it started (npx, tsx, node, esbuild).
      if (proc.pid !== undefined && proc.exitCode === null) process.kill(-proc.pid, 'SIGTERM');
    }
    rmSync(dir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (err: Error) => {
    for (const { line, output } of children) {
      const tail = output.trimEnd().split('\n').slice(-30).join('\n    | ');
      console.error(`\n  ${line} printed, last:\n    | ${tail}`);
    }
    console.error(`\nFAILED: ${err.message}`);
    process.exit(1);
  },
);
