import { describe, expect, it } from 'vitest';
import { addressOf, checkRecord, toItem } from '../../src/domain/memory-record.ts';
import type { MemoryRecord } from '../../src/domain/memory-record.ts';

const OWNER = { tenant: 't', user: 'u', session: 's' };

function sound(): MemoryRecord {
  return {
    ...addressOf(OWNER, 'session', 'k'),
    value_json: '{"a":1}',
    size_bytes: 7,
    version: 1,
    created_at: '2025-01-01T00:00:00.000Z',
    updated_at: '2025-01-01T00:00:00.000Z',
  };
}

describe('memory records', () => {
  it('addresses the tenant tier without user and session, the user tier without session', () => {
    expect(addressOf(OWNER, 'tenant', 'k')).toMatchObject({ user: '', session: '' });
    expect(addressOf(OWNER, 'user', 'k')).toMatchObject({ user: 'u', session: '' });
    expect(addressOf(OWNER, 'session', 'k')).toMatchObject({ user: 'u', session: 's' });
  });

  it('gives each tier and owner its own id', () => {
    const ids = new Set([
      addressOf(OWNER, 'tenant', 'k')._id,
      addressOf(OWNER, 'user', 'k')._id,
      addressOf(OWNER, 'session', 'k')._id,
      addressOf({ ...OWNER, user: 'v' }, 'user', 'k')._id,
    ]);
    expect(ids.size).toBe(4);
  });

  it('accepts a sound record', () => {
    expect(checkRecord(sound())).toEqual({ ok: true, record: sound() });
  });

  it.each([
    ['a missing field', { value_json: undefined }, 'value_json: Invalid input: expected string, received undefined'],
    ['unparsable JSON', { value_json: '{', size_bytes: 1 }, 'value is not valid JSON'],
    ['a wrong size', { size_bytes: 8 }, 'size_bytes does not match the value'],
    ['a foreign id', { _id: 'session:other' }, 'id does not match the address'],
    ['a tier without its owner', { session: '' }, 'session does not match the tier'],
    ['an unknown tier', { tier: 'galaxy' }, expect.stringContaining('tier')],
  ])('finds a record with %s corrupt', (_name, change, reason) => {
    expect(checkRecord({ ...sound(), ...change })).toEqual({ ok: false, reason });
  });

  it('leaves user and session out of a tenant item on the wire', () => {
    const item = toItem({ ...sound(), ...addressOf(OWNER, 'tenant', 'k') });
    expect(item).not.toHaveProperty('user');
    expect(item).not.toHaveProperty('session');
    expect(item.value).toEqual({ a: 1 });
  });
});
