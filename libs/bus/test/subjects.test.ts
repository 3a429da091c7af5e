import { describe, expect, it } from 'vitest';
import { isServiceError } from '@ars/contracts';
import {
  MAX_SUBJECT_LENGTH,
  controlSubject,
  decodeToken,
  encodeToken,
  eventFilterSubject,
  eventSubject,
  parseEventSubject,
  rpcSubject,
  runsSubject,
} from '../src/index.ts';

const SUBJECT_SAFE_TOKEN = /^[A-Za-z0-9_-]+$/;

const CASES: readonly string[] = [
  '',
  ' ',
  '_',
  '__',
  '-',
  'a',
  'tenant-1',
  'acme.corp',
  '...',
  'a.b.c',
  '*',
  '>',
  'a.*.>',
  'with space',
  '\t\r\n',
  'ünïcödé',
  '日本語のテナント',
  '🙂👩‍👩‍👧',
  '\u0000',
  '\uD800',
  'x\uDC00y',
  '\uDBFF\uDFFF',
  'a'.repeat(2_000),
  '🙂'.repeat(500),
  '$SRV.PING',
  'ars.ev.>',
  '%2F',
  'UPPER/lower+plus=eq',
];

/** A deterministic generator (mulberry32) so a failure replays. */
function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Random strings over raw UTF-16 code units, lone surrogates included. */
function randomString(next: () => number): string {
  const length = Math.floor(next() * 40);
  const pools = [
    () => 0x20 + Math.floor(next() * 95),
    () => Math.floor(next() * 0x10000),
    () => 0xd800 + Math.floor(next() * 0x800),
  ];
  let s = '';
  for (let i = 0; i < length; i++) {
    const pick = pools[Math.floor(next() * pools.length)] ?? (() => 0x41);
    s += String.fromCharCode(pick());
  }
  return s;
}

describe('identity tokens', () => {
  it.each(CASES.map((s) => [JSON.stringify(s).slice(0, 40), s]))(
    'round-trips %s into a subject-safe token',
    (_label, s) => {
      const token = encodeToken(s);
      expect(token).toMatch(SUBJECT_SAFE_TOKEN);
      expect(decodeToken(token)).toBe(s);
    },
  );

  it('encodes the empty string as _', () => {
    expect(encodeToken('')).toBe('_');
    expect(decodeToken('_')).toBe('');
  });

  it('round-trips 2000 random strings, lone surrogates included, without collisions', () => {
    const next = rng(20240601);
    const seen = new Map<string, string>();
    for (let i = 0; i < 2_000; i++) {
      const s = randomString(next);
      const token = encodeToken(s);
      expect(token).toMatch(SUBJECT_SAFE_TOKEN);
      expect(decodeToken(token)).toBe(s);
      const earlier = seen.get(token);
      if (earlier !== undefined) expect(earlier).toBe(s);
      seen.set(token, s);
    }
  });

  it('keeps two lone surrogates apart (no U+FFFD collapse)', () => {
    expect(encodeToken('\uD800')).not.toBe(encodeToken('\uD801'));
    expect(encodeToken('\uD800')).not.toBe(encodeToken('\uFFFD'));
  });

  it.each(['', 'a.b', 'a*', 'has space', 'A', 'QQ=', '@@@@'])('refuses %j as a token', (token) => {
    expect(() => decodeToken(token)).toThrow();
  });
});

describe('event subjects', () => {
  const id = { tenant: 'acme.corp', user: 'ü*ser', session: 's >1', type: 'llm.completion.chunk' };

  it('lays out ars.ev.<t>.<u>.<s>.<type with its dots>, without the run', () => {
    const subject = eventSubject(id);
    const tokens = subject.split('.');
    expect(tokens.slice(0, 2)).toEqual(['ars', 'ev']);
    expect(tokens.slice(2, 5)).toEqual([id.tenant, id.user, id.session].map(encodeToken));
    expect(tokens.slice(5)).toEqual(['llm', 'completion', 'chunk']);
  });

  it('gives every run of a session the same subject per type (nats-server keeps state per subject)', () => {
    const events = ['r1', 'r2', ''].map((run) => eventSubject({ ...id, run } as typeof id));
    expect(new Set(events).size).toBe(1);
  });

  it('parses back what it built', () => {
    expect(parseEventSubject(eventSubject(id))).toEqual(id);
  });

  it('refuses to parse a subject outside ars.ev', () => {
    expect(() => parseEventSubject('ars.rpc.gateway.x')).toThrow();
    expect(() => parseEventSubject('ars.ev.a.b')).toThrow();
    expect(() => parseEventSubject('ars.ev.a.b.c')).toThrow();
    expect(() => parseEventSubject('ars.ev.a!.b.c.d.e')).toThrow();
  });

  it('refuses an event type that is not subject-safe', () => {
    expect(() => eventSubject({ ...id, type: 'a..b' })).toThrow();
    expect(() => eventSubject({ ...id, type: 'a.*' })).toThrow();
    expect(() => eventSubject({ ...id, type: 'a b' })).toThrow();
  });

  it('refuses an identity too long for a subject with invalid_request', () => {
    let caught: unknown;
    try {
      eventSubject({ ...id, tenant: 'x'.repeat(MAX_SUBJECT_LENGTH) });
    } catch (error) {
      caught = error;
    }
    expect(isServiceError(caught) && caught.code).toBe('invalid_request');
  });
});

describe('event filter subjects', () => {
  it('uses * for missing identity members and > for a missing type', () => {
    expect(eventFilterSubject({})).toBe('ars.ev.*.*.*.>');
    expect(eventFilterSubject({ tenant: 't' })).toBe(`ars.ev.${encodeToken('t')}.*.*.>`);
  });

  it('matches the subject of an event it selects', () => {
    const full = { tenant: 't', user: 'u', session: 's', type: 'task.started' };
    expect(eventFilterSubject(full)).toBe(eventSubject(full));
  });

  it('accepts trailing wildcards in the type', () => {
    expect(eventFilterSubject({ type: 'notification.>' })).toBe('ars.ev.*.*.*.notification.>');
    expect(eventFilterSubject({ type: 'task.*' })).toBe('ars.ev.*.*.*.task.*');
    expect(() => eventFilterSubject({ type: '>.task' })).toThrow();
  });
});

describe('other subjects', () => {
  it('builds ars.rpc.<service>.<method>', () => {
    expect(rpcSubject('run-executor', 'tasks.get')).toBe('ars.rpc.run-executor.tasks.get');
  });

  it('builds ars.runs.<priority>', () => {
    expect(runsSubject(5)).toBe('ars.runs.5');
  });

  it('builds ars.ctl.<encoded task id>', () => {
    expect(controlSubject('task.1 >')).toBe(`ars.ctl.${encodeToken('task.1 >')}`);
  });
});
