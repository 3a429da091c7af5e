import { beforeAll, describe, expect, it } from 'vitest';
import { initMetrics, metricsText } from '@ars/telemetry';
import { MethodMetrics, sseClosedCounters } from '../../src/metrics/gateway-metrics.ts';

async function sample(line: string): Promise<number | undefined> {
  const text = (await metricsText()) ?? '';
  const found = text.split('\n').find((l) => l.startsWith(`${line} `));
  return found === undefined ? undefined : Number(found.slice(line.length + 1));
}

const GATEWAY = 'ars_service="gateway"';

describe('gateway method metrics', () => {
  beforeAll(() => {
    initMetrics({ serviceName: 'gateway' });
  });

  it('records a success without error.type and a refusal under its code', async () => {
    const metrics = new MethodMetrics();
    const method = { name: 'tasks.metrics_probe' };
    metrics.record({ method, httpMethod: 'POST', status: 200, code: undefined, seconds: 0.02 });
    metrics.record({ method, httpMethod: 'POST', status: 200, code: undefined, seconds: 0.03 });
    metrics.record({ method, httpMethod: 'POST', status: 422, code: 'invalid_request', seconds: 0.001 });
    const base = `${GATEWAY},ars_method="tasks.metrics_probe",http_request_method="POST"`;
    expect(await sample(`http_server_request_duration_count{${base},http_response_status_code="200"}`)).toBe(2);
    expect(await sample(`http_server_request_duration_sum{${base},http_response_status_code="200"}`)).toBeCloseTo(0.05);
    expect(
      await sample(
        `http_server_request_duration_count{${base},http_response_status_code="422",error_type="invalid_request"}`,
      ),
    ).toBe(1);
  });

  it('names an unrouted request _unknown, an unknown verb _OTHER, and a bare error by its status', async () => {
    const metrics = new MethodMetrics();
    metrics.record({ method: undefined, httpMethod: 'BREW', status: 405, code: undefined, seconds: 0.001 });
    const line = `http_server_request_duration_count{${GATEWAY},ars_method="_unknown",http_request_method="_OTHER",http_response_status_code="405",error_type="405"}`;
    expect(await sample(line)).toBeGreaterThanOrEqual(1);
  });

  it('counts closed event-stream subscriptions by reason', async () => {
    const counter = sseClosedCounters();
    const line = `ars_gateway_sse_subscriptions_closed_total{${GATEWAY},reason="dropped"}`;
    const before = (await sample(line)) ?? 0;
    counter('dropped').add();
    expect(await sample(line)).toBe(before + 1);
  });
});
