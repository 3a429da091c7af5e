/**
 * A schema-valid body (without `identity`) for each of the 34 agent_config
 * methods, by tier: what the authority tables call every method with.
 */
export const ADMIN_BODIES: Readonly<Record<string, Record<string, unknown>>> = {
  'agent_config.add_mcp_connection': {
    agent_id: 'a',
    connection: { server_id: 's', transport: 'stdio', command: 'x' },
  },
  'agent_config.diff': { agent_id: 'a', from_revision_id: 'r' },
  'agent_config.get': { agent_id: 'a' },
  'agent_config.list_revisions': { agent_id: 'a' },
  'agent_config.register_oauth_mcp_capability': {
    agent_id: 'a',
    capability: { server_id: 's', provider_name: 'p', scopes: [] },
  },
  'agent_config.remove_mcp_connection': { agent_id: 'a', server_id: 's' },
  'agent_config.remove_oauth_mcp_capability': { agent_id: 'a', server_id: 's', provider_name: 'p' },
  'agent_config.remove_oauth_provider': { agent_id: 'a', provider_name: 'p' },
  'agent_config.retire': { agent_id: 'a' },
  'agent_config.rollback': { agent_id: 'a', to_revision_id: 'r' },
  'agent_config.set_extra_system_blocks': { agent_id: 'a', blocks: [] },
  'agent_config.set_llm_params': { agent_id: 'a', params: {} },
  'agent_config.set_llm_provider': { agent_id: 'a', provider: { provider_name: 'p', provider: 'scripted' } },
  'agent_config.set_mcp_discovery_origins': { agent_id: 'a', origins: [] },
  'agent_config.set_oauth_provider': { agent_id: 'a', provider: { provider_name: 'p', credential_broker: 'b' } },
  'agent_config.set_prompt_layers': { agent_id: 'a', layers: [] },
  'agent_config.set_revision': { agent_id: 'a', config: {} },
  'agent_config.set_tool_exposure': { agent_id: 'a', exposure: { mode: 'all' } },
  'agent_config.skills.delete': { name: 'x' },
  'agent_config.skills.list': {},
  'agent_config.skills.upsert': { skill: { name: 'x', content: 'y' } },
};

export const SESSION_USER_BODIES: Readonly<Record<string, Record<string, unknown>>> = {
  'agent_config.session.set_source_disables': { sources: [] },
  'agent_config.session.set_user_prompt': { prompt: '' },
  'agent_config.session.skills.delete': { name: 'x' },
  'agent_config.session.skills.list': {},
  'agent_config.session.skills.upsert': { skill: { name: 'x', content: 'y' } },
  'agent_config.user.skills.delete': { name: 'x' },
  'agent_config.user.skills.list': {},
  'agent_config.user.skills.upsert': { skill: { name: 'x', content: 'y' } },
};

export const PER_USER_BODIES: Readonly<Record<string, Record<string, unknown>>> = {
  'agent_config.user.diff': { agent_id: 'a', from_revision_id: 'r' },
  'agent_config.user.get': { agent_id: 'a' },
  'agent_config.user.list_revisions': { agent_id: 'a' },
  'agent_config.user.rollback': { agent_id: 'a', to_revision_id: 'r' },
  'agent_config.user.set_revision': { agent_id: 'a', config: {} },
};
