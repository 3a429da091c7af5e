import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { METHODS, SCOPES } from '@ars/contracts';
import type { MethodDef } from '@ars/contracts';
import { minimalBody } from '@ars/testkit';
import { createHarness, liveInstance } from './support/harness.ts';
import type { Harness } from './support/harness.ts';

/**
 * Every method's declared gate, enforced in order (401, then 403, then
 * 400/422, then the handler), generated from the registry: each method ×
 * each caller × each body. A caller the gate refuses gets the refusal
 * whatever the body, so it learns nothing of the body's rules.
 */

const CALLERS = {
  'no token': null,
  scopeless: [],
  'console:fleet': [SCOPES.consoleFleet],
  admin: [SCOPES.admin],
  'agent_config:user': [SCOPES.agentConfigUser],
} as const satisfies Record<string, readonly string[] | null>;
type Caller = keyof typeof CALLERS;

type BodyKind = 'valid' | 'empty' | 'garbage';
const BODIES: readonly BodyKind[] = ['valid', 'empty', 'garbage'];

/** What the declared gate predicts: a refusal (status and code), or that the gate lets the call through. */
type Prediction = { readonly status: number; readonly code: string } | 'passes';

function claimRefusal(method: MethodDef, scopes: readonly string[]): Prediction | undefined {
  if (method.auth.includes('A') && !scopes.includes(SCOPES.admin)) return { status: 403, code: 'identity_scope_required' };
  if (method.requiredScope !== undefined && !scopes.includes(method.requiredScope)) {
    return { status: 403, code: 'scope_mismatch' };
  }
  return undefined;
}

function predict(method: MethodDef, caller: Caller, body: BodyKind): Prediction {
  const scopes = CALLERS[caller];
  if (scopes === null) return { status: 401, code: 'identity_required' };
  const refused = claimRefusal(method, scopes);
  if (refused !== undefined) return refused;
  if (body === 'garbage') return { status: 400, code: 'invalid_request' };
  if (body === 'empty' && !method.request.safeParse({}).success) return { status: 400, code: 'invalid_request' };
  return 'passes';
}

/** The body kinds a method takes over HTTP: events.subscribe is a GET whose inputs are headers and the query. */
function bodiesOf(method: MethodDef): readonly BodyKind[] {
  return method.httpMethod === 'GET' ? [] : BODIES;
}

describe('the declared gate of every method, in order', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await createHarness();
    h.discovery.instances = [liveInstance('governance', ['governance.posture', 'llm.posture'])];
  });

  afterAll(async () => {
    await h.close();
  });

  function send(method: MethodDef, caller: Caller, body: BodyKind) {
    const scopes = CALLERS[caller];
    const token = scopes === null ? null : h.token({ scopes: [...scopes] });
    const route = method.routes[0] ?? '';
    if (method.httpMethod === 'GET') return h.send('GET', route, undefined, { token });
    if (body === 'garbage') return h.post(route, undefined, { token, raw: '{"identity": {' });
    return h.post(route, body === 'empty' ? {} : minimalBody(method).body, { token });
  }

  it('covers all 126 methods', () => {
    expect(METHODS).toHaveLength(126);
  });

  for (const method of METHODS) {
    describe(method.name, () => {
      for (const caller of Object.keys(CALLERS) as Caller[]) {
        const kinds = bodiesOf(method);
        // A GET is refused before its inputs are read; one that passes opens the event stream (tested elsewhere).
        if (kinds.length === 0 && caller !== 'no token') continue;
        for (const body of kinds.length === 0 ? (['empty'] as const) : kinds) {
          const expected = predict(method, caller, body);
          const title = expected === 'passes' ? 'passes the gate' : `${expected.status} ${expected.code}`;
          it(`${caller}, ${body} body: ${title}`, async () => {
            const response = await send(method, caller, body);
            if (expected === 'passes') {
              // Past the gate: whatever the owner answers, never a refusal of the gate's own.
              expect([400, 401, 403], response.body).not.toContain(response.statusCode);
            } else {
              expect(response.statusCode, response.body).toBe(expected.status);
              expect(response.json()).toMatchObject({ code: expected.code });
            }
          });
        }
      }
    });
  }
});
