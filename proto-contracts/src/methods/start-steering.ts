import { z } from 'zod';
import { IdentityScope } from '../identity.ts';
import { characterCount, START_QUERY_MAX_CHARS } from '../limits.ts';
import type { SteeringTier } from '../identity.ts';
import { defineMethod } from '../method-def.ts';
import type { MethodDef } from '../method-def.ts';
import { AgentId } from '../schemas/agent-config.ts';
import { Id, JsonObject, requestOf, VerbatimJsonObject, versioned } from '../schemas/common.ts';
import { Disposition } from '../schemas/task.ts';
import { onControl } from './routing.ts';

/**
 * The `query` of a start: non-empty, at most {@link START_QUERY_MAX_CHARS}
 * characters counted as Unicode code points (as JSON Schema's `maxLength`
 * counts them; zod's `.max` would count UTF-16 units).
 */
const StartQuery = z
  .string()
  .min(1)
  .superRefine((query, ctx) => {
    const chars = characterCount(query, START_QUERY_MAX_CHARS);
    if (chars > START_QUERY_MAX_CHARS) {
      ctx.addIssue({
        code: 'custom',
        message: `has ${chars} characters; the limit is ${START_QUERY_MAX_CHARS} (Unicode code points)`,
      });
    }
  })
  .meta({
    description: `the user's request to the run; required, non-empty, at most ${START_QUERY_MAX_CHARS} characters (code points)`,
    maxLength: START_QUERY_MAX_CHARS,
  });

/**
 * StartRequest: `query` is required, non-empty and at most
 * {@link START_QUERY_MAX_CHARS} characters. A disposition may only name an
 * artifact listed in `input_artifact_ids`.
 */
export const StartRequest = requestOf({
  query: StartQuery,
  idempotency_key: z.string().min(1).max(256).optional().describe('scoped to the full (tenant, user, session) triple'),
  input_artifact_ids: z
    .array(Id)
    .max(100)
    .optional()
    .describe('ids of already-uploaded artifacts; bytes never travel on this request'),
  input_artifact_dispositions: z
    .record(z.string(), Disposition)
    .optional()
    .describe('artifact id to disposition hint; outranks the agent configuration and the runtime default'),
  priority: z.int().optional().describe('initial scheduling priority; higher runs first; default 0'),
  agent_id: AgentId.optional().describe("agent configuration to run under; absent: the runtime's default agent"),
}).superRefine((request, ctx) => {
  const ids = new Set(request.input_artifact_ids ?? []);
  for (const id of Object.keys(request.input_artifact_dispositions ?? {})) {
    if (!ids.has(id)) {
      ctx.addIssue({
        code: 'custom',
        path: ['input_artifact_dispositions', id],
        message: 'names an artifact that is not in input_artifact_ids',
      });
    }
  }
});
export type StartRequest = z.infer<typeof StartRequest>;

/** StartResponse; `protocol_version` as on every control-surface response. */
export const StartResponse = versioned({
  task_id: z.string().describe('also the run id'),
  reused: z.boolean().describe('true when an existing task matched idempotency_key'),
});
export type StartResponse = z.infer<typeof StartResponse>;

/** The nine steering controls, in the spec's order. */
export const STEERING_CONTROLS = [
  'cancel',
  'pause',
  'resume',
  'approve',
  'reject',
  'redirect',
  'inject_context',
  'user_message',
  'prioritize',
] as const;
export type SteeringControl = (typeof STEERING_CONTROLS)[number];

/** Minimum steering tier of each control (cross-tenant steering always needs admin). */
export const STEERING_MINIMUMS: Readonly<Record<SteeringControl, SteeringTier>> = {
  cancel: 'owner_user',
  pause: 'owner_user',
  resume: 'owner_user',
  approve: 'owner_user',
  reject: 'owner_user',
  redirect: 'owner_user',
  inject_context: 'session_user',
  user_message: 'session_user',
  prioritize: 'admin',
};

const reason = z.string().optional().describe('free-text reason, recorded on the events');
const pauseToken = z
  .string()
  .min(1)
  .optional()
  .describe('the pause token (pause.requested Token); default: the pending one');

/**
 * The `payload` member of each control. Bounds (depth, keys, items, string
 * length, size) are checked at the edge by `checkPayloadBounds` (422), not here.
 */
export const CONTROL_PAYLOADS = {
  cancel: z.strictObject({ hard: z.boolean().optional().describe('true propagates a hard cancellation context') }),
  pause: z.strictObject({ reason }),
  resume: z.strictObject({ reason }),
  approve: z.strictObject({ reason, token: pauseToken }),
  reject: z.strictObject({ reason, token: pauseToken }),
  redirect: z.strictObject({ goal: z.string().min(1).describe("the run's new goal") }),
  inject_context: VerbatimJsonObject.describe('the context object, visible on the next planner step'),
  user_message: z.strictObject({ message: z.string().min(1).describe('the user-authored message') }),
  prioritize: z.strictObject({ priority: z.int().describe('the new scheduling priority') }),
} as const satisfies Record<SteeringControl, z.ZodType>;

/** Controls whose `payload` is required; for the others it is optional. */
export const CONTROL_PAYLOAD_REQUIRED: ReadonlySet<SteeringControl> = new Set<SteeringControl>([
  'redirect',
  'inject_context',
  'user_message',
  'prioritize',
]);

/** The identity of a control: `run` (the task id) is mandatory. */
export const ControlIdentity = IdentityScope.extend({
  run: z
    .string({ error: 'identity.run (the task id) is mandatory on steering controls' })
    .min(1)
    .describe('steering target: the task id'),
}).describe('IdentityScope with run mandatory');

/** ControlRequest of any control; the method-specific payload is `payload`. */
export const ControlRequest = z.strictObject({
  identity: ControlIdentity,
  payload: JsonObject.optional().describe('the method-specific payload'),
  event_id: z.string().min(1).max(256).optional().describe('idempotency key of the control'),
});
export type ControlRequest = z.infer<typeof ControlRequest>;

/** The ControlRequest of one control, with that control's payload schema. */
export function controlRequestFor(control: SteeringControl) {
  const payload: z.ZodType = CONTROL_PAYLOADS[control];
  return ControlRequest.extend({
    payload: CONTROL_PAYLOAD_REQUIRED.has(control) ? payload : payload.optional(),
  });
}

/** ControlResponse: 200 means validated, scope-checked and enqueued; effects arrive as events. */
export const ControlResponse = versioned({
  accepted: z.boolean().describe('true: validated, scope-checked and enqueued'),
  method: z.string().describe("the control's method name"),
});
export type ControlResponse = z.infer<typeof ControlResponse>;

const CONTROL_SUMMARIES: Readonly<Record<SteeringControl, string>> = {
  cancel: 'Stop the run; {hard: true} propagates a hard cancellation context.',
  pause: 'Park the run at the next planner-step boundary (status stays running).',
  resume: 'Resume a parked run.',
  approve: 'Approve a HITL-gated step; the pause advances.',
  reject: 'Reject a HITL-gated step; the run terminates as a constraints conflict.',
  redirect: "Rewrite the run's goal mid-flight.",
  inject_context: "Append operator context visible on the planner's next step.",
  user_message: 'Inject a user-authored message into the run.',
  prioritize: 'Change the scheduling priority of the run.',
};

/** start and the nine steering controls (run-executor). */
export const START_AND_STEERING_METHODS: readonly MethodDef[] = [
  defineMethod({
    name: 'start',
    family: 'start',
    ...onControl('start'),
    service: 'run-executor',
    auth: ['M'],
    requestName: 'StartRequest',
    responseName: 'StartResponse',
    request: StartRequest,
    response: StartResponse,
    summary: 'Start a run with a query; returns at once with the task handle.',
  }),
  ...STEERING_CONTROLS.map((control) =>
    defineMethod({
      name: control,
      family: 'steering',
      ...onControl(control),
      service: 'run-executor',
      auth: ['M'],
      steering: STEERING_MINIMUMS[control],
      requestName: 'ControlRequest',
      responseName: 'ControlResponse',
      request: controlRequestFor(control),
      response: ControlResponse,
      summary: CONTROL_SUMMARIES[control],
    }),
  ),
];

export type ControlIdentity = z.infer<typeof ControlIdentity>;
