import { describe, expect, it } from 'vitest';
import { argumentsJsonSchema, BUILTIN_TOOL_MANIFESTS } from '@ars/contracts';
import type { RpcClient } from '@ars/bus';
import type { ArtifactIo } from '../../src/tools/artifact-io.ts';
import { BUILTIN_TOOLS } from '../../src/tools/builtins.ts';
import { createServiceTools } from '../../src/tools/service-tools.ts';
import { createSpawnGroupTool } from '../../src/engine/task-groups.ts';
import type { TaskGroupDeps } from '../../src/engine/task-groups.ts';

const unused = async (): Promise<never> => Promise.reject(new Error('unused'));
const serviceTools = (readMaxBytes = 65_536, writeMaxBytes = 1_048_576) =>
  createServiceTools({
    rpc: { call: unused } as unknown as RpcClient,
    artifacts: { read: unused, write: unused } as unknown as ArtifactIo,
    timeoutMs: 100,
    readMaxBytes,
    writeMaxBytes,
  });
const spawnGroup = () => createSpawnGroupTool({ pollMs: 100 } as unknown as TaskGroupDeps);
const engineTools = () => [...BUILTIN_TOOLS, ...serviceTools(), spawnGroup()];

describe('built-in tool manifests', () => {
  it('name exactly the tools the engine runs, in its order', () => {
    expect(BUILTIN_TOOL_MANIFESTS.map((m) => m.name)).toEqual(engineTools().map((t) => t.name));
  });

  it('give every engine tool its description, transport, side effect, approval policy and tags', () => {
    const byName = new Map(BUILTIN_TOOL_MANIFESTS.map((m) => [m.name, m]));
    for (const tool of engineTools()) {
      const manifest = byName.get(tool.name);
      expect(manifest, tool.name).toBeDefined();
      expect([tool.description, tool.transport, tool.sideEffect, tool.approval, tool.tags]).toEqual([
        manifest?.description,
        manifest?.transport,
        manifest?.side_effect,
        manifest?.approval_policy,
        manifest?.tags,
      ]);
    }
  });

  it("validate with the manifest's argument schema, which the catalogue shows as JSON Schema", () => {
    const byName = new Map(BUILTIN_TOOL_MANIFESTS.map((m) => [m.name, m]));
    for (const tool of BUILTIN_TOOLS) {
      expect(tool.args, tool.name).toBe(byName.get(tool.name)?.args);
      expect(argumentsJsonSchema(tool.args)).toEqual(byName.get(tool.name)?.input_schema);
    }
  });

  it("narrow the artifact tools' bounds to the deployment's", () => {
    const tools = new Map(serviceTools(64, 8).map((t) => [t.name, t]));
    expect(tools.get('artifact_read')?.args.safeParse({ artifact_id: 'a', max_bytes: 65 }).success).toBe(false);
    expect(tools.get('artifact_read')?.args.safeParse({ artifact_id: 'a', max_bytes: 64 }).success).toBe(true);
    expect(tools.get('artifact_write')?.args.safeParse({ content: 'x'.repeat(17) }).success).toBe(false);
  });
});
