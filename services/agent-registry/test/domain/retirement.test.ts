import { describe, expect, it } from 'vitest';
import { RETIREMENT_STAGES, retirementOperationHash, stagesAfter } from '../../src/domain/retirement.ts';

describe('retirement stages', () => {
  it('runs every release stage after started, the rest after a stage, none after completed', () => {
    expect(stagesAfter('started')).toEqual([...RETIREMENT_STAGES]);
    expect(stagesAfter('user_variants')).toEqual(['session_settings', 'agent_skills']);
    expect(stagesAfter('agent_skills')).toEqual([]);
    expect(stagesAfter('completed')).toEqual([]);
  });

  it('hashes one retirement the same way every time and another generation differently', () => {
    const one = { tenant: 't', agent_id: 'a', generation: 1, head_revision_id: 'r' };
    expect(retirementOperationHash(one)).toBe(retirementOperationHash({ ...one }));
    expect(retirementOperationHash(one)).not.toBe(retirementOperationHash({ ...one, generation: 2 }));
    expect(retirementOperationHash(one)).toMatch(/^sha256:[0-9a-f]{64}$/);
  });
});
