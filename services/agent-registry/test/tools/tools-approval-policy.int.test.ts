import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ToolSetApprovalPolicyResponse } from '@ars/contracts';
import type { Tool } from '@ars/contracts';
import { storedEvents } from '@ars/service-kit/testing';
import { hostTool, startToolsHarness } from './helpers/tools-harness.ts';
import type { ToolsHarness } from './helpers/tools-harness.ts';

const ALWAYS = { mode: 'always', on_timeout: 'reject' };
const TIMED = { mode: 'always', timeout_seconds: 300, on_timeout: 'approve' };
const NEVER = { mode: 'never', on_timeout: 'reject' };

describe('tools.set_approval_policy', () => {
  let h: ToolsHarness;

  beforeAll(async () => {
    h = await startToolsHarness('approval');
  });

  afterAll(async () => {
    await h?.stop();
  });

  const set = (who: ReturnType<ToolsHarness['caller']>, name: string, policy: Record<string, unknown>) =>
    h.call<{ tool: Tool }>('tools.set_approval_policy', { name, policy }, who);

  it("sets a built-in tool's policy for the tenant and answers the tool with it", async () => {
    const admin = h.caller(['admin']);
    const answer = await set(admin, 'echo', TIMED);
    expect(ToolSetApprovalPolicyResponse.safeParse(answer).success).toBe(true);
    expect(answer.tool).toMatchObject({ name: 'echo', source: 'builtin', approval_policy: TIMED });
    expect(await h.call<Tool>('tools.get', { name: 'echo' }, h.caller([], admin.tenant))).toMatchObject({
      approval_policy: TIMED,
    });
  });

  it('fills in on_timeout when left out', async () => {
    const admin = h.caller(['admin']);
    const answer = await set(admin, 'wait', { mode: 'always' });
    expect(answer.tool.approval_policy).toEqual(ALWAYS);
  });

  it('is idempotent: the same policy again answers the same tool', async () => {
    const admin = h.caller(['admin']);
    const first = await set(admin, 'memory_write', ALWAYS);
    expect(await set(admin, 'memory_write', ALWAYS)).toEqual(first);
  });

  it("overrides an MCP connection's policy, and lifts a default one", async () => {
    const admin = h.caller(['admin']);
    h.setAgents(admin.tenant, [
      {
        agent_id: 'helper',
        tools: [hostTool('fs', 'write_file', { approval_policy: ALWAYS as never })],
        unavailable_servers: [],
      },
    ]);
    expect((await set(admin, 'fs__write_file', NEVER)).tool).toMatchObject({ source: 'fs', approval_policy: NEVER });
    expect((await set(admin, 'sensitive_action', NEVER)).tool.approval_policy).toEqual(NEVER);
    const page = await h.call<{ items: Tool[] }>('tools.list', { filter: { text: 'write_file' } }, admin);
    expect(page.items.map((t) => [t.name, t.approval_policy])).toEqual([['fs__write_file', NEVER]]);
  });

  it("keeps each tenant's policies to itself", async () => {
    const admin = h.caller(['admin']);
    await set(admin, 'side_effect', ALWAYS);
    expect(await h.call<Tool>('tools.get', { name: 'side_effect' }, h.caller([]))).toMatchObject({
      approval_policy: NEVER,
    });
  });

  it('publishes no event (the event registry has none for it)', async () => {
    const admin = h.caller(['admin']);
    await set(admin, 'echo', ALWAYS);
    expect(await storedEvents(h.service.bus, { tenant: admin.tenant })).toEqual([]);
  });

  it('answers not_found for a tool the catalogue does not have', async () => {
    const outcome = await h.outcome('tools.set_approval_policy', { name: 'fs__nope', policy: ALWAYS }, h.caller());
    expect(outcome).toMatchObject({ ok: false, code: 'not_found' });
  });

  it.each([[[]], [['console:fleet']], [['agent_config:user']]])(
    'refuses a caller with scopes %j with identity_scope_required, setting nothing',
    async (scopes) => {
      const who = h.caller(scopes);
      const outcome = await h.outcome('tools.set_approval_policy', { name: 'echo', policy: ALWAYS }, who);
      expect(outcome).toMatchObject({ ok: false, code: 'identity_scope_required' });
      expect(await h.call<Tool>('tools.get', { name: 'echo' }, who)).toMatchObject({ approval_policy: NEVER });
    },
  );

  it('refuses a body naming another tenant with identity_required, even for admin', async () => {
    const outcome = await h.outcome(
      'tools.set_approval_policy',
      { name: 'echo', policy: ALWAYS, identity: { tenant: 'elsewhere' } },
      h.caller(['admin']),
    );
    expect(outcome).toMatchObject({ ok: false, code: 'identity_required' });
  });

  it.each([
    [{ name: 'echo' }],
    [{ name: 'echo', policy: { mode: 'sometimes' } }],
    [{ name: 'echo', policy: { mode: 'always', timeout_seconds: 0 } }],
    [{ name: 'echo', policy: ALWAYS, extra: true }],
  ])('refuses the bad body %j with invalid_request', async (body) => {
    expect(await h.outcome('tools.set_approval_policy', body, h.caller())).toMatchObject({
      ok: false,
      code: 'invalid_request',
    });
  });
});
