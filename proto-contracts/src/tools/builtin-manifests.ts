import { z } from 'zod';
import { MimeType } from '../schemas/artifact.ts';
import type { JsonObject } from '../schemas/common.ts';
import { MemoryKey } from '../schemas/memory.ts';
import type { ApprovalPolicy, SideEffectClass } from '../schemas/tool.ts';

/**
 * The built-in tools as data: what the run engine (run-executor) runs and
 * what the tool catalogue (agent-registry) lists, declared once so that the
 * two never disagree. Each manifest carries the zod schema of its arguments
 * (the engine validates with it) and the JSON Schema generated from it (what
 * a model and `tools.describe` see). The engine adds the behaviour: retry
 * policy and the call itself.
 */

/** The transport of every built-in tool (`tool.*` Transport, `Tool.transport`). */
export const BUILTIN_TRANSPORT = 'builtin';

/**
 * Upper bounds of the built-in tools' arguments. `artifact_read` and
 * `artifact_write` take a deployment bound at most this large (run-executor's
 * `ARTIFACT_TOOL_READ_MAX_BYTES`, `ARTIFACT_TOOL_WRITE_MAX_BYTES`); the
 * catalogue shows these ceilings.
 */
export const BUILTIN_TOOL_BOUNDS = {
  /** `wait`: longest sleep, in ms. */
  waitMaxMs: 600_000,
  /** `artifact_read`: bytes returned when `max_bytes` is absent (capped to the deployment bound). */
  artifactReadDefaultBytes: 8_192,
  /** `artifact_read`: largest deployment bound on `max_bytes`, in bytes. */
  artifactReadMaxBytes: 4_194_304,
  /** `artifact_write`: largest deployment bound on a stored artifact, in bytes. */
  artifactWriteMaxBytes: 67_108_864,
  /** `spawn_group`: most child tasks in one group. */
  groupMaxTasks: 16,
  /** `spawn_group`: longest child query, in characters. */
  groupQueryMaxChars: 32_000,
} as const;

/** A built-in tool's declaration. */
export interface BuiltinToolManifest {
  readonly name: string;
  readonly description: string;
  readonly transport: typeof BUILTIN_TRANSPORT;
  /** What a redelivered run may repeat. */
  readonly side_effect: SideEffectClass;
  /** The policy a tenant has not overridden (`tools.set_approval_policy`). */
  readonly approval_policy: ApprovalPolicy;
  readonly tags: readonly string[];
  /** Validates (and defaults) the arguments; a failure is `tool.invalid_args`. */
  readonly args: z.ZodType<Record<string, unknown>>;
  /** JSON Schema of the arguments as a caller sends them, generated from `args` (no `$schema`). */
  readonly input_schema: JsonObject;
}

/** The JSON Schema of a tool's arguments as a caller sends them (defaults optional), without `$schema`. */
export function argumentsJsonSchema(args: z.ZodType): JsonObject {
  const { $schema: _dialect, ...schema } = z.toJSONSchema(args, { io: 'input', unrepresentable: 'any' });
  return schema;
}

const NEVER: ApprovalPolicy = Object.freeze({ mode: 'never', on_timeout: 'reject' });
const ALWAYS: ApprovalPolicy = Object.freeze({ mode: 'always', on_timeout: 'reject' });
const SERVICE_TAGS = ['builtin', 'service'] as const;

type Declaration = Omit<BuiltinToolManifest, 'transport' | 'input_schema'>;

function manifest(declaration: Declaration): BuiltinToolManifest {
  return Object.freeze({
    ...declaration,
    transport: BUILTIN_TRANSPORT,
    tags: Object.freeze([...declaration.tags]),
    input_schema: argumentsJsonSchema(declaration.args),
  });
}

/** `artifact_read`'s arguments under a deployment bound of `maxBytes` on `max_bytes`. */
export function artifactReadArgs(maxBytes: number) {
  return z.strictObject({
    artifact_id: z.string().min(1).max(256),
    max_bytes: z.int().min(1).max(maxBytes).optional(),
  });
}

/** `artifact_write`'s arguments for artifacts of at most `maxBytes` (base64 content may be longer than its bytes). */
export function artifactWriteArgs(maxBytes: number) {
  return z.strictObject({
    content: z.string().max(maxBytes * 2),
    encoding: z.enum(['utf8', 'base64']).default('utf8'),
    mime_type: MimeType.default('text/plain'),
    name: z.string().min(1).max(255).optional(),
    namespace: z.string().min(1).max(256).default('run'),
  });
}

/** Every built-in tool, in the order a run lists them. */
export const BUILTIN_TOOL_MANIFESTS: readonly BuiltinToolManifest[] = Object.freeze([
  manifest({
    name: 'echo',
    description: 'Returns its arguments unchanged (as JSON).',
    side_effect: 'read_only',
    approval_policy: NEVER,
    tags: ['builtin'],
    args: z.looseObject({}),
  }),
  manifest({
    name: 'wait',
    description: `Sleeps for \`ms\` milliseconds (at most ${BUILTIN_TOOL_BOUNDS.waitMaxMs}); honours cancellation.`,
    side_effect: 'read_only',
    approval_policy: NEVER,
    tags: ['builtin'],
    args: z.strictObject({ ms: z.int().min(0).max(BUILTIN_TOOL_BOUNDS.waitMaxMs) }),
  }),
  manifest({
    name: 'fail',
    description: 'Fails its first `times` attempts (default 1), then succeeds. For tests.',
    side_effect: 'idempotent',
    approval_policy: NEVER,
    tags: ['builtin', 'test'],
    args: z.strictObject({
      times: z.int().min(0).default(1),
      class: z.enum(['transient', 'permanent']).default('transient'),
      message: z.string().max(1000).default('fail tool failed on purpose'),
    }),
  }),
  manifest({
    name: 'side_effect',
    description: 'Performs an unsafe, non-repeatable action that takes `ms` milliseconds. For tests.',
    side_effect: 'unsafe',
    approval_policy: NEVER,
    tags: ['builtin', 'test', 'unsafe'],
    args: z.looseObject({ ms: z.int().min(0).max(BUILTIN_TOOL_BOUNDS.waitMaxMs).default(0) }),
  }),
  manifest({
    name: 'sensitive_action',
    description: 'An unsafe action that a human must approve before it runs.',
    side_effect: 'unsafe',
    approval_policy: ALWAYS,
    tags: ['builtin', 'hitl', 'unsafe'],
    args: z.looseObject({}),
  }),
  manifest({
    name: 'memory_read',
    description:
      "Reads one key of the caller's memory (the caller's own entry, else the tenant's). Returns the item as JSON, or null.",
    side_effect: 'read_only',
    approval_policy: NEVER,
    tags: [...SERVICE_TAGS, 'memory'],
    args: z.strictObject({ key: MemoryKey }),
  }),
  manifest({
    name: 'memory_write',
    description: "Writes one key of the caller's own memory (any JSON value); later runs of the caller see it.",
    side_effect: 'idempotent',
    approval_policy: NEVER,
    tags: [...SERVICE_TAGS, 'memory'],
    args: z.strictObject({ key: MemoryKey, value: z.json() }),
  }),
  manifest({
    name: 'artifact_read',
    description: `Reads an artifact the caller may read: metadata and up to max_bytes (default ${BUILTIN_TOOL_BOUNDS.artifactReadDefaultBytes}, at most the deployment's bound) of content, UTF-8 for text types, else base64.`,
    side_effect: 'read_only',
    approval_policy: NEVER,
    tags: [...SERVICE_TAGS, 'artifact'],
    args: artifactReadArgs(BUILTIN_TOOL_BOUNDS.artifactReadMaxBytes),
  }),
  manifest({
    name: 'artifact_write',
    description:
      'Stores a new artifact in the caller\'s session (content as UTF-8 text, or base64 with encoding "base64"); returns its id.',
    side_effect: 'unsafe',
    approval_policy: NEVER,
    tags: [...SERVICE_TAGS, 'artifact', 'unsafe'],
    args: artifactWriteArgs(BUILTIN_TOOL_BOUNDS.artifactWriteMaxBytes),
  }),
  manifest({
    name: 'spawn_group',
    description: `Runs up to ${BUILTIN_TOOL_BOUNDS.groupMaxTasks} child tasks as a group and waits until every one ended; returns the group completion (each child's status and answer). fail_fast cancels the others once one fails.`,
    side_effect: 'idempotent',
    approval_policy: NEVER,
    tags: ['builtin', 'group'],
    args: z.strictObject({
      tasks: z
        .array(
          z.strictObject({
            query: z.string().min(1).max(BUILTIN_TOOL_BOUNDS.groupQueryMaxChars),
            agent_id: z.string().min(1).max(200).optional(),
          }),
        )
        .min(1)
        .max(BUILTIN_TOOL_BOUNDS.groupMaxTasks),
      fail_fast: z.boolean().default(false),
      retain_turn: z.boolean().default(true),
      description: z.string().max(1000).default(''),
    }),
  }),
]);

const BY_NAME: ReadonlyMap<string, BuiltinToolManifest> = new Map(BUILTIN_TOOL_MANIFESTS.map((m) => [m.name, m]));

/** The built-in tool named `name`, or undefined. */
export function getBuiltinToolManifest(name: string): BuiltinToolManifest | undefined {
  return BY_NAME.get(name);
}
