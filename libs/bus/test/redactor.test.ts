import { describe, expect, it } from 'vitest';
import { REDACTED, redactPayload, scrubString, scrubValue } from '../src/index.ts';

const JWT =
  'eyJhbGciOiJFUzI1NiIsImtpZCI6ImsxIn0.eyJzdWIiOiJhbGljZSIsInRlbmFudCI6ImFjbWUifQ.MEUCIQDx3Yb6kQ2n1t0xk4m9Zp8f2QnWl1bQeZl5bL5mR3pLQ';

describe('scrubString', () => {
  it.each([
    ['a JWT', `token was ${JWT} ok`, `token was ${REDACTED} ok`],
    ['a bearer token', 'Authorization: Bearer abc.def-ghi_123', `Authorization: ${REDACTED}`],
    ['an OpenAI key', 'key sk-proj-AbCdEf0123456789abcdef in use', `key ${REDACTED} in use`],
    ['an Anthropic key', 'sk-ant-api03-AbCdEf0123456789', REDACTED],
    ['a GitHub token', 'ghp_0123456789abcdefghijABCDEFGHIJ012345', REDACTED],
    ['an AWS access key', 'AKIAIOSFODNN7EXAMPLE', REDACTED],
    ['an api_key assignment', 'url?api_key=s3cr3t&x=1', `url?api_key=${REDACTED}&x=1`],
    ['a password assignment', 'password: hunter2', `password: ${REDACTED}`],
    ['URL credentials', 'https://bob:pa55@example.com/x', `https://${REDACTED}@example.com/x`],
    ['an email', 'ping alice.smith+ars@example.co.uk now', `ping ${REDACTED} now`],
    ['a long hex secret', 'hmac 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08', `hmac ${REDACTED}`],
    ['a long base64 secret', 'key: Zm9vYmFyQmF6cXV4MTIzNDU2Nzg5MGFiY2RlZmdoaWprbG1ub3A=', `key: ${REDACTED}`],
  ])('replaces %s', (_label, input, expected) => {
    expect(scrubString(input)).toBe(expected);
  });

  it.each([
    ['plain prose', 'Task finished: 3 of 4 members succeeded'],
    ['a uuid', 'task 3f2b6c1e-8a4d-4c2f-9b1e-2a7d5c9e0f13'],
    ['a deep link path', '/v1/sessions/session-123/runs/task-456/events'],
    ['an event type', 'notification.task_group_resolved'],
    ['a short hex id', 'commit 9f86d08'],
  ])('leaves %s alone', (_label, input) => {
    expect(scrubString(input)).toBe(input);
  });
});

describe('scrubValue', () => {
  it('drops values under secret-shaped keys and scrubs the rest deeply', () => {
    const value = { a: [{ apiKey: 'whatever', note: `mail bob@example.com` }], access_token: 'x', max_tokens: 5 };
    expect(scrubValue(value)).toEqual({
      a: [{ apiKey: REDACTED, note: `mail ${REDACTED}` }],
      access_token: REDACTED,
      max_tokens: 5,
    });
  });

  it('throws on a value it cannot represent', () => {
    expect(() => scrubValue({ f: () => 1 })).toThrow();
    expect(() => scrubValue(new Map())).toThrow();
  });

  it('throws on a cycle instead of recursing forever', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => scrubValue(cyclic)).toThrow(/deeper/);
  });
});

describe('redactPayload', () => {
  const schema = { shape: { Summary: {}, DeepLink: {}, Members: {}, MembersTruncated: {} } };

  it('keeps only the declared keys', () => {
    const out = redactPayload(schema, { Summary: 'ok', Undeclared: 'x', DeepLink: '/runs/1' });
    expect(out).toEqual({ Summary: 'ok', DeepLink: '/runs/1' });
  });

  it('scrubs declared values, nested ones included', () => {
    const out = redactPayload(schema, {
      Summary: `approve? ${JWT}`,
      Members: [{ TaskID: 't1', Error: 'Bearer abcdefghij' }],
      MembersTruncated: false,
    });
    expect(out).toEqual({
      Summary: `approve? ${REDACTED}`,
      Members: [{ TaskID: 't1', Error: REDACTED }],
      MembersTruncated: false,
    });
  });

  it('throws for a schema with no object shape', () => {
    expect(() => redactPayload({}, { Summary: 'x' })).toThrow(/shape/);
  });

  it('throws for a payload that is not an object', () => {
    expect(() => redactPayload(schema, 'secret')).toThrow();
    expect(() => redactPayload(schema, [1])).toThrow();
  });
});
