import type { AgentConfigContent } from '@ars/contracts';

/**
 * The configuration of the runtime's default agent while no revision has been
 * written under its id: the offline `scripted` provider and nothing else, so
 * that a fresh installation runs without any setup.
 */
export const BUILTIN_DEFAULT_CONFIG: AgentConfigContent = Object.freeze({
  llm_provider: Object.freeze({ provider_name: 'scripted', provider: 'scripted' }),
}) as AgentConfigContent;
