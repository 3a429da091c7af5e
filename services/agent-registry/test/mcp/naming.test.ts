import { describe, expect, it } from 'vitest';
import type { McpConnection } from '@ars/contracts';
import { resultBound } from '../../src/mcp/mcp-host.ts';
import { catalogueToolOf, exposedToolName, sideEffectOf } from '../../src/mcp/naming.ts';

const tool = (annotations?: Record<string, boolean>) => ({ name: 't', inputSchema: { type: 'object' }, annotations });
const CONNECTION: McpConnection = { server_id: 'srv', transport: 'stdio', command: 'x' };

describe('MCP tool naming', () => {
  it('exposes a tool as <server_id>__<tool>', () => {
    expect(exposedToolName('github', 'create_issue')).toBe('github__create_issue');
    expect(exposedToolName('everything', 'get-sum')).toBe('everything__get-sum');
  });

  it('refuses an exposed name over 64 characters or with a character outside [A-Za-z0-9_-]', () => {
    expect(exposedToolName('s', 'x'.repeat(61))).toBe(`s__${'x'.repeat(61)}`);
    expect(exposedToolName('s', 'x'.repeat(62))).toBeNull();
    expect(exposedToolName('s', 'a.b')).toBeNull();
    expect(exposedToolName('s', 'a b')).toBeNull();
    expect(exposedToolName('s', 'ü')).toBeNull();
  });

  it('classes a tool read_only, idempotent or unsafe from its annotations', () => {
    expect(sideEffectOf(tool({ readOnlyHint: true, idempotentHint: false }))).toBe('read_only');
    expect(sideEffectOf(tool({ idempotentHint: true }))).toBe('idempotent');
    expect(sideEffectOf(tool({ readOnlyHint: false, destructiveHint: true }))).toBe('unsafe');
    expect(sideEffectOf(tool())).toBe('unsafe');
  });

  it("gives a catalogue entry the connection's approval policy, else never", () => {
    expect(catalogueToolOf(CONNECTION, tool({ destructiveHint: true, openWorldHint: true }))).toEqual({
      name: 'srv__t',
      server_id: 'srv',
      server_tool: 't',
      transport: 'stdio',
      description: '',
      input_schema: { type: 'object' },
      side_effect: 'unsafe',
      approval_policy: { mode: 'never', on_timeout: 'reject' },
      tags: ['mcp', 'destructive', 'open_world'],
    });
    const policy = { mode: 'always', on_timeout: 'approve' } as const;
    expect(catalogueToolOf({ ...CONNECTION, approval_policy: policy }, tool())?.approval_policy).toEqual(policy);
    expect(catalogueToolOf(CONNECTION, { ...tool(), name: 'a.b' })).toBeNull();
  });

  it('bounds a result by MCP_RESULT_MAX_BYTES and by what one bus reply carries', () => {
    expect(resultBound(4 * 1024 * 1024, undefined)).toBe(4 * 1024 * 1024);
    expect(resultBound(4 * 1024 * 1024, 8 * 1024 * 1024)).toBe(4 * 1024 * 1024);
    expect(resultBound(4 * 1024 * 1024, 1024 * 1024)).toBe(1024 * 1024 - 16 * 1024);
  });
});
