import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { EventFrame, VerifiedIdentity } from '@ars/contracts';
import { KB_SCOPES, serveOAuthHost } from './fake-oauth-host.ts';
import type { FakeOAuthHost } from './fake-oauth-host.ts';
import { newCaller, startEngineHarness } from './harness.ts';
import type { EngineHarness, RunWatch } from './harness.ts';

/**
 * Runs whose agent has an OAuth-bound MCP server wait for the user to
 * authorize it: before planning when the catalogue lists it under
 * `auth_required`, and mid-run when a call is refused `auth_required`. The
 * tool host is a fake on the real nats-server (`fake-oauth-host.ts`) that
 * delivers the completion envelope to the run's inbox as agent-registry does.
 */

const ofType = (events: readonly EventFrame[], type: string) => events.filter((e) => e.type === type);

/** The spec's payload keys (event-stream reference), sorted. */
const PAYLOAD_KEYS: Record<string, string[]> = {
  'tool.auth_required': ['AuthorizeURL', 'BindingScope', 'PauseToken', 'Scopes', 'Source', 'SourceName', 'State'],
  'tool.auth_completed': ['BindingScope', 'PauseToken', 'Source', 'State'],
  'pause.requested': ['Reason', 'Token'],
  'pause.resumed': ['Decision', 'Reason', 'Token'],
};

function expectKeys(event: EventFrame | undefined): void {
  expect(Object.keys(event?.payload ?? {}).sort()).toEqual(PAYLOAD_KEYS[event?.type ?? '']);
}

describe('runs wait for the user to authorize an OAuth-bound MCP server', { timeout: 30_000 }, () => {
  let h: EngineHarness;
  let host: FakeOAuthHost;

  beforeAll(async () => {
    h = await startEngineHarness({}, { persistentStore: true });
    h.agentConfigs.set('kb-agent', {
      mcp_connections: [{ server_id: 'kb', transport: 'streamable_http', url: 'https://kb.example/mcp' }],
    });
    host = await serveOAuthHost(h.bus);
  });

  afterEach(() => {
    host.flowTtlMs = 600_000;
    host.bindOnBegin = false;
  });

  afterAll(async () => {
    await host?.served.stop();
    await h?.stop();
  });

  interface Waiting {
    readonly taskId: string;
    readonly watch: RunWatch;
    readonly caller: VerifiedIdentity;
    readonly token: string;
    readonly state: string;
  }

  /** Starts a run of the kb agent and waits for its tool.auth_required. */
  async function waiting(query = '#script tool:kb__search{};finish:done', caller = newCaller()): Promise<Waiting> {
    const { taskId, watch } = await h.start(caller, { query, agent_id: 'kb-agent' });
    const required = await watch.until((e) => e.type === 'tool.auth_required');
    return { taskId, watch, caller, token: String(required.payload.PauseToken), state: String(required.payload.State) };
  }

  it('pauses before planning: tool.auth_required, pause.requested, and an auth pause of the server in pause.list', async () => {
    const { taskId, watch, caller, token, state } = await waiting();
    const pause = await watch.until((e) => e.type === 'pause.requested');
    const [required] = ofType(watch.events, 'tool.auth_required');
    expectKeys(required);
    expectKeys(pause);
    expect(required?.payload).toEqual({
      Source: 'kb',
      SourceName: 'github',
      BindingScope: 'user',
      AuthorizeURL: `https://github.example/login/oauth/authorize?state=${state}`,
      State: state,
      PauseToken: token,
      Scopes: KB_SCOPES,
    });
    expect(pause.payload).toEqual({ Token: token, Reason: 'MCP server kb requires authorization (github)' });
    expect(host.flowOf(taskId)?.request).toEqual({
      tenant: caller.tenant,
      user: caller.user,
      session: caller.session,
      agent_id: 'kb-agent',
      run: taskId,
      server_id: 'kb',
      pause_token: token,
    });
    const { items } = (await h.call('pause.list', {}, caller)) as { items: Record<string, unknown>[] };
    expect(items).toEqual([
      expect.objectContaining({
        token,
        task_id: taskId,
        kind: 'auth',
        tool: 'kb',
        authorize_url: required?.payload.AuthorizeURL,
        expires_at: expect.any(String),
      }),
    ]);
    expect(ofType(watch.events, 'planner.decision')).toEqual([]);
    await h.control('cancel', taskId, caller);
    await watch.terminal();
    watch.stop();
  });

  it("resumes once the authorization completed: tool.auth_completed, pause.resumed, then calls the server's tool", async () => {
    const { taskId, watch, caller, token, state } = await waiting();
    expect(await host.complete(taskId, 'completed')).toEqual({ accepted: true });
    const terminal = await watch.terminal();
    watch.stop();
    expect(terminal.type).toBe('task.completed');
    const [completed] = ofType(watch.events, 'tool.auth_completed');
    expectKeys(completed);
    expect(completed?.payload).toEqual({ Source: 'kb', BindingScope: 'user', State: state, PauseToken: token });
    const [resumed] = ofType(watch.events, 'pause.resumed');
    expectKeys(resumed);
    expect(resumed?.payload).toEqual({
      Token: token,
      Reason: 'authorization of MCP server kb completed',
      Decision: 'resume',
    });
    // Not a steering control: no control.* narration.
    expect(ofType(watch.events, 'control.received')).toEqual([]);
    expect(ofType(watch.events, 'tool.completed')[0]?.payload).toMatchObject({ ToolName: 'kb__search' });
    expect(host.calls.filter((c) => c.run === taskId).map((c) => c.tool)).toEqual(['search']);
    expect(host.catalogueCalls.filter((c) => c.tenant === caller.tenant)).toHaveLength(2);
    expect(((await h.call('pause.list', {}, caller)) as { items: unknown[] }).items).toEqual([]);
  });

  it('applies a completion once per event_id, and ignores one naming another pause token', async () => {
    const { taskId, watch } = await waiting();
    const stray = host.envelope(taskId, 'denied');
    expect(await host.deliver(taskId, { ...stray, auth: { ...stray.auth, pause_token: 'not-the-token' } })).toEqual({
      accepted: true,
    });
    const envelope = host.envelope(taskId, 'completed');
    await Promise.all([host.deliver(taskId, envelope), host.deliver(taskId, envelope)]);
    expect((await watch.terminal()).type).toBe('task.completed');
    watch.stop();
    expect(ofType(watch.events, 'tool.auth_completed')).toHaveLength(1);
    expect(ofType(watch.events, 'pause.resumed')).toHaveLength(1);
  });

  it('ends the run as a constraints conflict when the user denied the authorization', async () => {
    const { taskId, watch, caller, token } = await waiting();
    await host.complete(taskId, 'denied', 'access_denied');
    const terminal = await watch.terminal();
    watch.stop();
    expect(terminal.payload).toEqual({ TaskID: taskId, ErrorCode: 'constraints_conflict' });
    expect(ofType(watch.events, 'pause.resumed')[0]?.payload).toEqual({
      Token: token,
      Reason: 'authorization of MCP server kb denied: access_denied',
      Decision: 'reject',
    });
    expect(ofType(watch.events, 'tool.auth_completed')).toEqual([]);
    expect(ofType(watch.events, 'planner.decision')).toEqual([]);
    expect(((await h.call('pause.list', {}, caller)) as { items: unknown[] }).items).toEqual([]);
  });

  it('fails approval_timeout when the flow expires before the user authorized', async () => {
    host.flowTtlMs = 300;
    const { taskId, watch, token } = await waiting();
    const terminal = await watch.terminal(5_000);
    watch.stop();
    expect(terminal.payload).toEqual({ TaskID: taskId, ErrorCode: 'approval_timeout' });
    expect(ofType(watch.events, 'pause.resumed')[0]?.payload).toEqual({
      Token: token,
      Reason: 'authorization of MCP server kb expired',
      Decision: 'reject',
    });
  });

  it('cancels a run that waits for authorization and clears its pause', async () => {
    const { taskId, watch, caller } = await waiting();
    await h.control('cancel', taskId, caller);
    expect((await watch.terminal()).type).toBe('task.cancelled');
    watch.stop();
    expect(((await h.call('pause.list', {}, caller)) as { items: unknown[] }).items).toEqual([]);
  });

  it('asks the catalogue again without pausing when _oauth.begin answers bound', async () => {
    host.bindOnBegin = true;
    const caller = newCaller();
    const { taskId, watch } = await h.start(caller, {
      query: '#script tool:kb__search{};finish:done',
      agent_id: 'kb-agent',
    });
    expect((await watch.terminal()).type).toBe('task.completed');
    watch.stop();
    expect(ofType(watch.events, 'tool.auth_required')).toEqual([]);
    expect(ofType(watch.events, 'pause.requested')).toEqual([]);
    expect(host.calls.filter((c) => c.run === taskId).map((c) => c.tool)).toEqual(['search']);
  });

  it('a resume on the pause asks again; a server still unauthorized begins again with a new pause and state', async () => {
    const { taskId, watch, caller, token, state } = await waiting();
    await h.control('resume', taskId, caller, { reason: 'I authorized it' });
    const again = await watch.until((e) => e.type === 'tool.auth_required' && e.payload.PauseToken !== token);
    expect(again.payload.State).not.toBe(state);
    expect(ofType(watch.events, 'control.applied')[0]?.payload).toMatchObject({ Type: 'resume', Outcome: 'resumed' });
    expect(ofType(watch.events, 'pause.resumed')[0]?.payload).toEqual({
      Token: token,
      Reason: 'I authorized it',
      Decision: 'resume',
    });
    await host.complete(taskId, 'completed');
    expect((await watch.terminal()).type).toBe('task.completed');
    watch.stop();
    expect(ofType(watch.events, 'pause.requested').map((e) => e.payload.Token)).toEqual([
      token,
      again.payload.PauseToken,
    ]);
  });

  it('a run handed back while it waits finds the grant made meanwhile: one tool.auth_completed, then its tool', async () => {
    const { taskId, watch, caller, token, state } = await waiting();
    // Granted with no completion delivered (as when the run's inbox did not answer: run_notified false).
    host.grant(caller.tenant, caller.user);
    await h.restart();
    expect((await watch.terminal(20_000)).type).toBe('task.completed');
    watch.stop();
    expect(ofType(watch.events, 'tool.auth_completed').map((e) => e.payload)).toEqual([
      { Source: 'kb', BindingScope: 'user', State: state, PauseToken: token },
    ]);
    expect(host.calls.filter((c) => c.run === taskId).map((c) => c.tool)).toEqual(['search']);
  });

  it('a run handed back while it waits keeps its pause token with a fresh flow', async () => {
    const { taskId, watch, token, state } = await waiting();
    await h.restart();
    const fresh = await watch.until((e) => e.type === 'tool.auth_required' && e.payload.State !== state, 20_000);
    expect(fresh.payload.PauseToken).toBe(token);
    expect(ofType(watch.events, 'pause.requested')).toHaveLength(1);
    await host.complete(taskId, 'completed');
    expect((await watch.terminal()).type).toBe('task.completed');
    watch.stop();
    expect(ofType(watch.events, 'tool.auth_completed')[0]?.payload).toMatchObject({
      PauseToken: token,
      State: fresh.payload.State,
    });
  });

  it('waits mid-run when a call is refused auth_required, then makes the call once more', async () => {
    const caller = newCaller();
    host.grant(caller.tenant, caller.user);
    host.revokeAtNextCall(caller.tenant, caller.user);
    const { taskId, watch } = await h.start(caller, {
      query: '#script tool:kb__search{};finish:done',
      agent_id: 'kb-agent',
    });
    const required = await watch.until((e) => e.type === 'tool.auth_required');
    await host.complete(taskId, 'completed');
    expect((await watch.terminal()).type).toBe('task.completed');
    watch.stop();
    expect(ofType(watch.events, 'tool.failed')).toEqual([]);
    expect(ofType(watch.events, 'tool.auth_completed')[0]?.payload).toMatchObject({
      PauseToken: required.payload.PauseToken,
    });
    expect(ofType(watch.events, 'tool.completed')[0]?.payload).toMatchObject({ ToolName: 'kb__search', Attempts: 1 });
    expect(host.calls.filter((c) => c.run === taskId)).toHaveLength(2);
    const types = watch.types();
    const order = ['tool.invoked', 'tool.auth_required', 'tool.auth_completed', 'tool.completed'];
    expect(order.map((t) => types.indexOf(t))).toEqual([...order.map((t) => types.indexOf(t))].sort((a, b) => a - b));
  });

  it('fails the call as permanent when it is refused auth_required again after the authorization', async () => {
    const caller = newCaller();
    host.grant(caller.tenant, caller.user);
    const { taskId, watch } = await h.start(caller, {
      query: '#script tool:kb__locked{};finish:done',
      agent_id: 'kb-agent',
    });
    await watch.until((e) => e.type === 'tool.auth_required');
    await host.complete(taskId, 'completed');
    expect((await watch.terminal()).type).toBe('task.completed');
    watch.stop();
    expect(ofType(watch.events, 'tool.auth_required')).toHaveLength(1);
    expect(ofType(watch.events, 'tool.failed').map((e) => e.payload)).toEqual([
      expect.objectContaining({
        ToolName: 'kb__locked',
        ErrorClass: 'permanent',
        ErrorMessage: expect.stringMatching(/^auth_required: /),
      }),
    ]);
    expect(host.calls.filter((c) => c.run === taskId)).toHaveLength(2);
  });

  it('an unsafe call refused auth_required is no unknown outcome when the run moves executors during the wait', async () => {
    const caller = newCaller();
    host.grant(caller.tenant, caller.user);
    host.revokeAtNextCall(caller.tenant, caller.user);
    const { taskId, watch } = await h.start(caller, {
      query: '#script tool:kb__post{};finish:done',
      agent_id: 'kb-agent',
    });
    const required = await watch.until((e) => e.type === 'tool.auth_required');
    await h.restart();
    await watch.until((e) => e.type === 'tool.auth_required' && e.payload.State !== required.payload.State, 20_000);
    await host.complete(taskId, 'completed');
    const terminal = await watch.terminal();
    watch.stop();
    expect(terminal.type).toBe('task.completed');
    expect(ofType(watch.events, 'tool.completed')[0]?.payload).toMatchObject({ ToolName: 'kb__post' });
    expect(host.calls.filter((c) => c.run === taskId && c.tool === 'post')).toHaveLength(2);
  });
});
