import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CONTROL_PAYLOAD_LIMITS, START_QUERY_MAX_CHARS } from '@ars/contracts';
import { MAX_BODY_DEPTH } from '../src/http/request-body.ts';
import { routeOf } from './support/bodies.ts';
import { createHarness, scoped } from './support/harness.ts';
import type { Harness } from './support/harness.ts';

let h: Harness;

beforeEach(async () => {
  h = await createHarness();
});

afterEach(async () => {
  await h.close();
});

/** inject_context takes any JSON object as its payload, so only the bounds decide. */
const injectContext = (payload: unknown) => h.post(routeOf('inject_context'), { identity: { run: 'run-1' }, payload });

/** An object nested `levels` deep: the payload itself is level 1. */
function nested(levels: number): Record<string, unknown> {
  let value: Record<string, unknown> = {};
  for (let level = 1; level < levels; level += 1) value = { n: value };
  return value;
}

function withKeys(count: number): Record<string, number> {
  return Object.fromEntries(Array.from({ length: count }, (_, i) => [`k${i}`, i]));
}

/** A payload whose JSON is exactly `bytes` long, spread over five strings within the per-string bound. */
function ofSize(bytes: number): Record<string, string> {
  const names = ['s0', 's1', 's2', 's3', 's4'];
  const overhead = Buffer.byteLength(JSON.stringify(Object.fromEntries(names.map((name) => [name, '']))));
  const content = bytes - overhead;
  const each = Math.floor(content / names.length);
  return Object.fromEntries(
    names.map((name, i) => [name, 'x'.repeat(i === names.length - 1 ? content - each * (names.length - 1) : each)]),
  );
}

const { maxDepth, maxKeys, maxListItems, maxStringChars, maxTotalBytes } = CONTROL_PAYLOAD_LIMITS;

/** [bound, payload at the limit, payload one over]. */
const BOUNDS: ReadonlyArray<readonly [string, () => unknown, () => unknown]> = [
  ['nesting depth', () => nested(maxDepth), () => nested(maxDepth + 1)],
  ['keys', () => withKeys(maxKeys), () => withKeys(maxKeys + 1)],
  [
    'list items',
    () => ({ list: Array.from({ length: maxListItems }, (_, i) => i) }),
    () => ({ list: Array.from({ length: maxListItems + 1 }, (_, i) => i) }),
  ],
  [
    'characters per string',
    () => ({ text: 'c'.repeat(maxStringChars) }),
    () => ({ text: 'c'.repeat(maxStringChars + 1) }),
  ],
  ['total size', () => ofSize(maxTotalBytes), () => ofSize(maxTotalBytes + 1)],
];

describe('limits: control payload bounds', () => {
  it('builds size payloads of exactly the intended length', () => {
    expect(Buffer.byteLength(JSON.stringify(ofSize(maxTotalBytes)))).toBe(maxTotalBytes);
    expect(Buffer.byteLength(JSON.stringify(ofSize(maxTotalBytes + 1)))).toBe(maxTotalBytes + 1);
  });

  for (const [bound, atLimit, overLimit] of BOUNDS) {
    it(`forwards a payload at the ${bound} limit unchanged`, async () => {
      const payload = atLimit();
      const response = await injectContext(payload);
      expect(response.statusCode, response.body).toBe(200);
      expect(h.rpc.last?.body.payload).toEqual(payload);
    });

    it(`answers a payload one over the ${bound} limit with 422 payload_invalid and forwards nothing`, async () => {
      const response = await injectContext(overLimit());
      expect(response.statusCode).toBe(422);
      expect(response.json()).toMatchObject({ code: 'payload_invalid' });
      expect(h.rpc.calls).toHaveLength(0);
    });
  }

  it('checks the bounds before the payload schema', async () => {
    const response = await h.post(routeOf('cancel'), {
      identity: { run: 'r1' },
      payload: { junk: 'j'.repeat(maxStringChars + 1) },
    });
    expect(response.statusCode).toBe(422);
  });

  it('applies the bounds to every steering control', async () => {
    for (const control of [
      'cancel',
      'pause',
      'resume',
      'approve',
      'reject',
      'redirect',
      'inject_context',
      'user_message',
      'prioritize',
    ]) {
      const response = await h.post(routeOf(control), { identity: { run: 'r1' }, payload: nested(maxDepth + 1) });
      expect(response.statusCode, control).toBe(422);
    }
  });

  it('does not apply the control bounds to start', async () => {
    const response = await h.post(routeOf('start'), { identity: {}, query: 'q'.repeat(maxStringChars + 10) });
    expect(response.statusCode).toBe(200);
  });
});

describe('limits: the query of start', () => {
  it(`forwards a query of ${START_QUERY_MAX_CHARS} characters, counted as code points`, async () => {
    const query = '😀'.repeat(START_QUERY_MAX_CHARS);
    const response = await h.post(routeOf('start'), { identity: {}, query });
    expect(response.statusCode).toBe(200);
    expect(h.rpc.last?.body.query).toBe(query);
  });

  it('answers a query one character over with 400 invalid_request naming the bound, forwarding nothing', async () => {
    const response = await h.post(routeOf('start'), { identity: {}, query: 'x'.repeat(START_QUERY_MAX_CHARS + 1) });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({
      code: 'invalid_request',
      message: `start: query: has ${START_QUERY_MAX_CHARS + 1} characters; the limit is ${START_QUERY_MAX_CHARS} (Unicode code points)`,
    });
    expect(h.rpc.calls).toHaveLength(0);
  });
});

describe('limits: nesting depth of any body', () => {
  /** JSON text of an object whose member `value` starts a chain of `levels` nested lists (built as text: it may be too deep to serialise). */
  const bodyWithDeepValue = (head: string, levels: number) =>
    `{${head},"value":${'['.repeat(levels)}${']'.repeat(levels)}}`;

  it('answers a control payload nested far deeper than the stack could serialise with 422, forwarding nothing', async () => {
    const raw = `{"identity":{"run":"r1"},"payload":${'{"n":'.repeat(10_000)}{}${'}'.repeat(10_000)}}`;
    const response = await h.send('POST', routeOf('inject_context'), undefined, { raw });
    expect(response.statusCode, response.body).toBe(422);
    expect(response.json()).toMatchObject({ code: 'payload_invalid' });
    expect(h.rpc.calls).toHaveLength(0);
  });

  it(`forwards a body ${MAX_BODY_DEPTH} levels deep and answers one level more with 400 invalid_request`, async () => {
    const admin = h.token(scoped('admin'));
    const head = '"identity":{},"tier":"user","key":"k"';
    // The body is level 1 and `value` level 2, so its lists may add MAX_BODY_DEPTH - 1 levels.
    const atLimit = await h.send('POST', routeOf('memory.put'), undefined, {
      raw: bodyWithDeepValue(head, MAX_BODY_DEPTH - 1),
      token: admin,
    });
    expect(atLimit.statusCode, atLimit.body).toBe(200);
    expect(h.rpc.calls).toHaveLength(1);
    for (const levels of [MAX_BODY_DEPTH, 100_000]) {
      const response = await h.send('POST', routeOf('memory.put'), undefined, {
        raw: bodyWithDeepValue(head, levels),
        token: admin,
      });
      expect(response.statusCode, response.body).toBe(400);
      expect(response.json()).toMatchObject({ code: 'invalid_request' });
    }
    expect(h.rpc.calls).toHaveLength(1);
  });
});
