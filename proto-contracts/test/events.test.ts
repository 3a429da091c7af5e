import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { EVENTS, NOTIFICATION_TYPES, getEvent } from '../src/index.ts';
import type { EventDef } from '../src/index.ts';
import { EVENT_SPEC, mentions, specEventTypes } from './spec-text.ts';

const keysOf = (schema: z.ZodType): string[] => {
  const s = schema as unknown as { shape?: Record<string, unknown>; options?: z.ZodType[] };
  if (s.shape) return Object.keys(s.shape);
  return (s.options ?? []).flatMap(keysOf);
};
const payloadOf = (type: string): z.ZodType => {
  const def = getEvent(type);
  if (def === undefined) throw new Error(`no event ${type}`);
  return def.payload;
};
const quad = { tenant: 't', user: 'u', session: 's', run: 'r' };
const at = '2025-01-02T03:04:05.678Z';

describe('event registry', () => {
  it('holds exactly 146 types with unique names', () => {
    expect(EVENTS).toHaveLength(146);
    expect(new Set(EVENTS.map((e) => e.type)).size).toBe(146);
  });

  it('registers exactly the types the event document lists', () => {
    expect(new Set(EVENTS.map((e) => e.type))).toEqual(specEventTypes());
  });

  it('names every type verbatim or as a shorthand suffix of its row', () => {
    const lines = EVENT_SPEC.split('\n');
    const missing = EVENTS.map((e) => e.type).filter((type) => {
      if (mentions(EVENT_SPEC, type)) return false;
      const dot = type.lastIndexOf('.');
      const prefix = type.slice(0, dot + 1);
      const suffix = type.slice(dot);
      return !lines.some((l) => l.includes(prefix) && l.includes(`, ${suffix}`));
    });
    expect(missing).toEqual([]);
  });

  it('uses only payload keys that the event document writes', () => {
    const unknown = EVENTS.flatMap((e) =>
      keysOf(e.payload)
        .filter((k) => !mentions(EVENT_SPEC, k))
        .map((k) => `${e.type}.${k}`),
    );
    expect(unknown).toEqual([]);
  });

  it('marks the nine notification types and runtime.error redacted, every other type safe', () => {
    const redacted = EVENTS.filter((e) => e.class === 'redacted').map((e) => e.type);
    expect(redacted.sort()).toEqual([...NOTIFICATION_TYPES, 'runtime.error'].sort());
  });

  it('gives every notification the shared declared shape', () => {
    const expected = [
      'Class',
      'Severity',
      'Summary',
      'DeepLink',
      'OriginEventType',
      'OriginEventSequence',
      'TaskID',
      'GroupID',
      'Members',
      'MembersTruncated',
      'MemberSucceeded',
      'MemberFailed',
      'MemberCancelled',
    ];
    for (const type of NOTIFICATION_TYPES) expect(keysOf(payloadOf(type)), type).toEqual(expected);
  });

  it('marks exactly the three no-emit types reserved', () => {
    expect(EVENTS.filter((e) => e.reserved).map((e) => e.type)).toEqual([
      'planner.error',
      'planner.finish',
      'runtime.warning',
    ]);
  });

  it('refuses an undeclared key on every non-reserved object payload', () => {
    const strict = EVENTS.filter((e: EventDef) => !e.reserved && e.type !== 'audit.admin_scope_used');
    for (const e of strict) {
      const result = e.payload.safeParse({ NotInTheSpec: 1 });
      expect(
        result.error?.issues.some((i) => i.code === 'unrecognized_keys'),
        e.type,
      ).toBe(true);
    }
  });
});

describe('event payloads', () => {
  const valid: ReadonlyArray<readonly [string, Record<string, unknown>]> = [
    ['task.spawned', { TaskID: 't', Kind: 'foreground', ParentTaskID: '', Priority: 0, IdempotencyKey: '' }],
    ['task.started', { TaskID: 't', PriorState: 'pending' }],
    ['task.failed', { TaskID: 't', ErrorCode: 'constraints_conflict' }],
    ['task.group_resolved', { Completion: { Succeeded: 2 } }],
    [
      'task.input_disposition.resolved',
      {
        identity: quad,
        task_id: 't',
        artifact_id: 'a',
        mime: 'image/png',
        disposition: 'ref',
        layer: 'hint',
        degraded: false,
        occurred_at: at,
      },
    ],
    ['control.applied', { Type: 'cancel', Outcome: 'applied', Err: '' }],
    ['pause.resumed', { Token: 'p', Reason: '', Decision: 'approve' }],
    [
      'planner.decision',
      { Identity: quad, DecisionKind: 'Finish', Tool: '', ReasoningChars: 0, ReasoningTrace: '', OccurredAt: at },
    ],
    ['runtime.error', { Message: 'boom', Fields: { attempt: 2 } }],
    [
      'llm.cost.recorded',
      {
        Identity: quad,
        Model: 'm',
        Cost: { USD: 0.01 },
        Usage: { InputTokens: 3 },
        ContextWindowTokens: 8192,
        OccurredAt: at,
      },
    ],
    [
      'tool.failed',
      {
        Identity: quad,
        ToolName: 'echo',
        Transport: 'builtin',
        Attempts: 1,
        ErrorClass: 'transient',
        ErrorMessage: 'x',
      },
    ],
    ['tool.approval_requested', { Tool: 'rm', PauseToken: 'p', Reason: 'policy', Tags: [], ArgsSummary: null }],
    [
      'session.erased',
      { SessionID: 's', StateRecordsDeleted: 3, ArtifactsDeleted: 1, MemoryPurged: true, ErasedAt: 1735787045678 },
    ],
    [
      'agent_config.retirement.progress',
      {
        AgentID: 'a',
        OperationHash: 'h',
        Stage: 'drain',
        class: 'runs',
        Completed: 1,
        Total: 2,
        Generation: 1,
        OccurredAt: at,
      },
    ],
    [
      'agent_config.retirement.started',
      { AgentID: 'a', OperationHash: 'h', Stage: 'start', Completed: 0, Total: 2, Generation: 1, OccurredAt: at },
    ],
    [
      'governance.rate_limited',
      {
        Identity: quad,
        Tier: 'std',
        Model: 'm',
        Requested: 5,
        Available: 0,
        Capacity: 10,
        RefillTokens: 1,
        RefillEvery: 1_000_000_000,
        OccurredAt: at,
      },
    ],
    ['memory.caller_block_admitted', { bytes: 12, tier: 'user', key: 'k' }],
    ['artifacts.uploaded', { artifact_id: 'a', size_bytes: 3 }],
    ['audit.admin_scope_used', { Tenant: 't', User: 'u', Session: 's', SubscriberID: 7 }],
    [
      'audit.admin_scope_used',
      {
        Actor: { tenant: 't', user: 'admin', session: 's' },
        Requester: { tenant: 't', user: 'admin', session: 's' },
        Impersonating: { tenant: 'o', user: 'u', session: 's' },
        Reason: 'fan-in',
        Method: 'artifacts.list',
      },
    ],
    ['bus.dropped', { FromSeq: 1, ToSeq: 9, DroppedCount: 9, SubscriberID: 2 }],
    ['runtime.warning', { Anything: 'goes' }],
  ];

  it.each(valid)('accepts a %s payload', (type, payload) => {
    const result = payloadOf(type).safeParse(payload);
    expect(result.error?.issues ?? []).toEqual([]);
  });

  const invalid: ReadonlyArray<readonly [string, Record<string, unknown>]> = [
    ['task.spawned', { TaskId: 't', Kind: 'foreground', ParentTaskID: '', Priority: 0, IdempotencyKey: '' }],
    ['task.started', { TaskID: 't', PriorState: 'done' }],
    ['task.group_sealed', { GroupID: 'g', Members: ['a'], SealedAt: '2025-01-01' }],
    [
      'planner.decision',
      { Identity: quad, DecisionKind: 'x', Tool: '', ReasoningChars: 0, ReasoningTrace: '', OccurredAt: 'now' },
    ],
    [
      'agent.registered',
      { AgentID: 'a', RegistrationKey: 'k', Incarnation: -1, VersionHash: 'v', Hosting: 'h', RegisteredAt: 1 },
    ],
    [
      'governance.rate_limited',
      {
        Identity: quad,
        Tier: 's',
        Model: 'm',
        Requested: 1,
        Available: 0,
        Capacity: 1,
        RefillTokens: 1,
        RefillEvery: '1s',
        OccurredAt: at,
      },
    ],
    ['audit.admin_scope_used', { Tenant: 't', User: 'u', Session: 's', SubscriberID: 1, Reason: 'mixed' }],
    ['artifacts.uploaded', { artifact_id: 'a' }],
  ];

  it.each(invalid)('refuses a malformed %s payload', (type, payload) => {
    expect(payloadOf(type).safeParse(payload).success).toBe(false);
  });
});
