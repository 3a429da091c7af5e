import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { METHODS, SERVICE_NAMES, STEERING_CONTROLS, findRoute, getMethod, methodsOfService } from '../src/index.ts';
import type { AuthClass, MethodDef, ServiceName } from '../src/index.ts';
import { PROTOCOL_SPEC, mentions } from './spec-text.ts';

const shapeOf = (schema: z.ZodType) => (schema as unknown as { shape: Record<string, z.ZodType> }).shape;

const CONTROL_ONLY_FAMILIES = new Set(['start', 'steering', 'search', 'posture', 'topology', 'artifacts', 'mcp']);
const BOTH_FAMILIES = new Set(['tasks', 'sessions']);

function expectedRoutes(m: MethodDef): string[] {
  const control = `/v1/control/${m.name}`;
  const family = `/v1/${m.name.replaceAll('.', '/')}`;
  if (m.name === 'events.subscribe') return ['/v1/events'];
  if (CONTROL_ONLY_FAMILIES.has(m.family)) return [control];
  if (BOTH_FAMILIES.has(m.family)) return [control, family];
  return [family];
}

describe('method registry', () => {
  it('holds exactly 126 methods with unique names', () => {
    expect(METHODS).toHaveLength(126);
    expect(new Set(METHODS.map((m) => m.name)).size).toBe(126);
  });

  it('names every method verbatim as the protocol reference does', () => {
    const missing = METHODS.map((m) => m.name).filter((name) => !mentions(PROTOCOL_SPEC, name));
    expect(missing).toEqual([]);
  });

  it('serves every route once across all methods', () => {
    const routes = METHODS.flatMap((m) => m.routes);
    expect(new Set(routes).size).toBe(routes.length);
    expect(routes).toHaveLength(126 + 7);
  });

  it('follows the route rule for every method', () => {
    const wrong = METHODS.filter((m) => JSON.stringify(m.routes) !== JSON.stringify(expectedRoutes(m))).map(
      (m) => m.name,
    );
    expect(wrong).toEqual([]);
  });

  it('marks the surface control exactly when the canonical route is under /v1/control', () => {
    for (const m of METHODS) {
      expect(m.surface, m.name).toBe(m.routes[0]?.startsWith('/v1/control/') ? 'control' : 'family');
    }
  });

  it('uses POST everywhere except GET for events.subscribe', () => {
    expect(METHODS.filter((m) => m.httpMethod === 'GET').map((m) => m.name)).toEqual(['events.subscribe']);
  });

  it('gives every control-surface response a required protocol_version', () => {
    for (const m of METHODS.filter((x) => x.surface === 'control')) {
      const member = shapeOf(m.response).protocol_version;
      expect(member, m.name).toBeDefined();
      expect(member?.safeParse(undefined).success, m.name).toBe(false);
    }
  });

  it('assigns every method to the owning service of the API plan', () => {
    const owner = (name: string): ServiceName => {
      if (/^(runtime\.|metrics\.snapshot$|topology\.snapshot$|events\.|search\.(events|query)$)/.test(name))
        return 'gateway';
      if (/^(start|tasks\.|pause\.list$|search\.tasks$|runs\.set_overrides$|flows\.)/.test(name)) return 'run-executor';
      if ((STEERING_CONTROLS as readonly string[]).includes(name)) return 'run-executor';
      if (/^(sessions\.|state\.history$|search\.sessions$)/.test(name)) return 'session';
      if (/^(artifacts\.|search\.artifacts$)/.test(name)) return 'artifact';
      if (/^memory\./.test(name)) return 'memory';
      if (/^(governance\.|llm\.posture$|auth\.rotate_token$)/.test(name)) return 'governance';
      if (/^(agent_config\.|agents\.|tools\.|mcp\.)/.test(name)) return 'agent-registry';
      throw new Error(`no owner rule for ${name}`);
    };
    for (const m of METHODS) expect(m.service, m.name).toBe(owner(m.name));
  });

  it('lists the methods of a service in registry order', () => {
    for (const service of SERVICE_NAMES) {
      expect(methodsOfService(service)).toEqual(METHODS.filter((m) => m.service === service));
    }
    expect(methodsOfService('memory').map((m) => m.name)).toEqual([
      'memory.delete',
      'memory.get',
      'memory.health',
      'memory.list',
      'memory.put',
      'memory.strategy_trace',
    ]);
  });

  it('finds a method by name and by any of its routes', () => {
    expect(getMethod('start')?.routes).toEqual(['/v1/control/start']);
    expect(getMethod('no.such.method')).toBeUndefined();
    expect(findRoute('/v1/control/tasks.get')?.name).toBe('tasks.get');
    expect(findRoute('/v1/tasks/get')?.name).toBe('tasks.get');
    expect(findRoute('/v1/events')?.name).toBe('events.subscribe');
    expect(findRoute('/v1/flows/runs/list')?.name).toBe('flows.runs.list');
    expect(findRoute('/v1/agent_config/session/skills/list')?.name).toBe('agent_config.session.skills.list');
    expect(findRoute('/v1/control/search.tasks')?.name).toBe('search.tasks');
    expect(findRoute('/v1/control/flows.list')).toBeUndefined();
    expect(findRoute('/v1/tasks/get/')).toBeUndefined();
  });

  it('names requests and responses as the spec does', () => {
    const names = (name: string) => [getMethod(name)?.requestName, getMethod(name)?.responseName];
    expect(names('start')).toEqual(['StartRequest', 'StartResponse']);
    expect(names('redirect')).toEqual(['ControlRequest', 'ControlResponse']);
    expect(names('tasks.get')).toEqual(['TaskGetRequest', 'TaskDetail']);
    expect(names('runtime.info')).toEqual(['RuntimeInfoRequest', 'RuntimeInfo']);
    expect(names('llm.posture')).toEqual(['RuntimeInfoRequest', 'LLMPostureResponse']);
    expect(names('topology.snapshot')).toEqual(['TopologySnapshotRequest', 'TopologyProjection']);
    expect(names('tools.describe')).toEqual(['ToolDescribeRequest', 'ToolManifest']);
    expect(names('flows.runs.describe')).toEqual(['FlowRunDescribeRequest', 'FlowRunDescription']);
    expect(names('agents.drain')).toEqual(['AgentControlRequest', 'AgentControlResponse']);
    expect(names('agents.permissions')).toEqual(['AgentPermissionsRequest', 'AgentPermissionsResponse']);
    expect(names('mcp.servers.list')).toEqual(['MCPServersListRequest', 'MCPServersListResponse']);
    expect(names('mcp.apps.tool_context')).toEqual(['ToolContextRequest', 'ToolContextResponse']);
    expect(names('mcp.servers.read_resource')).toEqual(['ReadMCPResourceRequest', 'ReadMCPResourceResponse']);
    expect(names('mcp.servers.set_raw_html_trust')).toEqual([
      'MCPServerSetRawHTMLTrustRequest',
      'MCPServerSetRawHTMLTrustResponse',
    ]);
    expect(names('runs.set_overrides')).toEqual(['RunSetOverridesRequest', 'RunSetOverridesResponse']);
    expect(names('agent_config.set_llm_params')).toEqual([
      'AgentConfigSetLLMParamsRequest',
      'AgentConfigSetLLMParamsResponse',
    ]);
    expect(names('agent_config.session.skills.upsert')).toEqual([
      'AgentConfigSessionSkillsUpsertRequest',
      'AgentConfigSessionSkillsUpsertResponse',
    ]);
    expect(names('agent_config.user.skills.list')).toEqual([
      'AgentConfigUserSkillsListRequest',
      'AgentConfigUserSkillsListResponse',
    ]);
  });

  it('spells every request and response name as the spec shows it, or by its stated pattern', () => {
    const pascal = (s: string) =>
      s
        .split(/[._]/)
        .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
        .join('');
    const stem = (n: string) => n.replace(/(Request|Response)$/, '');
    const byPattern = (m: MethodDef, n: string): boolean => {
      if (m.family === 'agents') return stem(n) === `Agent${pascal(m.name.slice('agents.'.length))}`;
      if (/^agent_config\.(session|user)\./.test(m.name))
        return stem(n) === `AgentConfig${pascal(m.name.slice('agent_config.'.length))}`;
      // events.subscribe has no body and no named request in the spec (docs/decisions.md).
      return m.name === 'events.subscribe' && (n === 'EventsSubscribeRequest' || n === 'EventFrame');
    };
    const wrong = METHODS.flatMap((m) =>
      [m.requestName, m.responseName]
        .filter((n) => !PROTOCOL_SPEC.includes(n) && !PROTOCOL_SPEC.includes(stem(n)) && !byPattern(m, n))
        .map((n) => `${m.name}: ${n}`),
    );
    expect(wrong).toEqual([]);
  });
});

describe('auth classes, per the spec tables', () => {
  const expected: ReadonlyArray<readonly [string, readonly AuthClass[]]> = [
    ['start', ['M']],
    ['cancel', ['M']],
    ['prioritize', ['M']],
    ['tasks.get', ['R']],
    ['tasks.list', ['R', 'XA']],
    ['pause.list', ['R', 'XA']],
    ['events.subscribe', ['R', 'X']],
    ['events.aggregate', ['R', 'X']],
    ['events.list', ['R', 'X']],
    ['sessions.delete', ['M']],
    ['sessions.inspect', ['R']],
    ['sessions.list', ['R', 'X']],
    ['sessions.set_title', ['M']],
    ['search.query', ['R', 'X']],
    ['runtime.info', ['R', 'X']],
    ['governance.posture', ['R', 'X']],
    ['topology.snapshot', ['R', 'XA']],
    ['artifacts.put', ['M']],
    ['artifacts.get_ref', ['R']],
    ['artifacts.list', ['R', 'X']],
    ['artifacts.delete', ['M', 'A']],
    ['memory.put', ['M', 'A']],
    ['memory.list', ['R', 'X']],
    ['memory.strategy_trace', ['R']],
    ['tools.get', ['R']],
    ['tools.set_approval_policy', ['M', 'A']],
    ['flows.list', ['R', 'XA']],
    ['flows.run', ['M', 'A']],
    ['flows.runs.describe', ['R']],
    ['agents.force_stop', ['M', 'A']],
    ['agents.list', ['R', 'X']],
    ['agents.tools', ['R']],
    ['mcp.servers.probe', ['M']],
    ['mcp.servers.refresh_binding', ['M', 'A']],
    ['mcp.servers.refresh_discovery', ['M']],
    ['mcp.apps.call_tool', ['M']],
    ['mcp.servers.read_resource', ['R']],
    ['runs.set_overrides', ['M']],
    ['state.history', ['R']],
    ['auth.rotate_token', ['M', 'A']],
    ['governance.get_tenant_overrides', ['R', 'A']],
    ['governance.set_posture', ['M', 'A']],
    ['agent_config.diff', ['R', 'A']],
    ['agent_config.set_revision', ['M', 'A']],
    ['agent_config.skills.list', ['R', 'A']],
    ['agent_config.session.set_user_prompt', ['M']],
    ['agent_config.user.skills.list', ['R']],
    ['agent_config.user.get', ['R']],
    ['agent_config.user.rollback', ['M']],
  ];

  it.each(expected)('%s is %j', (name, auth) => {
    expect(getMethod(name)?.auth).toEqual(auth);
  });

  it('marks every admin-tier agent_config method A and no other agent_config method', () => {
    const tiered = /^agent_config\.(session|user)\./;
    for (const m of METHODS.filter((x) => x.family === 'agent_config')) {
      expect(m.auth.includes('A'), m.name).toBe(!tiered.test(m.name));
    }
  });

  it('requires the agent_config:user claim on exactly the five per-user variant methods', () => {
    expect(METHODS.filter((m) => m.requiredScope === 'agent_config:user').map((m) => m.name)).toEqual([
      'agent_config.user.diff',
      'agent_config.user.get',
      'agent_config.user.list_revisions',
      'agent_config.user.rollback',
      'agent_config.user.set_revision',
    ]);
  });

  it('carries the cross-tenant surfaces table', () => {
    const crossing = Object.fromEntries(METHODS.filter((m) => m.crossing).map((m) => [m.name, m.crossing]));
    const fleet = { tenant: 'admin_or_fleet' };
    expect(crossing).toEqual({
      'artifacts.list': { tenant: 'admin_or_fleet', user: 'admin_or_fleet' },
      'artifacts.put': { tenant: 'admin' },
      'artifacts.delete': { tenant: 'admin' },
      'artifacts.get_ref': { tenant: 'never' },
      'runtime.counters': fleet,
      'runtime.drivers': fleet,
      'runtime.health': fleet,
      'runtime.info': fleet,
      'metrics.snapshot': fleet,
      'governance.posture': fleet,
      'llm.posture': fleet,
      'topology.snapshot': { tenant: 'admin' },
      'state.history': { tenant: 'admin', user: 'admin', session: 'admin', refusal: 'not_found' },
      // Not in the spec's table: admin impersonation of a tenant (decisions, "tasks.get filters by the full triple").
      'tasks.get': { tenant: 'admin', refusal: 'not_found' },
    });
  });

  it('allows only the own identity on sessions.delete', () => {
    expect(METHODS.filter((m) => m.ownIdentityOnly).map((m) => m.name)).toEqual(['sessions.delete']);
  });

  it('gives the nine controls their minimum steering tiers and nothing else a tier', () => {
    const tiers = Object.fromEntries(METHODS.filter((m) => m.steering).map((m) => [m.name, m.steering]));
    expect(tiers).toEqual({
      cancel: 'owner_user',
      pause: 'owner_user',
      resume: 'owner_user',
      approve: 'owner_user',
      reject: 'owner_user',
      redirect: 'owner_user',
      inject_context: 'session_user',
      user_message: 'session_user',
      prioritize: 'admin',
    });
  });
});
