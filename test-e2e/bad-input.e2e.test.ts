import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STEERING_CONTROLS } from '@ars/contracts';
import { mintToken, startTestSystem, uniqueIdentity } from '@ars/testkit';
import type { TestIdentity, TestSystem } from '@ars/testkit';
import { isTerminal } from './support/event-log.ts';
import { startWatched, storedRunEvents } from './support/runs.ts';
import type { WatchedRun } from './support/runs.ts';

/**
 * Bad input against the whole system: every method of the runs surface
 * (start, the nine controls, the task reads, the agent configuration it
 * depends on) gets malformed bodies and hostile member values over real
 * HTTP. Each answer is 200 or a 4xx in the error envelope, within the
 * request timeout: no 5xx, no hang. The gateway's unit tests pin each
 * refusal's code; this sweep checks that nothing the gateway lets through
 * breaks a service behind it, and that the runs in flight lose nothing.
 */

const METHODS: readonly string[] = [
  'start',
  ...STEERING_CONTROLS,
  'tasks.get',
  'tasks.list',
  'pause.list',
  'search.tasks',
  'agent_config.set_revision',
  'agent_config.get',
  'agent_config.list_revisions',
];

/** Members the methods above take, top level and in `payload`. */
const MEMBERS = [
  'query',
  'task_id',
  'agent_id',
  'idempotency_key',
  'priority',
  'input_artifact_ids',
  'filter',
  'cursor',
  'limit',
  'goal',
  'text',
  'message',
  'token',
  'event_id',
  'hard',
  'config',
  'input_artifact_dispositions',
  'scope',
] as const;

/** Members of `filter` (tasks.list, pause.list, search.tasks). */
const FILTER_MEMBERS = [
  'status',
  'kind',
  'parent_task_id',
  'since',
  'until',
  'text',
  'tenant_ids',
  'user_ids',
  'session_ids',
] as const;

/**
 * A body each method accepts, so that one hostile member added to it reaches
 * the service behind the gateway instead of being refused for what is missing.
 */
function validBody(method: string, run: string): Record<string, unknown> {
  switch (method) {
    case 'start':
      return { identity: {}, query: 'bad input sweep' };
    case 'tasks.get':
      return { identity: {}, task_id: run };
    case 'agent_config.set_revision':
      return { identity: {}, agent_id: 'sweep-agent', config: {} };
    case 'agent_config.get':
    case 'agent_config.list_revisions':
      return { identity: {}, agent_id: 'sweep-agent' };
    default:
      return { identity: STEERING_CONTROLS.includes(method as never) ? { run } : {} };
  }
}

/** Values of every JSON type, including the awkward ones. */
const VALUES: readonly unknown[] = [
  null,
  true,
  -1,
  2 ** 53,
  1e308,
  '',
  'x'.repeat(70_000),
  '\u0000\ud800ΩΩ',
  [],
  [null, { a: 1 }],
  {},
  { $where: '1', nested: { deeper: [{}] } },
];

/** A JSON value nested 20,000 levels deep: too deep for the stack to serialise once parsed. */
const DEEP = `${'{"a":['.repeat(10_000)}1${']}'.repeat(10_000)}`;

/** Whole bodies that are not the method's shape at all, or nest far too deep. */
const RAW_BODIES = [
  '',
  'not json',
  '[]',
  'null',
  '7',
  '"text"',
  '{"identity":',
  '{"identity":{}}{}',
  `{"identity":{},"payload":${DEEP}}`,
  `{"identity":{},"value":${DEEP}}`,
  `{"identity":${DEEP}}`,
];

const REQUEST_TIMEOUT_MS = 10_000;

interface Answer {
  readonly status: number;
  readonly body: unknown;
}

describe('bad input end to end', () => {
  let sys: TestSystem;
  let identity: TestIdentity;
  let token: string;
  let adminToken: string;

  async function post(method: string, body: string, headers: Record<string, string> = {}): Promise<Answer> {
    const response = await fetch(`${sys.baseUrl}/v1/control/${method}`, {
      method: 'POST',
      headers: {
        // The agent configuration methods need admin: without it the gateway refuses every body alike.
        authorization: `Bearer ${method.startsWith('agent_config.') ? adminToken : token}`,
        'content-type': 'application/json',
        'x-service-session': identity.session,
        ...headers,
      },
      body,
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // Kept as text: the assertion below names it.
    }
    return { status: response.status, body: parsed };
  }

  /** A refusal is a 4xx carrying exactly the envelope; anything else must be a 200. */
  function expectHandled(what: string, answer: Answer): void {
    const { status, body } = answer;
    if (status === 200) return;
    const envelope = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
    const handled =
      status >= 400 &&
      status < 500 &&
      Object.keys(envelope).sort().join() === 'code,message' &&
      typeof envelope['code'] === 'string';
    expect(handled, `${what} answered ${status} ${JSON.stringify(body).slice(0, 300)}`).toBe(true);
  }

  beforeAll(async () => {
    sys = await startTestSystem({ mode: 'one-process' });
    identity = uniqueIdentity('bad');
    token = await mintToken(sys.baseUrl, { ...identity, scopes: [] });
    adminToken = await mintToken(sys.baseUrl, { ...identity, scopes: ['admin'] });
  });

  afterAll(async () => {
    await sys?.stop();
  });

  it('answers every malformed body and hostile value with 200 or a 4xx envelope, and loses no run', async () => {
    const client = sys.client({ token, session: identity.session });
    // A run parked in a long tool call: the controls below aim at it.
    const live: WatchedRun = await startWatched(
      client,
      { query: '#script tool:wait{"ms":60000};finish:done' },
      { session: identity.session },
    );
    await live.log.next('tool.invoked');
    const run = live.taskId;

    const requests: [string, () => Promise<Answer>][] = [];
    for (const method of METHODS) {
      for (const raw of RAW_BODIES)
        requests.push([`${method} raw ${JSON.stringify(raw).slice(0, 60)}`, () => post(method, raw)]);
      for (const value of VALUES) {
        const shown = JSON.stringify(value).slice(0, 40);
        requests.push([`${method} identity=${shown}`, () => post(method, JSON.stringify({ identity: value }))]);
        requests.push([
          `${method} identity.run=${shown}`,
          () => post(method, JSON.stringify({ identity: { run: value } })),
        ]);
        for (const member of MEMBERS) {
          requests.push([
            `${method} ${member}=${shown}`,
            () => post(method, JSON.stringify({ identity: { run }, [member]: value })),
          ]);
          requests.push([
            `${method} payload.${member}=${shown}`,
            () => post(method, JSON.stringify({ identity: { run }, payload: { [member]: value } })),
          ]);
          requests.push([
            `${method} valid body + ${member}=${shown}`,
            () => post(method, JSON.stringify({ ...validBody(method, run), [member]: value })),
          ]);
        }
        for (const member of FILTER_MEMBERS) {
          requests.push([
            `${method} filter.${member}=${shown}`,
            () => post(method, JSON.stringify({ ...validBody(method, run), filter: { [member]: value } })),
          ]);
        }
      }
      requests.push([`${method} text/plain`, () => post(method, '{"identity":{}}', { 'content-type': 'text/plain' })]);
      requests.push([
        `${method} long session header`,
        () => post(method, '{"identity":{}}', { 'x-service-session': 's'.repeat(5_000) }),
      ]);
    }

    // Four at a time: the services see concurrent bad input, the two cores are not swamped.
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < requests.length) {
        const [what, send] = requests[next++] as [string, () => Promise<Answer>];
        expectHandled(what, await send());
      }
    };
    await Promise.all([worker(), worker(), worker(), worker()]);
    expect(requests.length).toBeGreaterThan(10_000);

    // Nothing was lost. The sweep's own well-formed hard cancel may have ended
    // the parked run already (then this one finds no live inbox: 404); either
    // way it ends cancelled, with exactly one terminal event.
    await client
      .call('cancel', { identity: { run }, payload: { hard: true } })
      .catch((error: unknown) => expect(error).toMatchObject({ status: 404, code: 'not_found' }));
    expect((await live.log.terminal()).type).toBe('task.cancelled');
    await live.log.close();
    const stored = await storedRunEvents(client, run, identity.session);
    expect(stored.filter((frame) => isTerminal(frame))).toHaveLength(1);
    // Every control the run received (the sweep's accepted ones) ended applied or rejected, none lost.
    const narrated = stored.filter((frame) => frame.type.startsWith('control.'));
    const received = narrated.filter((frame) => frame.type === 'control.received').length;
    const settled = narrated.filter((frame) => frame.type === 'control.applied' || frame.type === 'control.rejected');
    expect(received).toBeGreaterThan(0);
    expect(settled).toHaveLength(received);
    const fresh = await startWatched(client, { query: 'still here?' }, { session: identity.session });
    expect((await fresh.log.terminal()).type).toBe('task.completed');
    await fresh.log.close();
  }, 300_000);
});
