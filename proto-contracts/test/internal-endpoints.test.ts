import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  ERROR_CODES,
  GOVERNANCE_ADMIT_LLM_CALL,
  INTERNAL_ENDPOINTS,
  SERVICE_NAMES,
  SESSION_ADMIT,
  ServiceError,
  fromErrorReply,
  getInternalEndpoint,
  internalEndpointsOfService,
  parseInternalReply,
  parseInternalRequest,
  refuse,
  refusalOf,
  toErrorReply,
} from '../src/index.ts';

/** Every `_x.y` endpoint a service serves or calls today. */
const EXPECTED = [
  '_agent.effective_config',
  '_agent.erase_session',
  '_agent.resolve',
  '_artifact.download_begin',
  '_artifact.erase_session',
  '_artifact.resolve',
  '_artifact.upload_abort',
  '_artifact.upload_begin',
  '_governance.admission_posture',
  '_governance.admit_llm_call',
  '_governance.effective_overrides',
  '_governance.failover',
  '_governance.open_secret',
  '_governance.provider_key',
  '_governance.record_cost',
  '_governance.record_costs',
  '_governance.record_token_rotation',
  '_governance.seal_secret',
  '_governance.tenant_budget',
  '_mcp.call_tool',
  '_mcp.cancel_call',
  '_memory.caller_read',
  '_memory.caller_write',
  '_memory.erase_session',
  '_memory.prompt_blocks',
  '_memory.tenant_usage',
  '_oauth.begin',
  '_oauth.complete',
  '_session.admit',
  '_tasks.agent_metrics',
  '_tasks.agent_outcomes',
  '_tasks.agent_runs',
  '_tasks.erase_session',
  '_tools.catalogue',
  '_tools.record_calls',
];

describe('internal endpoint registry', () => {
  it('holds every internal endpoint once, by name', () => {
    const names = INTERNAL_ENDPOINTS.map((e) => e.name);
    expect([...names].sort()).toEqual(EXPECTED);
    for (const name of names) expect(getInternalEndpoint(name)?.name).toBe(name);
    expect(getInternalEndpoint('_health')).toBeUndefined();
  });

  it('gives every endpoint an owner, callers, a strict request schema and a reply schema', () => {
    for (const endpoint of INTERNAL_ENDPOINTS) {
      expect(SERVICE_NAMES, endpoint.name).toContain(endpoint.service);
      expect(endpoint.callers.length, endpoint.name).toBeGreaterThan(0);
      expect(endpoint.callers, endpoint.name).not.toContain(endpoint.service);
      expect(endpoint.request, endpoint.name).toBeInstanceOf(z.ZodObject);
      // A reply is an object, or a union of objects told apart by a member (`_oauth.begin`'s `status`).
      const replies = endpoint.reply instanceof z.ZodDiscriminatedUnion ? endpoint.reply.options : [endpoint.reply];
      for (const reply of replies) expect(reply, endpoint.name).toBeInstanceOf(z.ZodObject);
      // Strict: an unknown member is refused (`catchall` never).
      expect((endpoint.request as z.ZodObject).def.catchall?._zod.def.type, endpoint.name).toBe('never');
      expect(endpoint.summary.length, endpoint.name).toBeGreaterThan(0);
    }
  });

  it('declares each refusal under a catalogue code', () => {
    for (const endpoint of INTERNAL_ENDPOINTS) {
      for (const [reason, refusal] of Object.entries(endpoint.refusals)) {
        expect(reason, endpoint.name).toMatch(/^[a-z][a-z_]*$/);
        expect(Object.keys(ERROR_CODES), `${endpoint.name} ${reason}`).toContain(refusal.code);
      }
    }
  });

  it('splits the registry by owner', () => {
    const owned = SERVICE_NAMES.flatMap((service) => internalEndpointsOfService(service));
    expect(owned).toHaveLength(INTERNAL_ENDPOINTS.length);
    expect(internalEndpointsOfService('governance').map((e) => e.name)).toContain('_governance.admit_llm_call');
  });
});

describe('refusals', () => {
  it('builds a refusal with its declared code, retryable and reason', () => {
    const error = refuse(GOVERNANCE_ADMIT_LLM_CALL, 'budget_exceeded', 'budget_exceeded: spent');
    expect(error).toBeInstanceOf(ServiceError);
    expect(error).toMatchObject({ code: 'rate_limited', status: 429, retryable: false, reason: 'budget_exceeded' });
    expect(refuse(GOVERNANCE_ADMIT_LLM_CALL, 'rate_limited', 'x').retryable).toBe(true);
    expect(error.toEnvelope()).toEqual({ code: 'rate_limited', message: 'budget_exceeded: spent' });
  });

  it("reads a refusal's reason only when the endpoint declares it", () => {
    const erased = refuse(SESSION_ADMIT, 'session_erased', 'gone');
    expect(refusalOf(SESSION_ADMIT, erased)).toBe('session_erased');
    expect(refusalOf(GOVERNANCE_ADMIT_LLM_CALL, erased)).toBeUndefined();
    expect(refusalOf(SESSION_ADMIT, new ServiceError('session_erased', 'session_erased: no reason'))).toBeUndefined();
    expect(refusalOf(SESSION_ADMIT, new Error('session_erased'))).toBeUndefined();
  });
});

describe('the error reply on the wire', () => {
  it('round-trips code, message, retryable and reason', () => {
    const sent = refuse(GOVERNANCE_ADMIT_LLM_CALL, 'rate_limited', 'rate_limited: bucket empty');
    const wire = JSON.parse(JSON.stringify(toErrorReply(sent))) as unknown;
    expect(wire).toEqual({
      status: 429,
      code: 'rate_limited',
      message: 'rate_limited: bucket empty',
      retryable: true,
      reason: 'rate_limited',
    });
    const received = fromErrorReply(wire);
    expect(received).toMatchObject({ code: 'rate_limited', retryable: true, reason: 'rate_limited' });
    expect(refusalOf(GOVERNANCE_ADMIT_LLM_CALL, received)).toBe('rate_limited');
  });

  it('carries retryable without a reason, and omits the reason member', () => {
    const wire = toErrorReply(new ServiceError('unavailable', 'busy', { retryable: false }));
    expect(wire).toEqual({ status: 503, code: 'unavailable', message: 'busy', retryable: false });
    expect(fromErrorReply(wire)).toMatchObject({ code: 'unavailable', retryable: false, reason: undefined });
  });

  it('reads a reply from before retryable and reason: retryable follows the code', () => {
    expect(fromErrorReply({ status: 503, code: 'unavailable', message: 'x' })).toMatchObject({
      code: 'unavailable',
      retryable: true,
      reason: undefined,
    });
    expect(fromErrorReply({ status: 404, code: 'not_found', message: 'x' }).retryable).toBe(false);
  });

  it('reads what it cannot understand as internal, never throwing', () => {
    expect(fromErrorReply({ code: 'teapot', message: 'short and stout' })).toMatchObject({
      code: 'internal',
      message: 'short and stout',
    });
    expect(fromErrorReply('nonsense')).toMatchObject({ code: 'internal', message: 'internal error' });
    expect(fromErrorReply({ code: 'conflict', message: 'x', reason: 7, retryable: 'yes' })).toMatchObject({
      code: 'conflict',
      retryable: false,
      reason: undefined,
    });
  });
});

/** What `fn` throws (undefined when it returns). */
function thrownBy(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  return undefined;
}

describe('request and reply parsing', () => {
  it('refuses a bad request as invalid_request naming the first bad path', () => {
    const thrown = thrownBy(() => parseInternalRequest(SESSION_ADMIT, { tenant: 't', user: 'u' }));
    expect(thrown).toBeInstanceOf(ServiceError);
    expect(thrown).toMatchObject({
      code: 'invalid_request',
      message: expect.stringMatching(/^invalid _session\.admit request: session: /),
    });
  });

  it('reads an empty body as {}', () => {
    expect(() => parseInternalRequest(SESSION_ADMIT, undefined)).toThrow(/session.admit request: tenant/);
  });

  it('treats a reply that fails its schema as internal', () => {
    expect(thrownBy(() => parseInternalReply(SESSION_ADMIT, { state: 'vanished' }))).toBeInstanceOf(ServiceError);
    expect(thrownBy(() => parseInternalReply(SESSION_ADMIT, null))).toMatchObject({
      code: 'internal',
      message: expect.stringContaining('malformed _session.admit reply from session'),
    });
    expect(parseInternalReply(SESSION_ADMIT, { state: 'open', reuse_ms: 5, added_later: true })).toEqual({
      state: 'open',
      reuse_ms: 5,
    });
  });
});
