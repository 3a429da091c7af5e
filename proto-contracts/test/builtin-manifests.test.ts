import { describe, expect, it } from 'vitest';
import {
  ApprovalPolicy,
  BUILTIN_TOOL_MANIFESTS,
  BUILTIN_TRANSPORT,
  getBuiltinToolManifest,
  ToolManifest,
} from '../src/index.ts';

describe('built-in tool manifests', () => {
  it('are named uniquely, within what LLM function names allow', () => {
    const names = BUILTIN_TOOL_MANIFESTS.map((m) => m.name);
    expect(new Set(names).size).toBe(names.length);
    for (const name of names) expect(name).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
  });

  it('each read as a ToolManifest of the builtin source, with a valid default approval policy', () => {
    for (const m of BUILTIN_TOOL_MANIFESTS) {
      const wire = { ...m, source: BUILTIN_TRANSPORT, tags: [...m.tags] };
      expect(ToolManifest.safeParse(wire).success, m.name).toBe(true);
      expect(ApprovalPolicy.parse(m.approval_policy)).toEqual(m.approval_policy);
      expect(m.transport).toBe('builtin');
      expect(m.tags).toContain('builtin');
    }
  });

  it('carry an object JSON Schema of their arguments that survives JSON', () => {
    for (const m of BUILTIN_TOOL_MANIFESTS) {
      expect(m.input_schema.type, m.name).toBe('object');
      expect(m.input_schema).not.toHaveProperty('$schema');
      expect(JSON.parse(JSON.stringify(m.input_schema))).toEqual(m.input_schema);
    }
  });

  it('leave defaulted arguments optional in the JSON Schema and apply the defaults when validating', () => {
    const fail = getBuiltinToolManifest('fail');
    expect(fail?.input_schema.required ?? []).toEqual([]);
    expect(fail?.args.parse({})).toEqual({ times: 1, class: 'transient', message: 'fail tool failed on purpose' });
  });

  it('declare sensitive_action as needing approval and every other built-in as not', () => {
    const always = BUILTIN_TOOL_MANIFESTS.filter((m) => m.approval_policy.mode === 'always').map((m) => m.name);
    expect(always).toEqual(['sensitive_action']);
    expect(getBuiltinToolManifest('nope')).toBeUndefined();
  });
});
