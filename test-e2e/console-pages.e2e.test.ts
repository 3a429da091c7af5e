import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { prepareConsoleTests, screenshot, signIn, unexpectedErrors, useConsoleSystem } from './support/browser.ts';

/**
 * The console's sessions, artifacts, memory, agent configuration,
 * governance and fleet pages in a real browser (chromium via playwright-core)
 * against the whole system in one process: data made through the API shows
 * on the page, and each page's main action is done for real. Every test fails
 * on an unexpected error in the browser's console. Screenshots go to
 * .tmp/console-screenshots/.
 */

const ready = await prepareConsoleTests();
const SCRIPTED = { llm_provider: { provider_name: 'scripted', provider: 'scripted' as const } };

describe.skipIf(!ready.ok)('the console pages', () => {
  const consoleSystem = useConsoleSystem();
  const { page, caller } = consoleSystem;

  async function refusal(call: Promise<unknown>): Promise<{ status?: number; code?: string }> {
    try {
      await call;
    } catch (error) {
      return error as { status?: number; code?: string };
    }
    throw new Error('the call was not refused');
  }

  it('lists sessions, inspects one with its state history, and erases it through a typed confirmation', async () => {
    const me = await caller('pages-sessions');
    const other = `${me.identity.session}-b`;
    const outcome = await me.client.runUntilDone({ query: '#script finish:ok' }, { session: other });
    expect(outcome.status).toBe('completed');
    const { page: tab, errors } = await page();
    await signIn(tab, consoleSystem.sys.baseUrl, me.token, { path: '/sessions' });
    const link = tab.getByRole('link', { name: other, exact: true });
    await link.waitFor();
    await screenshot(tab, 'sessions');

    await link.click();
    await tab.getByRole('heading', { name: `Session ${other}` }).waitFor();
    const complete = tab.locator('.counters li[data-status="complete"] .count');
    await expect.poll(() => complete.textContent()).toBe('1');
    const history = tab.getByRole('table', { name: 'Run states and turns, oldest first' });
    await expect.poll(() => history.textContent()).toContain(outcome.taskId);
    expect(await history.textContent()).toContain('complete');
    await screenshot(tab, 'session');

    await tab.getByRole('button', { name: 'Erase session' }).click();
    const dialog = tab.getByRole('dialog');
    await dialog.getByLabel(/^Type the session id/).fill('not-it');
    await dialog.getByRole('button', { name: 'Erase' }).click();
    await expect.poll(() => dialog.getByRole('alert').textContent()).toContain('exactly');
    await dialog.getByLabel(/^Type the session id/).fill(other);
    await dialog.getByRole('button', { name: 'Erase' }).click();
    const erased = tab.getByRole('status').filter({ hasText: 'was erased' });
    await expect.poll(() => erased.textContent()).toContain('Runs deleted1');
    await screenshot(tab, 'session-erased');
    expect(await refusal(me.client.start({ query: '#script finish:ok' }, { session: other }))).toMatchObject({
      code: 'session_erased',
    });
    expect(unexpectedErrors(errors)).toEqual([]);
  });

  it('uploads an artifact from the page, lists one made through the API, and downloads it', async () => {
    const me = await caller('pages-artifacts');
    const made = await me.client.artifacts.put({
      mime_type: 'text/plain',
      name: 'from-api.txt',
      content_base64: Buffer.from('made through the API').toString('base64'),
    });
    const { page: tab, errors } = await page();
    await signIn(tab, consoleSystem.sys.baseUrl, me.token, { path: '/artifacts' });
    await tab.getByRole('cell', { name: 'from-api.txt', exact: true }).waitFor();

    await tab
      .getByLabel('File', { exact: true })
      .setInputFiles({ name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('uploaded from the console\n') });
    await tab.getByRole('button', { name: 'Upload', exact: true }).click();
    await expect.poll(() => tab.getByRole('status').filter({ hasText: 'Stored' }).textContent()).toContain('notes.txt');
    await tab.getByRole('cell', { name: 'notes.txt', exact: true }).waitFor();
    const listed = await me.client.artifacts.list({});
    expect(listed.items.map((a) => a.name).sort()).toEqual(['from-api.txt', 'notes.txt']);
    await screenshot(tab, 'artifacts');

    for (const [name, text] of [
      ['notes.txt', 'uploaded from the console\n'],
      ['from-api.txt', 'made through the API'],
    ] as const) {
      const downloading = tab.waitForEvent('download');
      await tab.getByRole('button', { name: `Download ${name}` }).click();
      const download = await downloading;
      expect(download.suggestedFilename()).toBe(name);
      expect(await readFile(await download.path(), 'utf8')).toBe(text);
    }
    expect(made.artifact.size_bytes).toBe(20);
    expect(unexpectedErrors(errors)).toEqual([]);
  });

  it('shows memory items made through the API and stores one from the page (admin)', async () => {
    const admin = await caller('pages-memory', ['admin']);
    await admin.client.memory.put({ tier: 'session', key: 'pref.colour', value: { colour: 'teal' } });
    const { page: tab, errors } = await page();
    await signIn(tab, consoleSystem.sys.baseUrl, admin.token, { path: '/memory' });
    await tab.getByRole('cell', { name: 'pref.colour', exact: true }).waitFor();

    await tab.getByLabel('Tier', { exact: true }).last().selectOption('user');
    await tab.getByLabel('Key', { exact: true }).fill('pref.language');
    await tab.getByLabel(/^Value/).fill('{"language":"en"}');
    await tab.getByRole('button', { name: 'Store', exact: true }).click();
    await expect
      .poll(() => tab.getByRole('status').filter({ hasText: 'Stored' }).textContent())
      .toContain('pref.language');
    await tab.getByRole('cell', { name: 'pref.language', exact: true }).waitFor();
    const { item } = await admin.client.memory.get({ tier: 'user', key: 'pref.language' });
    expect(item.value).toEqual({ language: 'en' });
    await screenshot(tab, 'memory');
    expect(unexpectedErrors(errors)).toEqual([]);
  });

  it('shows the refusal of memory.put to a caller without admin', async () => {
    const me = await caller('pages-memory-403');
    const { page: tab, errors } = await page();
    await signIn(tab, consoleSystem.sys.baseUrl, me.token, { path: '/memory' });
    await tab.getByLabel('Key', { exact: true }).fill('k');
    await tab.getByLabel(/^Value/).fill('"v"');
    await tab.getByRole('button', { name: 'Store', exact: true }).click();
    await expect.poll(() => tab.getByRole('alert').filter({ hasText: 'Store refused' }).textContent()).toContain('403');
    expect(unexpectedErrors(errors, [403])).toEqual([]);
  });

  it('diffs two agent configuration revisions and rolls back to the first', async () => {
    const admin = await caller('pages-config', ['admin']);
    const agent = 'console-config';
    const first = await admin.client.agent_config.set_revision({
      agent_id: agent,
      config: { ...SCRIPTED, llm_params: { temperature: 0.2 } },
      message: 'cool',
    });
    const second = await admin.client.agent_config.set_revision({
      agent_id: agent,
      config: { ...SCRIPTED, llm_params: { temperature: 0.7, max_tokens: 300 } },
      parent_revision_id: first.revision.revision_id,
      message: 'warmer',
    });
    const { page: tab, errors } = await page();
    await signIn(tab, consoleSystem.sys.baseUrl, admin.token, { path: `/agent-config?agent=${agent}` });
    const diff = tab.getByRole('list', {
      name: `Changes from ${first.revision.revision_id} to ${second.revision.revision_id}`,
    });
    await expect
      .poll(() => diff.locator('[data-op="add"]').allTextContents())
      .toEqual([expect.stringContaining('"max_tokens": 300'), expect.stringContaining('"temperature": 0.7')]);
    expect(await diff.locator('[data-op="remove"]').allTextContents()).toEqual([
      expect.stringContaining('"temperature": 0.2'),
    ]);
    await screenshot(tab, 'agent-config');

    await tab.getByRole('button', { name: `Roll back to ${first.revision.revision_id}` }).click();
    await tab.getByRole('dialog').getByRole('button', { name: 'Roll back' }).click();
    await expect
      .poll(() => tab.getByRole('status').filter({ hasText: 'Rolled back' }).textContent())
      .toContain(first.revision.revision_id);
    const { revision: head } = await admin.client.agent_config.get({ agent_id: agent });
    expect(head.config.llm_params).toEqual({ temperature: 0.2 });
    const rolled = tab.getByRole('list', {
      name: `Changes from ${second.revision.revision_id} to ${head.revision_id}`,
    });
    await expect
      .poll(() => rolled.locator('[data-op="add"]').allTextContents())
      .toEqual([expect.stringContaining('"temperature": 0.2')]);
    await screenshot(tab, 'agent-config-rolled-back');
    expect(unexpectedErrors(errors)).toEqual([]);
  });

  it("shows the governance posture, another tenant's to console:fleet and a 403 to a caller without it", async () => {
    const watcher = await caller('pages-governance', ['console:fleet']);
    const someone = await caller('pages-governance-other');
    const { page: tab, errors } = await page();
    await signIn(tab, consoleSystem.sys.baseUrl, watcher.token, { path: '/governance' });
    await tab.getByText('Default tier').waitFor();
    await tab.getByLabel(/^Tenant/).fill(someone.identity.tenant);
    await tab.getByRole('button', { name: 'Show' }).click();
    const facts = tab.getByRole('definition').first();
    await expect.poll(() => facts.textContent()).toBe(someone.identity.tenant);
    await screenshot(tab, 'governance');

    const refused = await page();
    await signIn(refused.page, consoleSystem.sys.baseUrl, someone.token, {
      path: `/governance?tenant=${watcher.identity.tenant}`,
    });
    const alert = refused.page.getByRole('alert').filter({ hasText: 'Cannot read the governance posture' });
    await expect.poll(() => alert.textContent()).toContain('403 scope_mismatch');
    expect(unexpectedErrors(errors)).toEqual([]);
    expect(unexpectedErrors(refused.errors, [403])).toEqual([]);
  });

  it('shows console:fleet the agents of every tenant with no control, and refuses control through the API', async () => {
    const adminA = await caller('pages-fleet-a', ['admin']);
    const adminB = await caller('pages-fleet-b', ['admin']);
    await adminA.client.agent_config.set_revision({ agent_id: 'fleet-a', config: SCRIPTED });
    await adminB.client.agent_config.set_revision({ agent_id: 'fleet-b', config: SCRIPTED });
    const watcher = await caller('pages-fleet-watch', ['console:fleet'], {
      ...adminA.identity,
      user: `${adminA.identity.user}-w`,
    });
    const { page: tab, errors } = await page();
    await signIn(tab, consoleSystem.sys.baseUrl, watcher.token, { path: '/fleet' });
    // agents.list with filter.all_tenants, narrowed by agent id so the page holds this test's agents.
    await tab.getByLabel('Agent id contains').fill('fleet-');
    const everyTenant = tab.getByRole('table', { name: 'Agents of every tenant' });
    const agentRow = (tenant: string, agent: string) =>
      everyTenant
        .getByRole('row')
        .filter({ has: tab.getByRole('cell', { name: tenant, exact: true }) })
        .filter({ has: tab.getByRole('cell', { name: agent, exact: true }) });
    await agentRow(adminA.identity.tenant, 'fleet-a').waitFor();
    await agentRow(adminB.identity.tenant, 'fleet-b').waitFor();
    // Run counts of another tenant's agent come with the list for console:fleet.
    expect(await agentRow(adminB.identity.tenant, 'fleet-b').textContent()).toContain('0 running, 0 queued');
    await tab
      .getByRole('table', { name: `Agents of tenant ${adminA.identity.tenant}` })
      .getByRole('cell', { name: 'fleet-a', exact: true })
      .waitFor();
    expect(await tab.getByRole('button', { name: /^(Drain|Pause|Restart|Force stop|Deregister) / }).count()).toBe(0);
    await screenshot(tab, 'fleet-readonly');
    expect(await refusal(watcher.client.agents.drain({ agent_id: 'fleet-a' }))).toMatchObject({ status: 403 });
    expect((await adminA.client.agents.get({ agent_id: 'fleet-a' })).agent.state).toBe('running');
    expect(unexpectedErrors(errors)).toEqual([]);
  });

  it('lets an admin drain an agent through a confirmation and shows its new state', async () => {
    const admin = await caller('pages-fleet-admin', ['admin']);
    await admin.client.agent_config.set_revision({ agent_id: 'to-drain', config: SCRIPTED });
    const { page: tab, errors } = await page();
    await signIn(tab, consoleSystem.sys.baseUrl, admin.token, { path: '/fleet' });
    await tab.getByRole('button', { name: 'Drain to-drain' }).click();
    const dialog = tab.getByRole('dialog');
    await dialog.getByLabel('Reason (optional)').fill('maintenance');
    await dialog.getByRole('button', { name: 'Drain' }).click();
    await expect
      .poll(() => tab.getByRole('status').filter({ hasText: 'drain of to-drain' }).textContent())
      .toContain('now draining');
    const row = tab
      .getByRole('table', { name: `Agents of tenant ${admin.identity.tenant}` })
      .getByRole('row')
      .filter({ has: tab.getByRole('cell', { name: 'to-drain', exact: true }) });
    await expect.poll(() => row.textContent()).toContain('draining');
    expect((await admin.client.agents.get({ agent_id: 'to-drain' })).agent.state).toBe('draining');
    await screenshot(tab, 'fleet-admin');
    expect(unexpectedErrors(errors)).toEqual([]);
  });

  it('keeps every page within a narrow window', async () => {
    const admin = await caller('pages-narrow', ['admin', 'console:fleet']);
    await admin.client.runUntilDone({ query: '#script finish:ok' });
    const { page: tab, errors } = await page({ width: 390, height: 800 });
    await signIn(tab, consoleSystem.sys.baseUrl, admin.token);
    for (const path of [
      '/sessions',
      `/sessions/${admin.identity.session}`,
      '/artifacts',
      '/memory',
      '/agent-config?agent=default',
      '/governance',
      '/fleet',
    ]) {
      await tab.goto(`${consoleSystem.sys.baseUrl}/console/#${path}`);
      await tab.getByRole('heading', { level: 1 }).waitFor();
      await tab.waitForLoadState('networkidle');
      // Runs in the page: the DOM globals are the browser's (this program has no DOM lib).
      const overflow = await tab.evaluate('document.documentElement.scrollWidth - window.innerWidth');
      expect({ path, overflow }).toEqual({ path, overflow: 0 });
    }
    await screenshot(tab, 'fleet-narrow');
    expect(unexpectedErrors(errors)).toEqual([]);
  });
});
