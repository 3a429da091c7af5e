import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAKE_OPENAI_BEHAVIOURS, startFakeOpenAi, startTestSystem } from '@ars/testkit';
import type { FakeOpenAi, TestSystem } from '@ars/testkit';
import { arsShimDir, readmeBlocks, runShell } from './support/cli-process.ts';

/**
 * The README's "Use a real LLM", as written: its first block's environment
 * (`LLM_API_KEY`, `LLM_PRICES`) is the system's, its other blocks run with
 * bash against it, with one change: `https://api.openai.com/v1` is a fake
 * OpenAI-compatible server on loopback, which records the key of each call.
 * The CLI's token is its default, the dev bootstrap's (admin).
 */

const OPENAI = 'https://api.openai.com/v1';

describe('the README: use a real LLM', () => {
  let sys: TestSystem;
  let fake: FakeOpenAi;
  let shim: Awaited<ReturnType<typeof arsShimDir>>;
  let blocks: Awaited<ReturnType<typeof readmeBlocks>>;

  beforeAll(async () => {
    blocks = await readmeBlocks('Use a real LLM');
    const up = /^((?:\w+=(?:'[^']*'|\S+) )+)\.\/ars up\n$/.exec(blocks[0]?.code ?? '');
    if (up === null) throw new Error(`the first block is not "<VAR=value>… ./ars up": ${blocks[0]?.code}`);
    const env = Object.fromEntries(
      [...up[1]!.matchAll(/(\w+)=('[^']*'|\S+) /g)].map(([, name, value]) => [name!, value!.replace(/^'|'$/g, '')]),
    );
    [fake, shim, sys] = await Promise.all([
      startFakeOpenAi(),
      arsShimDir(),
      startTestSystem({ mode: 'one-process', env }),
    ]);
  });

  afterAll(async () => {
    await sys?.stop();
    await fake?.stop();
    await shim?.remove();
  });

  /** Runs a block with the fake server for api.openai.com, as the default CLI identity. */
  const runBlock = (code: string) =>
    runShell(code.replaceAll(OPENAI, fake.url(FAKE_OPENAI_BEHAVIOURS.toolThenAnswer)), shim.dir, {
      ARS_URL: sys.baseUrl,
    });

  it('has the three blocks: the environment, the agent and its run, the tenant key', () => {
    expect(blocks.map((b) => b.lang)).toEqual(['sh', 'sh', 'sh']);
    expect(blocks[1]?.code).toContain(OPENAI);
  });

  it('runs the configured agent on the endpoint with the LLM_API_KEY, streaming its answer', async () => {
    const before = fake.requests.length;
    const result = await runBlock(blocks[1]!.code);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('→ echo {"text":"hello"}\n');
    expect(result.stdout).toContain('The echo said hello.\n');
    expect(result.stdout).toMatch(/✔ completed · \S+ · 2 steps · \d+ tokens \(\d+ in, \d+ out\) · \$0\.0000\d+\n$/);
    const calls = fake.requests.slice(before);
    expect(calls).toHaveLength(2);
    for (const call of calls) {
      expect(call.authorization).toBe('Bearer sk-shared-key');
      expect(call.body['model']).toBe('gpt-4o-mini');
    }
  });

  it("uses the tenant's governance key instead once it is installed", async () => {
    const before = fake.requests.length;
    const result = await runBlock(blocks[2]!.code);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('"fingerprint": "sha256:');
    expect(result.stdout).toContain('The echo said hello.\n');
    const calls = fake.requests.slice(before);
    expect(calls.length).toBeGreaterThan(0);
    expect(calls.map((c) => c.authorization)).toEqual(calls.map(() => 'Bearer sk-tenant-key'));
  });
});
