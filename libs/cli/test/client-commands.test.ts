import { describe, expect, it } from 'vitest';
import type { MethodResponse } from '@ars/client';
import { runCli } from '../src/cli.ts';
import { formatTasks } from '../src/commands/task-commands.ts';
import type { Io } from '../src/io.ts';

/** An Io whose ARS_URL is a closed port: a command that gets past its arguments fails with exit 1. */
function captureIo(): Io & { out: () => string; err: () => string } {
  let out = '';
  let err = '';
  return {
    env: { ARS_URL: 'http://127.0.0.1:9', ARS_TOKEN: 't' },
    isTty: false,
    stdout: (text) => (out += text),
    stderr: (text) => (err += text),
    out: () => out,
    err: () => err,
  };
}

describe('client command arguments', () => {
  it.each([
    [['run'], 'run needs a query'],
    [['run', '--follow', '  '], 'run needs a query'],
    [['run', 'q', '--priority', 'high'], '--priority must be an integer'],
    [['run', 'q', '--agnet', 'a'], "Unknown option '--agnet'"],
    [['tasks', '--status', 'done'], '--status must be one of pending, running, paused, complete, failed, cancelled'],
    [['tasks', '--limit', '0'], '--limit must be a positive integer'],
    [['tasks', 'extra'], 'tasks takes options only'],
    [['approve'], 'approve needs a pause token'],
    [['reject', 'a', 'b'], 'reject takes one pause token'],
    [['cancel'], 'cancel takes one task id'],
    [['events', '--pretty', '--json'], '--pretty and --json exclude each other'],
  ])('refuses %j with a usage error (exit 2) before any request', async (argv, message) => {
    const io = captureIo();
    expect(await runCli(argv, io)).toBe(2);
    expect(io.err()).toContain(message);
    expect(io.err()).toContain('Run "ars help" for usage.');
    expect(io.out()).toBe('');
  });

  it('exits 1 naming the code when the gateway cannot be reached', async () => {
    const io = captureIo();
    expect(await runCli(['run', 'hello'], io)).toBe(1);
    expect(io.err()).toMatch(/^ars run: unavailable \(no response\): cannot reach http:\/\/127\.0\.0\.1:9/);
  });

  it('documents the run exit codes in the usage', async () => {
    const io = captureIo();
    await runCli(['help'], io);
    expect(io.out()).toContain('run --follow: 0 completed, 3 failed, 4 cancelled, 130 Ctrl-C');
  });
});

describe('ars tasks table', () => {
  const item = (task_id: string, status: 'complete' | 'running', query: string, ended = true) => ({
    task_id,
    status,
    kind: 'foreground',
    tenant: 't',
    user: 'u',
    session: 's',
    query,
    goal: query,
    priority: 0,
    input_artifacts: [],
    background_acknowledged: false,
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: '2026-01-01T00:00:00.000Z',
    started_at: '2026-01-01T00:00:00.000Z',
    ...(ended ? { ended_at: '2026-01-01T00:00:01.250Z' } : {}),
  });
  const answer = (items: ReturnType<typeof item>[]): MethodResponse<'tasks.list'> => ({
    items,
    counts: { pending: 0, running: 1, paused: 0, complete: 1, failed: 0, cancelled: 0 },
    counts_complete: true,
    sequence: 1,
    protocol_version: '0.1.0',
  });

  it('prints one aligned row per task with its duration and query, then the counts', () => {
    const text = formatTasks(answer([item('a-1', 'complete', 'hello'), item('b-22', 'running', 'x', false)]), false);
    const lines = text.split('\n');
    expect(lines[0]).toMatch(/^TASK {2}STATUS {4}CREATED {14}DURATION {2}QUERY$/);
    expect(lines[1]).toMatch(/^a-1 {3}complete {2}\d{4}-\d\d-\d\d \d\d:\d\d:\d\d {2}1\.3s {6}hello$/);
    expect(lines[2]).toMatch(/^b-22 {2}running {3}.* {2}running {3}x$/);
    expect(lines[3]).toBe('1 running · 1 complete');
  });

  it('says so when there is no task', () => {
    expect(formatTasks(answer([]), false)).toBe('no tasks (1 running · 1 complete)\n');
  });
});
