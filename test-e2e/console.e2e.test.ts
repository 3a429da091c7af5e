import { describe, expect, it } from 'vitest';
import { prepareConsoleTests, screenshot, signIn, unexpectedErrors, useConsoleSystem } from './support/browser.ts';
import type { ConsolePage } from './support/browser.ts';

/**
 * The browser console (`/console`) in a real browser: Debian's chromium
 * driven by playwright-core, against the whole system in one process. Every
 * test fails on an error in the browser's console. Screenshots of the main
 * pages go to .tmp/console-screenshots/.
 */

const ready = await prepareConsoleTests();
const GATED = '#script tool:sensitive_action{"what":"launch"};finish:done';

describe.skipIf(!ready.ok)('the browser console', () => {
  const consoleSystem = useConsoleSystem();
  const { page, caller: owner } = consoleSystem;

  it('redirects / to the console, whose sign-in page mints a dev token in one click on loopback', async () => {
    const { page: tab, errors } = await page();
    await tab.goto(`${consoleSystem.sys.baseUrl}/`);
    expect(new URL(tab.url()).pathname).toBe('/console/');
    await tab.getByLabel('Connection token').waitFor();
    await screenshot(tab, 'sign-in');
    await tab.getByRole('button', { name: 'Sign in with a dev token' }).click();
    await expect.poll(() => tab.getByLabel('Signed in as').textContent()).toContain('dev / dev / dev');
    expect(unexpectedErrors(errors)).toEqual([]);
  });

  it('starts a run from the console and watches it complete', async () => {
    const me = await owner('console-start');
    const { page: tab, errors } = await page();
    await signIn(tab, consoleSystem.sys.baseUrl, me.token, { path: '/runs' });
    await tab.getByLabel('Query').fill('#script stream:40/8;tool:wait{ms:300};finish:ok');
    await tab.getByRole('button', { name: 'Start run' }).click();
    await tab.waitForURL(/#\/runs\/[^/]+$/);
    const status = tab.getByTestId('run-status');
    await expect.poll(() => status.textContent(), { timeout: 30_000 }).toContain('complete');
    const timeline = tab.getByRole('list', { name: 'Events of the run' });
    await expect.poll(() => timeline.textContent()).toContain('task.completed');
    // The tool call is one entry: the arguments the model streamed, then how it ended.
    const call = timeline.locator('li[data-tool="wait"]');
    await expect.poll(() => call.getByTestId('tool-state').textContent()).toMatch(/^completed in \d+ ms/);
    expect(await call.getByLabel('Arguments of wait').textContent()).toBe('{"ms":300}');
    expect(await timeline.textContent()).toContain('llm.cost.recorded');
    await screenshot(tab, 'run');

    await tab.getByRole('link', { name: 'All runs' }).click();
    const completeCounter = tab.locator('.counters li[data-status="complete"] .count');
    await expect.poll(() => completeCounter.textContent()).toBe('1');
    await screenshot(tab, 'runs');
    expect(unexpectedErrors(errors)).toEqual([]);
  });

  it('shows a started run on a live runs list, its status following the stream', async () => {
    const me = await owner('console-live');
    const { page: tab, errors } = await page();
    await signIn(tab, consoleSystem.sys.baseUrl, me.token, { path: '/runs' });
    await tab.getByRole('table').waitFor();
    const started = await me.client.start({ query: '#script tool:wait{ms:300};finish:ok' });
    const row = tab.getByRole('row').filter({ hasText: started.task_id });
    await expect.poll(() => row.textContent(), { timeout: 30_000 }).toContain('complete');
    expect(unexpectedErrors(errors)).toEqual([]);
  });

  it('approves a paused run; a second window sees the item disappear', async () => {
    const me = await owner('console-approve');
    const first = await page();
    const second = await page();
    await signIn(first.page, consoleSystem.sys.baseUrl, me.token, { path: '/approvals' });
    await signIn(second.page, consoleSystem.sys.baseUrl, me.token, { path: '/approvals' });
    const outcome = me.client.runUntilDone({ query: GATED });
    const approveIn = (tab: ConsolePage) => tab.page.getByRole('button', { name: /^Approve sensitive_action/ });
    await approveIn(first).waitFor({ timeout: 30_000 });
    await approveIn(second).waitFor({ timeout: 30_000 });
    await screenshot(first.page, 'approvals');

    await approveIn(first).click();
    await first.page.getByLabel('Reason').fill('looks fine');
    await first.page.getByRole('dialog').getByRole('button', { name: 'Approve' }).click();
    await approveIn(second).waitFor({ state: 'detached', timeout: 30_000 });
    await approveIn(first).waitFor({ state: 'detached' });
    expect((await outcome).status).toBe('completed');
    expect(unexpectedErrors(first.errors)).toEqual([]);
    expect(unexpectedErrors(second.errors)).toEqual([]);
  });

  it('steers a live run: a pause shows as applied when its event arrives, then a hard cancel ends it', async () => {
    const me = await owner('console-steer');
    const { page: tab, errors } = await page();
    await signIn(tab, consoleSystem.sys.baseUrl, me.token);
    const started = await me.client.start({ query: '#script tool:wait{ms:20000};finish' });
    await tab.goto(`${consoleSystem.sys.baseUrl}/console/#/runs/${started.task_id}`);
    await expect.poll(() => tab.getByTestId('run-status').textContent(), { timeout: 30_000 }).toContain('running');
    await tab.getByRole('button', { name: 'Pause' }).click();
    const sent = tab.getByRole('list', { name: 'Sent controls' });
    await expect.poll(() => sent.textContent(), { timeout: 30_000 }).toContain('pause applied');
    await tab.getByRole('button', { name: 'Hard cancel' }).click();
    await tab.getByRole('dialog').getByRole('button', { name: 'Hard cancel' }).click();
    await expect.poll(() => tab.getByTestId('run-status').textContent(), { timeout: 30_000 }).toContain('cancelled');
    await screenshot(tab, 'run-steered');
    expect(unexpectedErrors(errors)).toEqual([]);
  });

  it('shows a scopeless token the 403 of a tenant-wide list', async () => {
    const me = await owner('console-noscope');
    const { page: tab, errors } = await page();
    await signIn(tab, consoleSystem.sys.baseUrl, me.token, { path: '/runs?scope=tenant' });
    const alert = tab.getByRole('alert').filter({ hasText: 'Cannot list runs' });
    // Read without waiting for the element (a locator's textContent() waits for it), so the poll's own deadline holds.
    const shown = async () => ((await alert.count()) > 0 ? await alert.first().textContent() : null);
    try {
      await expect.poll(shown, { timeout: 30_000 }).toContain('403 identity_scope_required');
    } catch (error) {
      // What the page showed instead, for the failure's message.
      const body = await tab
        .locator('body')
        .innerText({ timeout: 1_000 })
        .catch((e: unknown) => String(e));
      throw new Error(`${String(error)}\nat ${tab.url()}:\n${body}`, { cause: error });
    }
    await screenshot(tab, 'forbidden');
    expect(unexpectedErrors(errors, [403])).toEqual([]);
  });

  it('is usable in a narrow window', async () => {
    const me = await owner('console-narrow');
    const { page: tab, errors } = await page({ width: 390, height: 800 });
    await signIn(tab, consoleSystem.sys.baseUrl, me.token, { path: '/runs' });
    await tab.getByRole('table').waitFor();
    // Runs in the page: the DOM globals are the browser's (this program has no DOM lib).
    const overflow = await tab.evaluate('document.documentElement.scrollWidth - window.innerWidth');
    expect(overflow).toBeLessThanOrEqual(0);
    await screenshot(tab, 'runs-narrow');
    expect(unexpectedErrors(errors)).toEqual([]);
  });
});
