import { describe, expect, it } from 'vitest';
import { decideUpsert, effectiveSkills, ownerKey, skillContentHash } from '../../src/domain/skills.ts';
import type { ScopedSkill } from '../../src/domain/skills.ts';

const facts = (origin: string, hash = 'h1') => ({ origin, content_hash: hash });

describe('decideUpsert', () => {
  it.each([
    ['nothing stored', null, facts('manual'), false, { kind: 'insert' }],
    ['the same origin and content', facts('manual'), facts('manual'), false, { kind: 'idempotent' }],
    [
      'the same origin, new content',
      facts('manual'),
      facts('manual', 'h2'),
      false,
      { kind: 'replace', promotion: false },
    ],
    ['a pack skill without overwrite', facts('pack:a'), facts('manual'), false, { kind: 'refuse_overwrite' }],
    ['a pack skill with overwrite', facts('pack:a'), facts('manual'), true, { kind: 'replace', promotion: false }],
    ['another pack without overwrite', facts('pack:a'), facts('pack:b'), false, { kind: 'refuse_overwrite' }],
    ['a proposal being installed', facts('proposed'), facts('manual'), false, { kind: 'replace', promotion: true }],
    ['a proposal over an installed skill', facts('manual'), facts('proposed'), true, { kind: 'refuse_proposal' }],
  ] as const)('over %s decides %o', (_what, existing, incoming, overwrite, decision) => {
    expect(decideUpsert(existing, incoming, overwrite)).toEqual(decision);
  });
});

describe('skill identity', () => {
  it('hashes the skill as written, defaulting triggers to none', () => {
    expect(skillContentHash({ name: 'a', content: 'c' })).toBe(
      skillContentHash({ name: 'a', content: 'c', triggers: [] }),
    );
    expect(skillContentHash({ name: 'a', content: 'c' })).not.toBe(skillContentHash({ name: 'a', content: 'd' }));
  });

  it('keys owners apart even when members would concatenate alike', () => {
    expect(ownerKey({ tenant: 'a', scope: 'user', user: 'b' })).not.toBe(
      ownerKey({ tenant: 'a', scope: 'session', user: 'b' }),
    );
    expect(ownerKey({ tenant: 'a.b', scope: 'tenant' })).not.toBe(
      ownerKey({ tenant: 'a', scope: 'tenant', agent_id: 'b' }),
    );
  });
});

describe('effectiveSkills', () => {
  const skill = (name: string, scope: ScopedSkill['scope'], origin = 'manual'): ScopedSkill => ({
    name,
    scope,
    origin,
    content_hash: `${scope}:${name}`,
    content: `${scope} ${name}`,
    triggers: [],
  });

  it('lets the narrowest scope win a name: session, user, agent, tenant', () => {
    const used = effectiveSkills(
      [skill('x', 'tenant'), skill('x', 'session'), skill('x', 'user'), skill('y', 'agent'), skill('y', 'user')],
      undefined,
    );
    expect(used.map((s) => [s.name, s.scope])).toEqual([
      ['x', 'session'],
      ['y', 'user'],
    ]);
  });

  it('leaves proposals out', () => {
    expect(effectiveSkills([skill('x', 'session', 'proposed')], undefined)).toEqual([]);
  });

  it('takes tenant-library skills only as the membership names them', () => {
    const all = [skill('a', 'tenant'), skill('b', 'tenant'), skill('c', 'user')];
    expect(effectiveSkills(all, ['a']).map((s) => s.name)).toEqual(['a', 'c']);
    expect(effectiveSkills(all, undefined).map((s) => s.name)).toEqual(['a', 'b', 'c']);
  });
});
