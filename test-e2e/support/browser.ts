import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll } from 'vitest';
import { chromium } from 'playwright-core';
import type { Browser, BrowserContext, ConsoleMessage, Page } from 'playwright-core';
import type { ArsClient } from '@ars/client';
import { ensureConsoleBuilt } from '@ars/cli';
import { mintToken, startTestSystem, uniqueIdentity } from '@ars/testkit';
import type { TestIdentity, TestSystem } from '@ars/testkit';

/**
 * Browser tests of the console: Debian's chromium (`/usr/bin/chromium`)
 * driven by playwright-core (never `playwright install`). Reused by every
 * console e2e test file.
 */

export const CHROMIUM_PATH = '/usr/bin/chromium';
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** Where {@link screenshot} writes (git-ignored). */
export const SCREENSHOT_DIR = join(ROOT, '.tmp', 'console-screenshots');

/** Serialises the test workers' apt-get runs (see {@link apt}). */
const APT_LOCK = join(tmpdir(), 'ars-console-tests-apt.lock');

/** Whether the browser tests can run, and why not. */
export type BrowserAvailability = { readonly ok: true } | { readonly ok: false; readonly reason: string };

/**
 * Runs apt-get, one at a time on this machine: vitest runs the console test
 * files in parallel workers, and a second apt-get beside a running one fails
 * on dpkg's lock (one file then skipped its tests). The second waits, then
 * finds chromium installed.
 */
function apt(args: readonly string[]): boolean {
  const result = spawnSync('flock', ['--wait', '900', APT_LOCK, 'apt-get', '-o', 'DPkg::Lock::Timeout=600', ...args], {
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    stdio: ['ignore', 'ignore', 'pipe'],
    encoding: 'utf8',
  });
  return result.status === 0;
}

/**
 * Makes sure Debian's chromium is there: present already, or installed with
 * apt-get when running as root (`apt-get update` first when the package is
 * not known yet). Otherwise says why the browser tests are skipped.
 */
export function ensureChromium(): BrowserAvailability {
  if (existsSync(CHROMIUM_PATH)) return { ok: true };
  if (process.getuid?.() !== 0) {
    return {
      ok: false,
      reason: `${CHROMIUM_PATH} is missing and this is not root: run \`apt-get install -y chromium\``,
    };
  }
  const install = ['install', '-y', '--no-install-recommends', 'chromium'];
  if (!apt(install) && !(apt(['update']) && apt(install))) {
    return { ok: false, reason: 'apt-get install -y chromium failed' };
  }
  return existsSync(CHROMIUM_PATH)
    ? { ok: true }
    : { ok: false, reason: `chromium installed but ${CHROMIUM_PATH} is missing` };
}

/**
 * Everything a console browser test needs before it starts: chromium and a
 * fresh console build. When something is missing, writes a loud line to
 * stderr and returns it: use it with `describe.skipIf(!ready.ok)`.
 */
export async function prepareConsoleTests(): Promise<BrowserAvailability> {
  const browser = ensureChromium();
  if (!browser.ok) {
    process.stderr.write(`\n!!! SKIPPING the console browser tests: ${browser.reason}\n\n`);
    return browser;
  }
  const built = await ensureConsoleBuilt(ROOT);
  if (built.status === 'failed') throw new Error(`the console's build failed:\n${built.output}`);
  if (built.status === 'absent') {
    process.stderr.write(`\n!!! SKIPPING the console browser tests: ${built.reason}\n\n`);
    return { ok: false, reason: built.reason };
  }
  return { ok: true };
}

/** Launches headless chromium with the flags this machine needs (no network of its own, no sandbox as root). */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** A page plus the errors its browser console and scripts reported. */
export interface ConsolePage {
  readonly page: Page;
  readonly context: BrowserContext;
  /** Console messages of type error, uncaught page errors, failed requests of the app's own assets. */
  readonly errors: string[];
  close(): Promise<void>;
}

/**
 * Opens a page in its own context (own storage: a separate "window" of a
 * separate tab) that records every browser console error. `viewport` for
 * narrow-window checks.
 */
export async function openPage(
  browser: Browser,
  options: { readonly viewport?: { width: number; height: number } } = {},
): Promise<ConsolePage> {
  const context = await browser.newContext({ viewport: options.viewport ?? { width: 1280, height: 900 } });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('console', (message: ConsoleMessage) => {
    if (message.type() === 'error') errors.push(`console: ${message.text()}`);
  });
  page.on('pageerror', (error) => errors.push(`pageerror: ${error.message}`));
  return { page, context, errors, close: () => context.close() };
}

/**
 * Errors that are the product working as designed: the browser logs every
 * non-2xx fetch ("Failed to load resource: … 403"), and a page that shows a
 * refusal on purpose causes one. Pass the statuses a test provoked.
 */
export function unexpectedErrors(errors: readonly string[], expectedStatuses: readonly number[] = []): string[] {
  return errors.filter(
    (line) => !expectedStatuses.some((status) => line.includes(`the server responded with a status of ${status}`)),
  );
}

/** Saves a full-page screenshot as `.tmp/console-screenshots/<name>.png`; returns its path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  await mkdir(SCREENSHOT_DIR, { recursive: true });
  const path = join(SCREENSHOT_DIR, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}

/** Opens the console at `baseUrl` and signs in by pasting `token` (and a session, if given); lands on `path`. */
export async function signIn(
  page: Page,
  baseUrl: string,
  token: string,
  options: { readonly session?: string; readonly path?: string } = {},
): Promise<void> {
  await page.goto(`${baseUrl}/console/`);
  await page.getByLabel('Connection token').fill(token);
  if (options.session !== undefined) await page.getByLabel(/^Session/).fill(options.session);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
  if (options.path !== undefined) await page.goto(`${baseUrl}/console/#${options.path}`);
}

/** A caller of the API with its own token and client. */
export interface ConsoleCaller {
  readonly identity: TestIdentity;
  readonly token: string;
  readonly client: ArsClient;
}

/** What {@link useConsoleSystem} gives a describe block. */
export interface ConsoleSystem {
  /** The system under test (set once the block's beforeAll has run). */
  readonly sys: TestSystem;
  /** A new page in its own browser context, closed after the block. */
  page(viewport?: { width: number; height: number }): Promise<ConsolePage>;
  /** A caller with a fresh identity (or `base`) and a token carrying `scopes`. */
  caller(prefix: string, scopes?: readonly string[], base?: TestIdentity): Promise<ConsoleCaller>;
}

/**
 * The setup every console test file shares, called inside its describe
 * block: the whole system in one process and a browser for the block,
 * pages that are closed after it.
 */
export function useConsoleSystem(): ConsoleSystem {
  let sys: TestSystem | undefined;
  let browser: Browser | undefined;
  const opened: ConsolePage[] = [];

  beforeAll(async () => {
    sys = await startTestSystem({ mode: 'one-process' });
    browser = await launchBrowser();
  });

  afterAll(async () => {
    for (const tab of opened) await tab.close().catch(() => undefined);
    await browser?.close();
    await sys?.stop();
  });

  const started = (): { sys: TestSystem; browser: Browser } => {
    if (sys === undefined || browser === undefined) throw new Error('the console system is not started yet');
    return { sys, browser };
  };

  return {
    get sys() {
      return started().sys;
    },
    async page(viewport) {
      const opening = await openPage(started().browser, viewport === undefined ? {} : { viewport });
      opened.push(opening);
      return opening;
    },
    async caller(prefix, scopes = [], base) {
      const { sys: system } = started();
      const identity = base ?? uniqueIdentity(prefix);
      const token = await mintToken(system.baseUrl, { ...identity, scopes });
      return { identity, token, client: system.client({ token }) };
    },
  };
}
