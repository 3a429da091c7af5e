import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintToken, startTestSystem, uniqueIdentity, waitFor } from '@ars/testkit';
import type { TestSystem } from '@ars/testkit';
import { refusal, startWatched } from './support/runs.ts';

/**
 * GET /metrics of the one-process system (what `ars up` runs): one
 * Prometheus exposition for every service of the process, scraped before
 * and after a scripted run with a tool call and a refused request; the
 * counters must move by exactly what happened.
 */

interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

/** Parses the sample lines of a Prometheus text exposition (label values without escaped quotes). */
function parse(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (match === null) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, key, value] of (match[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)) labels[key!] = value!;
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

const CHART_FILES = join(import.meta.dirname, '..', 'deploy', 'helm', 'agent-run-service', 'files');

/** The metric and label names a PromQL text uses (ours and the conventions' prefixes), without histogram suffixes. */
function queriedFamilies(text: string): Set<string> {
  const names = text.match(/\b(?:ars|http|rpc|gen_ai|messaging|db)_[a-z_]+\b/g) ?? [];
  return new Set(names.map((name) => name.replace(/_(bucket|sum|count)$/, '')));
}

/** The sum of the samples of `name` whose labels include `labels`. */
function total(samples: readonly Sample[], name: string, labels: Record<string, string> = {}): number {
  return samples
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0);
}

describe('metrics of the one-process system', () => {
  let sys: TestSystem;
  let text: string;

  const scrape = async (): Promise<{ text: string; samples: Sample[]; contentType: string }> => {
    const response = await fetch(`${sys.baseUrl}/metrics`);
    expect(response.status).toBe(200);
    const body = await response.text();
    return { text: body, samples: parse(body), contentType: response.headers.get('content-type') ?? '' };
  };

  const EXECUTOR = { ars_service: 'run-executor' };
  const AGENT = { ...EXECUTOR, ars_agent: 'default' };
  let before: Sample[];
  let after: Sample[];
  let refused: { status: number; code: string };

  beforeAll(async () => {
    sys = await startTestSystem({ mode: 'one-process' });
    const client = sys.client();
    before = (await scrape()).samples;

    const run = await startWatched(client, { query: '#script tool:echo{"text":"hi"};finish:done' });
    expect((await run.log.terminal()).type).toBe('task.completed');
    await run.log.close();
    refused = await refusal(client.call('start', { identity: {}, query: 42 }));

    // The executor counts a run once JetStream acknowledged its terminal event, which may be just after the stream showed it.
    const scraped = await waitFor(
      async () => {
        const now = await scrape();
        const finished = total(now.samples, 'ars_runs_finished_total', { ...AGENT, ars_run_outcome: 'completed' });
        return finished > total(before, 'ars_runs_finished_total', { ...AGENT, ars_run_outcome: 'completed' })
          ? now
          : undefined;
      },
      { message: 'the completed run counted', timeoutMs: 10_000 },
    );
    after = scraped.samples;
    text = scraped.text;
    expect(scraped.contentType).toContain('text/plain; version=0.0.4');
  });

  afterAll(async () => {
    await sys?.stop();
  });

  const delta = (name: string, labels: Record<string, string> = {}) =>
    total(after, name, labels) - total(before, name, labels);

  it('names the process and gives each family its type and unit', () => {
    expect(text).toMatch(/^target_info\{[^}]*service_name="agent-run-service"/m);
    expect(text).toContain('# TYPE http_server_request_duration histogram');
    expect(text).toContain('# UNIT http_server_request_duration s');
    expect(text).toContain('# TYPE ars_runs_finished_total counter');
    expect(text).toContain('# UNIT gen_ai_client_token_usage {token}');
    expect(text).toContain('# UNIT ars_llm_cost_total USD');
  });

  it('counts the run as started and completed by its agent, with its duration and first event', () => {
    expect(delta('ars_runs_started_total', AGENT)).toBe(1);
    expect(delta('ars_runs_finished_total', { ...AGENT, ars_run_outcome: 'completed' })).toBe(1);
    expect(delta('ars_runs_finished_total', { ...AGENT, ars_run_outcome: 'failed' })).toBe(0);
    expect(delta('ars_run_duration_count', { ...AGENT, ars_run_outcome: 'completed' })).toBe(1);
    expect(delta('ars_run_duration_sum', { ...AGENT, ars_run_outcome: 'completed' })).toBeGreaterThan(0);
    expect(delta('ars_run_time_to_first_event_count', AGENT)).toBe(1);
  });

  it('counts the tool call and the LLM calls of the run', () => {
    const echo = { ...EXECUTOR, ars_tool_name: 'echo' };
    expect(delta('ars_tool_calls_total', { ...echo, ars_tool_outcome: 'completed' })).toBe(1);
    expect(delta('ars_tool_duration_count', echo)).toBe(1);
    // Two planner steps: the tool call, then the finish.
    expect(delta('gen_ai_client_token_usage_count', { ...EXECUTOR, gen_ai_token_type: 'input' })).toBe(2);
    expect(delta('gen_ai_client_token_usage_sum', { ...EXECUTOR, gen_ai_token_type: 'output' })).toBeGreaterThan(0);
    // Each provider call timed, by model.
    expect(delta('gen_ai_client_operation_duration_count', { ...EXECUTOR, gen_ai_operation_name: 'chat' })).toBe(2);
    expect(text).toContain('# UNIT gen_ai_client_operation_duration s');
  });

  it('counts start at the gateway, its success and the refused one under its error code', () => {
    const start = { ars_service: 'gateway', ars_method: 'start', http_request_method: 'POST' };
    expect(delta('http_server_request_duration_count', { ...start, http_response_status_code: '200' })).toBe(1);
    expect(refused.status).toBeGreaterThanOrEqual(400);
    expect(
      delta('http_server_request_duration_count', {
        ...start,
        http_response_status_code: String(refused.status),
        error_type: refused.code,
      }),
    ).toBe(1);
  });

  it('times the RPCs the run-executor served, and every service publish', () => {
    expect(delta('rpc_server_call_duration_count', { ...EXECUTOR, rpc_method: 'start' })).toBe(1);
    expect(delta('messaging_client_operation_duration_count', EXECUTOR)).toBeGreaterThan(3);
    expect(delta('db_client_operation_duration_count', { db_operation_name: 'write_transaction' })).toBeGreaterThan(0);
  });

  it('exports every metric and label the dashboard and the alert rules of the chart query', async () => {
    // A name in a query is a family the system exports or one of its labels.
    const exported = new Set([...text.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]));
    for (const sample of after) for (const label of Object.keys(sample.labels)) exported.add(label);
    for (const file of ['alerts.yaml', 'grafana-dashboard.json']) {
      const queried = queriedFamilies(await readFile(join(CHART_FILES, file), 'utf8'));
      expect(queried.size, file).toBeGreaterThan(5);
      expect(
        [...queried].filter((name) => !exported.has(name)),
        file,
      ).toEqual([]);
    }
  });

  describe('who may read it', () => {
    // A forwarded request is not a loopback caller's, whatever the socket's peer: it must show a token.
    const forwarded = (token?: string) =>
      fetch(`${sys.baseUrl}/metrics`, {
        headers: {
          'x-forwarded-for': '203.0.113.9',
          ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
        },
      });

    it('refuses a caller off the host without a token: 401 identity_required', async () => {
      const response = await forwarded();
      expect(response.status).toBe(401);
      expect(await response.json()).toMatchObject({ code: 'identity_required' });
    });

    it('refuses a token without admin or console:fleet: 403 scope_mismatch', async () => {
      const response = await forwarded(await mintToken(sys.baseUrl, { ...uniqueIdentity('metrics'), scopes: [] }));
      expect(response.status).toBe(403);
      const body = (await response.json()) as { code: string; message: string };
      expect(body.code).toBe('scope_mismatch');
      expect(JSON.stringify(body)).not.toContain('ars_');
    });

    it('answers a token with admin, and one with console:fleet', async () => {
      for (const scopes of [['admin'], ['console:fleet']]) {
        const response = await forwarded(await mintToken(sys.baseUrl, { ...uniqueIdentity('metrics'), scopes }));
        expect(response.status, scopes[0]).toBe(200);
        expect(await response.text()).toContain('# TYPE ars_runs_finished_total counter');
      }
    });

    it('refuses a token that does not verify: 401 auth_rejected', async () => {
      const response = await forwarded('not.a.token');
      expect(response.status).toBe(401);
      expect(await response.json()).toMatchObject({ code: 'auth_rejected' });
    });
  });

  it('reports the queue per priority, the executor slots and the NATS connections', () => {
    for (const priority of ['high', 'normal', 'low']) {
      expect(after.some((s) => s.name === 'ars_runs_queue_lag' && s.labels.ars_priority === priority)).toBe(true);
      expect(after.some((s) => s.name === 'ars_runs_queue_depth' && s.labels.ars_priority === priority)).toBe(true);
    }
    // EXECUTOR_CONCURRENCY's default; the run just ended may still hold its slot while its message is acknowledged.
    const busy = total(after, 'ars_executor_slots', { ...EXECUTOR, ars_slot_state: 'busy' });
    expect(busy).toBeLessThanOrEqual(1);
    expect(busy + total(after, 'ars_executor_slots', { ...EXECUTOR, ars_slot_state: 'free' })).toBe(32);
    for (const service of ['gateway', 'run-executor', 'session', 'governance']) {
      expect(total(after, 'ars_nats_connected', { ars_service: service })).toBe(1);
    }
    expect(after.some((s) => s.name === 'ars_gateway_sse_subscribers')).toBe(true);
  });
});
