import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import {
  CONTROL_PAYLOADS,
  ControlRequest,
  METHODS,
  START_QUERY_MAX_CHARS,
  STEERING_CONTROLS,
  StartRequest,
  getMethod,
} from '../src/index.ts';

const shapeOf = (schema: z.ZodType) => (schema as unknown as { shape: Record<string, z.ZodType> }).shape;
const requestOf = (name: string): z.ZodType => {
  const method = getMethod(name);
  if (method === undefined) throw new Error(`no method ${name}`);
  return method.request;
};
const codes = (result: { success: boolean; error?: z.ZodError }) => result.error?.issues.map((i) => i.code) ?? [];

describe('request envelopes', () => {
  it('puts a required identity first in every request schema', () => {
    for (const m of METHODS) {
      const shape = shapeOf(m.request);
      expect(Object.keys(shape)[0], m.name).toBe('identity');
      expect(shape.identity?.safeParse(undefined).success, m.name).toBe(false);
    }
  });

  it('refuses an unknown member on every request schema', () => {
    for (const m of METHODS) {
      const result = m.request.safeParse({ identity: { run: 't-1' }, not_in_the_contract: true });
      expect(codes(result), m.name).toContain('unrecognized_keys');
    }
  });

  it('refuses an unknown member inside identity', () => {
    expect(codes(StartRequest.safeParse({ identity: { tenant_id: 'x' }, query: 'q' }))).toContain('unrecognized_keys');
  });
});

describe('StartRequest', () => {
  it('accepts an empty identity and a query', () => {
    expect(StartRequest.safeParse({ identity: {}, query: 'x' }).success).toBe(true);
  });

  it('accepts every member the spec lists', () => {
    const body = {
      identity: { tenant: 't', user: 'u', session: 's' },
      query: 'summarise',
      idempotency_key: 'k-1',
      input_artifact_ids: ['a1', 'a2', 'a3', 'a4'],
      input_artifact_dispositions: { a1: 'ref', a2: 'inline', a3: 'provider_native', a4: 'tool:ocr' },
      priority: 5,
      agent_id: 'support-bot',
    };
    expect(StartRequest.parse(body)).toEqual(body);
  });

  it('rejects an unknown member', () => {
    expect(codes(StartRequest.safeParse({ identity: {}, query: 'x', tenant_id: 't' }))).toContain('unrecognized_keys');
  });

  it('requires a non-empty query', () => {
    expect(StartRequest.safeParse({ identity: {} }).success).toBe(false);
    expect(StartRequest.safeParse({ identity: {}, query: '' }).success).toBe(false);
  });

  it('requires the identity member', () => {
    expect(StartRequest.safeParse({ query: 'x' }).success).toBe(false);
  });

  it('bounds the query at START_QUERY_MAX_CHARS code points, naming the bound', () => {
    const max = START_QUERY_MAX_CHARS;
    // An emoji is one character and two UTF-16 units: the bound counts characters.
    expect(StartRequest.safeParse({ identity: {}, query: '😀'.repeat(max) }).success).toBe(true);
    const over = StartRequest.safeParse({ identity: {}, query: 'x'.repeat(max + 1) });
    expect(over.error?.issues[0]).toMatchObject({
      path: ['query'],
      message: `has ${max + 1} characters; the limit is ${max} (Unicode code points)`,
    });
    expect(StartRequest.safeParse({ identity: {}, query: '😀'.repeat(max + 1) }).success).toBe(false);
  });

  it('rejects a disposition outside the four forms', () => {
    const body = { identity: {}, query: 'x', input_artifact_ids: ['a'], input_artifact_dispositions: { a: 'tool:' } };
    expect(StartRequest.safeParse(body).success).toBe(false);
  });

  it('rejects a disposition for an artifact that is not an input', () => {
    const body = { identity: {}, query: 'x', input_artifact_ids: ['a'], input_artifact_dispositions: { b: 'ref' } };
    expect(StartRequest.safeParse(body).error?.issues[0]?.path).toEqual(['input_artifact_dispositions', 'b']);
  });

  it('rejects a non-integer priority', () => {
    expect(StartRequest.safeParse({ identity: {}, query: 'x', priority: 1.5 }).success).toBe(false);
  });
});

describe('ControlRequest', () => {
  it('requires identity.run', () => {
    const result = ControlRequest.safeParse({ identity: {} });
    expect(result.error?.issues[0]?.path).toEqual(['identity', 'run']);
    expect(result.error?.issues[0]?.message).toMatch(/identity\.run/);
  });

  it('carries the method-specific payload in `payload` and an optional event_id', () => {
    const body = { identity: { run: 't-1' }, payload: { hard: true }, event_id: 'e-1' };
    expect(requestOf('cancel').parse(body)).toEqual(body);
  });

  it('requires identity.run on every control', () => {
    for (const control of STEERING_CONTROLS) {
      expect(requestOf(control).safeParse({ identity: {}, payload: {} }).success, control).toBe(false);
    }
  });

  const accepted: ReadonlyArray<readonly [string, unknown]> = [
    ['cancel', undefined],
    ['cancel', { hard: true }],
    ['cancel', {}],
    ['pause', { reason: 'lunch' }],
    ['resume', undefined],
    ['approve', { token: 'p-1', reason: 'ok' }],
    ['reject', { token: 'p-1' }],
    ['redirect', { goal: 'write a haiku instead' }],
    ['inject_context', { ticket: { id: 42, tags: ['vip'] } }],
    ['inject_context', {}],
    ['user_message', { message: 'also check the logs' }],
    ['prioritize', { priority: 9 }],
    ['prioritize', { priority: -3 }],
  ];

  it.each(accepted)('accepts %s with payload %j', (control, payload) => {
    const body = payload === undefined ? { identity: { run: 't' } } : { identity: { run: 't' }, payload };
    expect(requestOf(control).safeParse(body).success).toBe(true);
  });

  const refused: ReadonlyArray<readonly [string, unknown]> = [
    ['cancel', { hard: 'yes' }],
    ['cancel', { soft: true }],
    ['pause', { reason: 7 }],
    ['approve', { token: '' }],
    ['redirect', undefined],
    ['redirect', {}],
    ['redirect', { goal: '' }],
    ['redirect', { goal: 'x', extra: 1 }],
    ['inject_context', undefined],
    ['inject_context', 'text'],
    ['inject_context', [1, 2]],
    ['user_message', undefined],
    ['user_message', { text: 'hi' }],
    ['prioritize', undefined],
    ['prioritize', { priority: 1.5 }],
    ['prioritize', { priority: '1' }],
  ];

  it.each(refused)('refuses %s with payload %j', (control, payload) => {
    const body = payload === undefined ? { identity: { run: 't' } } : { identity: { run: 't' }, payload };
    expect(requestOf(control).safeParse(body).success).toBe(false);
  });

  it('keeps an inject_context payload as sent, a __proto__ member included', () => {
    const payload = JSON.parse('{"__proto__":{"admin":true},"$where":"1","a.b":2,"":3}') as unknown;
    const parsed = requestOf('inject_context').parse({ identity: { run: 't' }, payload }) as { payload: unknown };
    expect(JSON.stringify(parsed.payload)).toBe('{"__proto__":{"admin":true},"$where":"1","a.b":2,"":3}');
    expect(CONTROL_PAYLOADS.inject_context.parse(payload)).toBe(payload);
  });

  it('exports one payload schema per control', () => {
    expect(Object.keys(CONTROL_PAYLOADS).sort()).toEqual([...STEERING_CONTROLS].sort());
  });
});

describe('other request schemas', () => {
  const valid: ReadonlyArray<readonly [string, unknown]> = [
    ['tasks.get', { identity: {}, task_id: 't-1' }],
    ['tasks.list', { identity: {}, filter: { status: ['running', 'paused'], text: 'invoice' }, limit: 10 }],
    ['pause.list', { identity: {}, filter: { tenant_ids: ['acme'] } }],
    ['sessions.list', { identity: {}, filter: { tenant_ids: ['acme'] }, limit: 20 }],
    ['agents.list', { identity: {}, filter: { tenant_ids: ['acme', 'globex'], state: 'running' }, limit: 20 }],
    ['agents.list', { identity: {}, filter: { all_tenants: true, text: 'bot' } }],
    ['sessions.set_title', { identity: {}, session_id: 'sibling', title: 'Quarterly report' }],
    ['sessions.delete', { identity: {} }],
    ['search.tasks', { identity: {}, query: 'report', filter: { session_ids: ['s1'] } }],
    ['runtime.info', { identity: { tenant: 'other' } }],
    ['events.list', { identity: {}, filter: { user: 'bob', types: ['task.spawned'] }, after_sequence: 10 }],
    ['events.aggregate', { identity: {}, bucket_seconds: 60 }],
    ['artifacts.put', { identity: {}, content_base64: 'aGVsbG8=', mime_type: 'text/plain' }],
    ['artifacts.list', { identity: { user: 'bob' }, filter: { session: 's1' } }],
    ['memory.put', { identity: {}, tier: 'tenant', key: 'k', value: { any: ['json'] } }],
    ['state.history', { identity: { session: 's2' }, filter: { run: 't-1' } }],
    ['runs.set_overrides', { identity: {}, overrides: { temperature: 0.2, model: null } }],
    ['governance.set_posture', { identity: {}, default_tier: 'std', tiers: [{ name: 'std', max_tokens: 4096 }] }],
    [
      'agent_config.set_revision',
      { identity: {}, agent_id: 'bot', config: { prompt_layers: [{ name: 'base', text: 'Be brief.' }] } },
    ],
    [
      'agent_config.set_llm_provider',
      {
        identity: {},
        agent_id: 'bot',
        provider: { provider_name: 'local', provider: 'openai', base_url: 'http://127.0.0.1:11434/v1' },
      },
    ],
    ['agent_config.user.skills.upsert', { identity: {}, skill: { name: 'summarise', content: 'Summarise briefly.' } }],
    [
      'agent_config.skills.upsert',
      { identity: {}, skill: { name: 'cite', content: 'Cite sources.' }, origin: 'pack:research', overwrite: true },
    ],
    ['agent_config.session.skills.upsert', { identity: {}, skill: { name: 'x', content: 'y' }, origin: 'proposed' }],
    ['mcp.servers.set_raw_html_trust', { identity: {}, server_id: 'srv', trusted: true }],
  ];

  it.each(valid)('accepts a typical %s request', (name, body) => {
    const result = requestOf(name).safeParse(body);
    expect(result.error?.issues ?? []).toEqual([]);
  });

  const invalid: ReadonlyArray<readonly [string, unknown]> = [
    ['tasks.get', { identity: {} }],
    ['tasks.list', { identity: {}, filter: { status: ['done'] } }],
    ['tasks.list', { identity: {}, limit: 0 }],
    ['tasks.list', { identity: {}, limit: 501 }],
    ['agents.list', { identity: {}, filter: { tenant_ids: [] } }],
    ['agents.list', { identity: {}, filter: { tenant_ids: Array.from({ length: 101 }, (_, i) => `t${i}`) } }],
    ['agents.list', { identity: {}, filter: { all_tenants: 'yes' } }],
    ['agents.list', { identity: {}, filter: { tenant: 'acme' } }],
    ['events.list', { identity: {}, filter: { since: 'yesterday' } }],
    ['artifacts.put', { identity: {}, content_base64: 'not base64!', mime_type: 'text/plain' }],
    ['memory.put', { identity: {}, tier: 'global', key: 'k', value: 1 }],
    ['governance.set_posture', { identity: {}, default_tier: 'gold', tiers: [{ name: 'std' }] }],
    [
      'agent_config.set_llm_provider',
      { identity: {}, agent_id: 'bot', provider: { provider_name: 'x', provider: 'other' } },
    ],
    ['agent_config.user.skills.upsert', { identity: {}, skill: { name: 'x', content: 'y' }, origin: 'someone' }],
    ['agent_config.user.skills.upsert', { identity: {}, skill: { name: 'x', content: 'y' }, origin: 'pack:' }],
    ['agent_config.skills.upsert', { identity: {}, skill: { name: 'x', content: 'y' }, overwrite: 'yes' }],
  ];

  it.each(invalid)('refuses a malformed %s request', (name, body) => {
    expect(requestOf(name).safeParse(body).success).toBe(false);
  });

  it('defaults the page size to 50', () => {
    expect(requestOf('sessions.list').parse({ identity: {} })).toMatchObject({ limit: 50 });
  });
});
