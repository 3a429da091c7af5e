import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventFrame } from '@ars/contracts';
import { mintToken, startTestSystem, uniqueIdentity } from '@ars/testkit';
import type { TestSystem } from '@ars/testkit';
import { arsShimDir, CLI_MAIN, cliEnv, readmeBlocks, ROOT, runCli, runShell, startCli } from './support/cli-process.ts';

/**
 * The `ars` client commands as a user runs them: separate processes against
 * the whole system, on scripted runs (`#script`), asserting on what they
 * print and on their exit codes (run --follow: 0 completed, 3 failed,
 * 130 Ctrl-C; 1 a refusal; 2 bad arguments).
 */

const execFileAsync = promisify(execFile);
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/;
const GATED = '#script tool:sensitive_action{"what":"launch"};finish:launched';

/** True when util-linux `script` can give the CLI a pseudo-terminal. */
async function hasScript(): Promise<boolean> {
  try {
    await execFileAsync('script', ['--version']);
    return true;
  } catch {
    return false;
  }
}

describe('the ars CLI against the system', () => {
  let sys: TestSystem;
  let pty = false;

  beforeAll(async () => {
    [sys, pty] = await Promise.all([startTestSystem({ mode: 'one-process' }), hasScript()]);
  });

  afterAll(async () => {
    await sys?.stop();
  });

  /** ARS_URL and the token of a fresh, scopeless identity. */
  async function caller(prefix: string): Promise<Record<string, string>> {
    const token = await mintToken(sys.baseUrl, { ...uniqueIdentity(prefix), scopes: [] });
    return { ARS_URL: sys.baseUrl, ARS_TOKEN: token };
  }

  /** Output with what changes from run to run (ids, durations, token counts) masked. */
  const masked = (text: string) =>
    text
      .replace(new RegExp(UUID.source, 'g'), '<id>')
      .replace(/\(\d+(\.\d)?m?s\)/g, '(<t>)')
      .replace(/· \d+(\.\d)?m?s ·/g, '· <t> ·')
      .replace(/\d+ tokens \(\d+ in, \d+ out\)/g, '<n> tokens');

  it("runs the README's CLI example as written and prints what the README shows", async () => {
    const [command, output] = await readmeBlocks('The CLI');
    expect(command?.lang).toBe('sh');
    expect(output?.lang).toBe('text');
    const shim = await arsShimDir();
    try {
      const result = await runShell(command!.code, shim.dir, await caller('readme'));
      expect(result.code, result.stderr).toBe(0);
      expect(masked(result.stdout)).toBe(masked(output!.code));
    } finally {
      await shim.remove();
    }
  });

  it('run --follow streams the text, prints each tool call and its result, and exits 0 when completed', async () => {
    const env = await caller('follow');
    const result = await runCli(
      ['run', '--follow', '#script tool:wait{ms:300};tool:echo{"text":"hi"};finish:All good'],
      env,
    );
    expect(result.code, result.stderr).toBe(0);
    const lines = result.stdout.split('\n');
    expect(lines[0]).toMatch(new RegExp(`^run ${UUID.source}$`));
    expect(lines).toContain('→ wait {"ms":300}');
    expect(lines).toContainEqual(expect.stringMatching(/^✓ wait \(\d+(ms|\.\ds)\)$/));
    expect(lines).toContain('→ echo {"text":"hi"}');
    expect(lines).toContain('All good');
    expect(lines.at(-2)).toMatch(/^✔ completed · \S+ · 3 steps · \d+ tokens \(\d+ in, \d+ out\) · \$0$/);
    expect(result.stdout).not.toContain('\x1b[');
  });

  it('run --follow exits 3 for a failed run and names its error code', async () => {
    const env = await caller('failed');
    const result = await runCli(['run', '--follow', '#script nope'], env);
    expect(result.code).toBe(3);
    expect(result.stdout).toMatch(/^✖ failed \(llm_error\) · /m);
  });

  it('run --follow --json prints one event frame per line, from task.spawned to the terminal one', async () => {
    const env = await caller('ndjson');
    const result = await runCli(['run', '--follow', '--json', '#script tool:echo{"n":1};finish:ok'], env);
    expect(result.code).toBe(0);
    const frames = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as EventFrame);
    expect(frames[0]?.type).toBe('task.spawned');
    expect(frames.at(-1)?.type).toBe('task.completed');
    expect(frames.map((f) => f.type)).toContain('tool.invoked');
    expect(new Set(frames.map((f) => f.run)).size).toBe(1);
  });

  it('approve answers the pause that run --follow printed, and the run goes on to its end', async () => {
    const env = await caller('approve');
    const follow = startCli(['run', '--follow', GATED], env);
    const [, token] = await follow.waitForOutput(/ {2}approve: ars approve (\S+)\n/);
    expect(follow.stdout()).toContain('⏸ sensitive_action {"what":"launch"} awaits approval: ');
    const approved = await runCli(['approve', token!, '--reason', 'looks fine'], env);
    expect(approved.code, approved.stderr).toBe(0);
    expect(approved.stdout).toMatch(new RegExp(`^approve of ${token} accepted for run ${UUID.source};`));
    const result = await follow.done;
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('✓ approved sensitive_action: looks fine\n');
    expect(result.stdout).toContain('→ sensitive_action {"what":"launch"}\n');
    expect(result.stdout).toMatch(/\nlaunched\n✔ completed · /);
  });

  it('reject ends the paused run failed, and run --follow exits 3', async () => {
    const env = await caller('reject');
    const follow = startCli(['run', '--follow', GATED], env);
    const [, token] = await follow.waitForOutput(/ {2}reject: {2}ars reject (\S+)\n/);
    const rejected = await runCli(['reject', token!, '--json'], env);
    expect(rejected.code, rejected.stderr).toBe(0);
    expect(JSON.parse(rejected.stdout)).toMatchObject({ accepted: true, method: 'reject' });
    const result = await follow.done;
    expect(result.code).toBe(3);
    expect(result.stdout).toContain('✗ rejected sensitive_action');
    expect(result.stdout).toMatch(/^✖ failed \(\w+\) · /m);
  });

  it('Ctrl-C stops following without cancelling, exits 130 and says how to cancel', async () => {
    const env = await caller('detach');
    const follow = startCli(['run', '--follow', '#script tool:wait{ms:30000};finish'], env);
    await follow.waitForOutput(/→ wait/);
    const [taskId] = UUID.exec(follow.stdout())!;
    follow.child.kill('SIGINT');
    const result = await follow.done;
    expect(result.code).toBe(130);
    expect(result.stderr).toContain(`stopped following ${taskId}; the run goes on.`);
    expect(result.stderr).toContain(`cancel it: ars cancel ${taskId}`);
    const listed = await runCli(['tasks', '--status', 'running', '--json'], env);
    expect((JSON.parse(listed.stdout) as { items: { task_id: string }[] }).items.map((t) => t.task_id)).toContain(
      taskId,
    );
    const cancelled = await runCli(['cancel', taskId, '--hard'], env);
    expect(cancelled.code, cancelled.stderr).toBe(0);
    expect(cancelled.stdout).toBe(`cancel accepted for run ${taskId}\n`);
  });

  it('pause parks a followed run, which prints how to resume; resume and redirect take it to its end', async () => {
    const env = await caller('steer');
    // Two long steps: the pause arrives during one of them and parks the run at the boundary after it.
    const follow = startCli(
      ['run', '--follow', '#script tool:wait{ms:3000};tool:wait{ms:3000};tool:echo{"n":1};finish:steered'],
      env,
    );
    await follow.waitForOutput(/→ wait/);
    const [taskId] = UUID.exec(follow.stdout())!;
    const paused = await runCli(['pause', taskId, '--reason', 'hold on'], env);
    expect(paused.code, paused.stderr).toBe(0);
    expect(paused.stdout).toBe(`pause accepted for run ${taskId}\n`);
    await follow.waitForOutput(new RegExp(`⏸ paused: hold on\n {2}resume: ars resume ${taskId}\n`));
    const redirected = await runCli(['redirect', taskId, 'finish', 'up', '--json'], env);
    expect(redirected.code, redirected.stderr).toBe(0);
    expect(JSON.parse(redirected.stdout)).toMatchObject({ accepted: true, method: 'redirect' });
    const resumed = await runCli(['resume', taskId], env);
    expect(resumed.code, resumed.stderr).toBe(0);
    const result = await follow.done;
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/▶ resumed/);
    expect(result.stdout).toContain('→ echo {"n":1}');
    const shown = await runCli(['call', 'tasks.get', JSON.stringify({ task_id: taskId })], env);
    expect(JSON.parse(shown.stdout)).toMatchObject({ task: { goal: 'finish up' } });
    const usage = await runCli(['redirect', taskId], env);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('redirect <task-id> "<new goal>"');
  });

  it('run without --follow prints the task id, and tasks lists it (a table, or JSON)', async () => {
    const env = await caller('tasks');
    const started = await runCli(['run', '#script finish:listed'], env);
    expect(started.code).toBe(0);
    const taskId = started.stdout.trim();
    expect(taskId).toMatch(new RegExp(`^${UUID.source}$`));
    const asJson = await runCli(['run', '--json', '#script finish:second'], env);
    expect(JSON.parse(asJson.stdout)).toMatchObject({ task_id: expect.stringMatching(UUID), reused: false });

    const table = await runCli(['tasks', '--limit', '5'], env);
    expect(table.code).toBe(0);
    const lines = table.stdout.split('\n');
    expect(lines[0]).toMatch(/^TASK\s+STATUS\s+CREATED\s+DURATION\s+QUERY$/);
    expect(lines).toContainEqual(expect.stringMatching(new RegExp(`^${taskId}\\s+\\w+\\s+.*#script finish:listed$`)));
    const listed = await runCli(['tasks', '--json'], env);
    expect((JSON.parse(listed.stdout) as { items: unknown[] }).items).toHaveLength(2);
  });

  it('events --pretty prints one readable line per frame until Ctrl-C', async () => {
    const env = await caller('pretty');
    const run = await runCli(['run', '--follow', '#script tool:echo{"x":1};finish:ok'], env);
    const [taskId] = UUID.exec(run.stdout)!;
    const events = startCli(['events', '--pretty', '--run', taskId, '--from', '0'], env);
    await events.waitForOutput(/task\.completed/);
    events.child.kill('SIGINT');
    const result = await events.done;
    expect(result.code).toBe(0);
    const lines = result.stdout.trim().split('\n');
    expect(lines[0]).toMatch(
      new RegExp(`^\\d\\d:\\d\\d:\\d\\d\\.\\d{3} {2}#\\d+ {2}task\\.spawned +${taskId} {2}kind=`),
    );
    expect(lines).toContainEqual(expect.stringMatching(/ tool\.invoked +\S+ {2}tool=echo transport=builtin$/));
  });

  it('prints the service error code and message and exits 1 when the service refuses', async () => {
    const env = await caller('refused');
    const result = await runCli(['approve', 'some-token', '--run', 'no-such-run'], env);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^ars approve: not_found \(HTTP 404\): /);
  });

  it('exits 2 with a usage error for bad arguments', async () => {
    const result = await runCli(['tasks', '--status', 'finished'], await caller('usage'));
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--status must be one of');
  });

  it('in a terminal, colors the output and keeps a progress line; NO_COLOR turns the colors off', async (context) => {
    if (!pty) context.skip();
    const env = await caller('pty');
    const command = `'${process.execPath}' '${CLI_MAIN}' run --follow '#script tool:wait{ms:1200};finish:ok'`;
    const inPty = (extra: Record<string, string>) =>
      execFileAsync('script', ['-qfec', command, '/dev/null'], { cwd: ROOT, env: cliEnv({ ...env, ...extra }) });
    const colored = await inPty({});
    expect(colored.stdout).toContain('\x1b[2K\x1b[2m… step ');
    expect(colored.stdout).toContain('\x1b[32m✔ completed\x1b[39m');
    const plain = await inPty({ NO_COLOR: '1' });
    expect(plain.stdout).toContain('✔ completed · ');
    expect(plain.stdout).not.toMatch(/\x1b\[(2|3\d)m/);
    expect(plain.stdout).toContain('\x1b[2K… step ');
  });
});
