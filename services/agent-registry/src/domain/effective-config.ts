import type { AgentConfigContent, LlmParams, SystemBlock, ToolExposure } from '@ars/contracts';
import { contentHash } from '@ars/service-kit';
import { effectiveSkills } from './skills.ts';
import type { ScopedSkill, SkillScope } from './skills.ts';

/**
 * The effective configuration of a run, resolved in this order (a later
 * layer wins where two set the same thing):
 *
 * 1. `agent`: the agent's head revision, or the built-in default;
 * 2. `tenant_overrides`: governance's tenant LLM overrides; `model`,
 *    `temperature`, `max_tokens`, `reasoning_effort` go into `llm_params`,
 *    `extra_instructions` becomes an extra system block;
 * 3. `user_variant`: the caller's per-user variant; each member it sets
 *    replaces the agent's, except `llm_params` (merged member by member) and
 *    `tool_exposure` (intersected: a variant only hides tools); replacing
 *    `extra_system_blocks` keeps the tenant's instructions block;
 * 4. `session`: the session's user prompt (a last prompt layer) and source
 *    disables (MCP connections of a disabled source are dropped; the list
 *    travels as `source_disables` for the built-in sources);
 * 5. `skills`: session, user, agent and tenant skills (see
 *    {@link effectiveSkills}), each appended as an extra system block;
 *    `skills` holds their names.
 *
 * Run overrides (`runs.set_overrides`) come after all of these and are
 * applied by the run executor.
 */

/** The layers, in the order they apply. */
export const LAYERS = ['agent', 'tenant_overrides', 'user_variant', 'session', 'skills'] as const;
export type LayerName = (typeof LAYERS)[number];

/** Governance's tenant LLM overrides: the members currently set. */
export interface TenantOverrides {
  readonly model?: string | undefined;
  readonly temperature?: number | undefined;
  readonly max_tokens?: number | undefined;
  readonly reasoning_effort?: string | undefined;
  readonly extra_instructions?: string | undefined;
}

/** What the session tier holds for this session and agent (already merged, see the session-settings store). */
export interface SessionLayerInput {
  readonly user_prompt?: string | undefined;
  readonly source_disables?: readonly string[] | undefined;
}

/** Everything the layers read. */
export interface EffectiveInputs {
  readonly agentId: string;
  readonly agent: { readonly revision_id: string | null; readonly config: AgentConfigContent };
  /** Governance's answer: a configuration is never resolved without it. */
  readonly tenant: TenantOverrides;
  readonly variant: { readonly revision_id: string; readonly config: AgentConfigContent } | null;
  readonly session: SessionLayerInput;
  readonly skills: readonly ScopedSkill[];
}

/** What one layer did: the configuration paths it set (dotted), in the order set. */
export interface EffectiveLayer {
  readonly layer: LayerName;
  /** `agent`: the revision (null: the built-in default); `user_variant`: the variant revision when there is one. */
  readonly revision_id?: string | null;
  readonly applied_keys: string[];
}

/** A skill of the effective configuration. */
export interface EffectiveSkill {
  readonly name: string;
  readonly scope: SkillScope;
  readonly origin: string;
  readonly content_hash: string;
}

/** The resolved configuration (the `_agent.effective_config` answer). */
export interface EffectiveConfig {
  readonly agent_id: string;
  readonly revision_id: string | null;
  readonly variant_revision_id?: string;
  readonly config: AgentConfigContent;
  readonly source_disables: string[];
  readonly skills: EffectiveSkill[];
  readonly layers: EffectiveLayer[];
  /** `sha256:` of the canonical JSON of `{config, source_disables}`: what a task records. */
  readonly content_hash: string;
}

/** The name of the extra system block carrying the tenant's `extra_instructions`. */
export const TENANT_INSTRUCTIONS_BLOCK = 'tenant:extra_instructions';
/** The name of the prompt layer carrying the session's user prompt. */
export const SESSION_PROMPT_LAYER = 'session:user_prompt';

/** A tool is visible under the result iff it is visible under both. */
export function intersectExposure(a: ToolExposure | undefined, b: ToolExposure): ToolExposure {
  if (a === undefined || a.mode === 'all') return b;
  if (b.mode === 'all') return a;
  if (a.mode === 'allow_list' && b.mode === 'allow_list') {
    return { mode: 'allow_list', tools: a.tools.filter((t) => b.tools.includes(t)) };
  }
  if (a.mode === 'deny_list' && b.mode === 'deny_list') {
    return { mode: 'deny_list', tools: [...a.tools, ...b.tools.filter((t) => !a.tools.includes(t))] };
  }
  const allow = a.mode === 'allow_list' ? a : b;
  const deny = a.mode === 'deny_list' ? a : b;
  return { mode: 'allow_list', tools: allow.tools.filter((t) => !deny.tools.includes(t)) };
}

const LLM_OVERRIDE_MEMBERS = ['model', 'temperature', 'max_tokens', 'reasoning_effort'] as const;

/** The working state between layers: the tenant's block stays apart so a variant cannot drop it. */
interface Working {
  config: AgentConfigContent;
  tenantBlock?: SystemBlock;
  skillBlocks: SystemBlock[];
  sourceDisables: string[];
}

function applyTenant(state: Working, overrides: TenantOverrides): string[] {
  const applied: string[] = [];
  const params: Record<string, unknown> = { ...state.config.llm_params };
  for (const member of LLM_OVERRIDE_MEMBERS) {
    if (overrides[member] === undefined) continue;
    params[member] = overrides[member];
    applied.push(`llm_params.${member}`);
  }
  if (applied.length > 0) state.config = { ...state.config, llm_params: params as LlmParams };
  if (overrides.extra_instructions !== undefined && overrides.extra_instructions !== '') {
    state.tenantBlock = { name: TENANT_INSTRUCTIONS_BLOCK, text: overrides.extra_instructions };
    applied.push('extra_system_blocks');
  }
  return applied;
}

function applyVariant(state: Working, variant: AgentConfigContent): string[] {
  const applied: string[] = [];
  const next: Record<string, unknown> = { ...state.config };
  for (const [key, value] of Object.entries(variant)) {
    if (value === undefined) continue;
    if (key === 'llm_params') {
      const params = value as LlmParams;
      next.llm_params = { ...state.config.llm_params, ...params };
      applied.push(...Object.keys(params).map((member) => `llm_params.${member}`));
    } else if (key === 'tool_exposure') {
      next.tool_exposure = intersectExposure(state.config.tool_exposure, value as ToolExposure);
      applied.push(key);
    } else {
      next[key] = value;
      applied.push(key);
    }
  }
  state.config = next as AgentConfigContent;
  return applied;
}

function applySession(state: Working, session: SessionLayerInput): string[] {
  const applied: string[] = [];
  if (session.user_prompt !== undefined && session.user_prompt !== '') {
    const layers = state.config.prompt_layers ?? [];
    state.config = {
      ...state.config,
      prompt_layers: [...layers, { name: SESSION_PROMPT_LAYER, text: session.user_prompt }],
    };
    applied.push('prompt_layers');
  }
  const disables = [...new Set(session.source_disables ?? [])];
  if (disables.length > 0) {
    state.sourceDisables = disables;
    applied.push('source_disables');
    const connections = state.config.mcp_connections;
    if (connections?.some((c) => disables.includes(c.server_id))) {
      state.config = { ...state.config, mcp_connections: connections.filter((c) => !disables.includes(c.server_id)) };
      applied.push('mcp_connections');
    }
  }
  return applied;
}

/** The system block text of a skill: its name, description and triggers, then its content. */
export function skillBlockText(skill: ScopedSkill): string {
  const head = [`Skill: ${skill.name}`];
  if (skill.description !== undefined && skill.description !== '') head.push(skill.description);
  if (skill.triggers.length > 0) head.push(`Use when: ${skill.triggers.join('; ')}`);
  return `${head.join('\n')}\n\n${skill.content}`;
}

function applySkills(state: Working, skills: readonly ScopedSkill[]): { applied: string[]; used: ScopedSkill[] } {
  const membership = state.config.skills;
  const used = effectiveSkills(skills, membership);
  if (used.length === 0 && membership === undefined) return { applied: [], used };
  state.config = { ...state.config, skills: used.map((s) => s.name) };
  state.skillBlocks = used.map((s) => ({ name: `skill:${s.name}`.slice(0, 128), text: skillBlockText(s) }));
  return { applied: used.length > 0 ? ['skills', 'extra_system_blocks'] : ['skills'], used };
}

function assembleBlocks(state: Working): AgentConfigContent {
  const extra = [
    ...(state.config.extra_system_blocks ?? []),
    ...(state.tenantBlock === undefined ? [] : [state.tenantBlock]),
    ...state.skillBlocks,
  ];
  if (extra.length === 0) return state.config;
  return { ...state.config, extra_system_blocks: extra };
}

/** Applies the layers to `inputs` (see the module comment for the order and rules). */
export function resolveEffectiveConfig(inputs: EffectiveInputs): EffectiveConfig {
  const state: Working = { config: { ...inputs.agent.config }, skillBlocks: [], sourceDisables: [] };
  const layers: EffectiveLayer[] = [
    { layer: 'agent', revision_id: inputs.agent.revision_id, applied_keys: Object.keys(inputs.agent.config).sort() },
  ];
  layers.push({ layer: 'tenant_overrides', applied_keys: applyTenant(state, inputs.tenant) });
  layers.push(
    inputs.variant === null
      ? { layer: 'user_variant', applied_keys: [] }
      : {
          layer: 'user_variant',
          revision_id: inputs.variant.revision_id,
          applied_keys: applyVariant(state, inputs.variant.config),
        },
  );
  layers.push({ layer: 'session', applied_keys: applySession(state, inputs.session) });
  const skills = applySkills(state, inputs.skills);
  layers.push({ layer: 'skills', applied_keys: skills.applied });

  const config = assembleBlocks(state);
  return {
    agent_id: inputs.agentId,
    revision_id: inputs.agent.revision_id,
    ...(inputs.variant === null ? {} : { variant_revision_id: inputs.variant.revision_id }),
    config,
    source_disables: state.sourceDisables,
    skills: skills.used.map(({ name, scope, origin, content_hash }) => ({ name, scope, origin, content_hash })),
    layers,
    content_hash: contentHash({ config, source_disables: state.sourceDisables }),
  };
}
