import { describe, expect, it } from 'vitest';
import { ServiceError } from '@ars/contracts';
import type { RpcClient } from '@ars/bus';
import { createLogger } from '@ars/telemetry';
import {
  AgentConfigRefused,
  DEFAULT_SYSTEM_PROMPT,
  MAX_CACHE_ENTRIES,
  createAgentConfigResolver,
  parseEffectiveReply,
  toAgentRunConfig,
} from '../../src/engine/agent-config.ts';

const record = (config: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  agent_id: 'a',
  revision_id: 'r1',
  config,
  source_disables: [],
  ...extra,
});

describe('agent configuration of a run', () => {
  it('falls back to the built-in default prompt and the scripted provider for an empty configuration', () => {
    expect(toAgentRunConfig(record({}))).toMatchObject({
      agentId: 'a',
      system: DEFAULT_SYSTEM_PROMPT,
      provider: { kind: 'scripted' },
    });
  });

  it('joins prompt layers then extra system blocks, and reads the provider, parameters and multimodal default', () => {
    const config = toAgentRunConfig(
      record(
        {
          prompt_layers: [{ name: 'one', text: 'First.' }],
          extra_system_blocks: [{ text: 'Last.' }],
          llm_provider: { provider_name: 'p', provider: 'openai', base_url: 'http://x/v1', model: 'm' },
          llm_params: { temperature: 0.2, reasoning_effort: 'low' },
          tool_exposure: { mode: 'allow_list', tools: ['echo'] },
          multimodal: { default_disposition: 'inline' },
        },
        { source_disables: ['builtin'] },
      ),
    );
    expect(config).toMatchObject({
      revisionId: 'r1',
      system: 'First.\n\nLast.',
      provider: { kind: 'openai', name: 'p', baseUrl: 'http://x/v1', model: 'm' },
      params: { temperature: 0.2, reasoning_effort: 'low' },
      toolExposure: { mode: 'allow_list', tools: ['echo'] },
      sourceDisables: ['builtin'],
      defaultDisposition: 'inline',
    });
  });

  it("reads the server ids of the agent's MCP connections (none when it has none)", () => {
    const connections = [
      { server_id: 'fs', transport: 'stdio', command: 'mcp-fs' },
      { server_id: 'web', transport: 'streamable_http', url: 'http://127.0.0.1:1/mcp' },
    ];
    expect(toAgentRunConfig(record({ mcp_connections: connections })).mcpServers).toEqual(['fs', 'web']);
    expect(toAgentRunConfig(record({})).mcpServers).toEqual([]);
  });

  it('reads an _agent.effective_config answer whose agent layer is the built-in default (revision_id null)', () => {
    const parsed = parseEffectiveReply({
      agent_id: 'default',
      revision_id: null,
      config: { llm_provider: { provider_name: 'scripted', provider: 'scripted' } },
      source_disables: [],
      skills: [],
      layers: [
        { layer: 'agent', revision_id: null, applied_keys: ['llm_provider'] },
        { layer: 'tenant_overrides', applied_keys: [] },
      ],
      content_hash: 'sha256:abc',
      added_later: true,
    });
    expect(parsed).toMatchObject({
      agent_id: 'default',
      revision_id: null,
      content_hash: 'sha256:abc',
      source: 'agent-registry',
      layers: [
        { layer: 'agent', revision_id: null, applied_keys: ['llm_provider'] },
        { layer: 'tenant_overrides', applied_keys: [] },
      ],
    });
  });
});

describe('resolving a run’s configuration', () => {
  const owner = { tenant: 't', user: 'u', session: 's', scopes: [] };
  const logger = createLogger({ name: 'test', level: 'silent' });
  const failing = (error: Error): RpcClient => ({
    async call() {
      throw error;
    },
  });

  it('fails closed for the default agent too while agent-registry does not answer: no built-in configuration runs', async () => {
    const resolver = createAgentConfigResolver({
      rpc: failing(new ServiceError('unavailable', 'service agent-registry is not available')),
      logger,
      cacheMs: 0,
    });
    await expect(resolver.resolve(owner, 'default')).rejects.toMatchObject({ code: 'unavailable' });
  });

  it('turns a refusal of the agent into AgentConfigRefused', async () => {
    const resolver = createAgentConfigResolver({
      rpc: failing(new ServiceError('not_found', 'no such agent')),
      logger,
      cacheMs: 0,
    });
    await expect(resolver.resolve(owner, 'ghost')).rejects.toBeInstanceOf(AgentConfigRefused);
  });
});

describe('keeping resolved configurations', () => {
  const logger = createLogger({ name: 'test', level: 'silent' });
  const owner = (session: string) => ({ tenant: 't', user: 'u', session, scopes: [] });

  /** agent-registry as a fake: each answer names the call that made it (`revision_id` r<n>). */
  function registry() {
    const calls: unknown[] = [];
    const rpc: RpcClient = {
      async call(_service, _method, _identity, body) {
        calls.push(body);
        return {
          agent_id: (body as { agent_id: string }).agent_id,
          revision_id: `r${calls.length}`,
          config: {},
          source_disables: [],
          skills: [],
          layers: [{ layer: 'agent', revision_id: `r${calls.length}`, applied_keys: [] }],
          content_hash: 'sha256:abc',
        };
      },
    };
    return { rpc, calls };
  }

  /** A watch the test fires by hand, as a configuration change notice would. */
  function notices() {
    const listeners = new Set<() => void>();
    let stopped = 0;
    return {
      watch: (onChange: () => void) => {
        listeners.add(onChange);
        return { stop: () => void (listeners.delete(onChange), (stopped += 1)) };
      },
      fire: () => listeners.forEach((listener) => listener()),
      get listening() {
        return listeners.size;
      },
      get stopped() {
        return stopped;
      },
    };
  }

  it('reuses an answer for the same session and agent, and asks again for another session or agent', async () => {
    const { rpc, calls } = registry();
    const resolver = createAgentConfigResolver({ rpc, logger, cacheMs: 60_000, watch: notices().watch });
    const first = await resolver.resolve(owner('s1'), 'a');
    expect((await resolver.resolve(owner('s1'), 'a')).revision_id).toBe(first.revision_id);
    await resolver.resolve(owner('s2'), 'a');
    await resolver.resolve(owner('s1'), 'b');
    expect(calls).toHaveLength(3);
  });

  it('drops every kept answer on a change notice: the next run resolves afresh', async () => {
    const { rpc, calls } = registry();
    const changes = notices();
    const resolver = createAgentConfigResolver({ rpc, logger, cacheMs: 60_000, watch: changes.watch });
    await resolver.resolve(owner('s1'), 'a');
    await resolver.resolve(owner('s2'), 'a');
    changes.fire();
    expect((await resolver.resolve(owner('s1'), 'a')).revision_id).toBe('r3');
    expect((await resolver.resolve(owner('s2'), 'a')).revision_id).toBe('r4');
    expect(calls).toHaveLength(4);
  });

  it('does not keep an answer asked for before a notice that came while it was under way', async () => {
    const changes = notices();
    let answer: (() => void) | undefined;
    const { rpc: answering, calls } = registry();
    const rpc: RpcClient = {
      async call(...args) {
        await new Promise<void>((resolve) => (answer = resolve));
        return answering.call(...args);
      },
    };
    const resolver = createAgentConfigResolver({ rpc, logger, cacheMs: 60_000, watch: changes.watch });
    const before = resolver.resolve(owner('s1'), 'a');
    await Promise.resolve();
    changes.fire();
    // The run claimed before the change still gets the answer it asked for.
    answer?.();
    expect((await before).revision_id).toBe('r1');
    const after = resolver.resolve(owner('s1'), 'a');
    await Promise.resolve();
    answer?.();
    expect((await after).revision_id).toBe('r2');
    expect(calls).toHaveLength(2);
  });

  it('keeps nothing past cacheMs, and with cacheMs 0 neither keeps nor watches', async () => {
    const { rpc, calls } = registry();
    const changes = notices();
    const short = createAgentConfigResolver({ rpc, logger, cacheMs: 1, watch: changes.watch });
    await short.resolve(owner('s1'), 'a');
    await new Promise((resolve) => setTimeout(resolve, 5));
    await short.resolve(owner('s1'), 'a');
    expect(calls).toHaveLength(2);
    short.stop?.();
    expect(changes.stopped).toBe(1);

    const none = createAgentConfigResolver({ rpc, logger, cacheMs: 0, watch: changes.watch });
    await none.resolve(owner('s1'), 'a');
    await none.resolve(owner('s1'), 'a');
    expect(calls).toHaveLength(4);
    expect(changes.listening).toBe(0);
  });

  it('never keeps a failure', async () => {
    let fail = true;
    const { rpc: answering, calls } = registry();
    const rpc: RpcClient = {
      async call(...args) {
        if (fail) throw new ServiceError('unavailable', 'service agent-registry is not available');
        return answering.call(...args);
      },
    };
    const resolver = createAgentConfigResolver({ rpc, logger, cacheMs: 60_000, watch: notices().watch });
    await expect(resolver.resolve(owner('s1'), 'a')).rejects.toMatchObject({ code: 'unavailable' });
    fail = false;
    expect((await resolver.resolve(owner('s1'), 'a')).revision_id).toBe('r1');
    expect(calls).toHaveLength(1);
  });

  it(`keeps at most ${MAX_CACHE_ENTRIES} answers, dropping the least recently used`, async () => {
    const { rpc, calls } = registry();
    const resolver = createAgentConfigResolver({ rpc, logger, cacheMs: 60_000, watch: notices().watch });
    for (let i = 0; i < MAX_CACHE_ENTRIES; i += 1) await resolver.resolve(owner(`s${i}`), 'a');
    await resolver.resolve(owner('s0'), 'a'); // used again: now the most recent
    await resolver.resolve(owner('new'), 'a'); // evicts s1
    expect(calls).toHaveLength(MAX_CACHE_ENTRIES + 1);
    await resolver.resolve(owner('s0'), 'a');
    expect(calls).toHaveLength(MAX_CACHE_ENTRIES + 1);
    await resolver.resolve(owner('s1'), 'a');
    expect(calls).toHaveLength(MAX_CACHE_ENTRIES + 2);
  });
});
