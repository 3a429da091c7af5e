import { describe, expect, it } from 'vitest';
import {
  KeyedSeries,
  MAX_SERIES_PER_FAMILY,
  counterFamily,
  histogramFamily,
  initMetrics,
  metricsText,
} from '../src/index.ts';

/** The value of the sample line `name{labels}` in a Prometheus text, or undefined. */
function sample(text: string, line: string): number | undefined {
  const found = text.split('\n').find((l) => l.startsWith(`${line} `));
  return found === undefined ? undefined : Number(found.slice(line.length + 1));
}

describe('metrics', () => {
  it('serves bound counters with the _total suffix, the unit and the service label', async () => {
    const metrics = initMetrics({ serviceName: 'svc-a' });
    const runs = counterFamily('test.runs.completed', { description: 'runs', unit: '{run}' });
    const bound = runs.bind({ ...metrics.service, 'ars.agent': 'default' });
    bound.add();
    bound.add(2);
    const text = (await metricsText()) ?? '';
    expect(text).toContain('# TYPE test_runs_completed_total counter');
    expect(text).toContain('# UNIT test_runs_completed_total {run}');
    expect(sample(text, 'test_runs_completed_total{ars_service="svc-a",ars_agent="default"}')).toBe(3);
    await metrics.shutdown();
  });

  it('keeps one series per attribute set, whoever binds it', () => {
    const family = counterFamily('test.same', { description: 'd', unit: '1' });
    expect(family.bind({ a: '1', b: '2' })).toBe(family.bind({ b: '2', a: '1' }));
    expect(counterFamily('test.same', { description: 'd', unit: '1' })).toBe(family);
    expect(() => histogramFamily('test.same', { description: 'd', unit: '1', boundaries: [1] })).toThrow();
  });

  it('fills histogram buckets cumulatively with sum and count', async () => {
    initMetrics({ serviceName: 'svc-b' });
    const family = histogramFamily('test.latency', { description: 'd', unit: 's', boundaries: [0.1, 1] });
    const bound = family.bind({ op: 'x' });
    for (const value of [0.05, 0.1, 0.5, 3]) bound.record(value);
    const text = (await metricsText()) ?? '';
    expect(sample(text, 'test_latency_bucket{op="x",le="0.1"}')).toBe(2);
    expect(sample(text, 'test_latency_bucket{op="x",le="1"}')).toBe(3);
    expect(sample(text, 'test_latency_bucket{op="x",le="+Inf"}')).toBe(4);
    expect(sample(text, 'test_latency_count{op="x"}')).toBe(4);
    expect(sample(text, 'test_latency_sum{op="x"}')).toBeCloseTo(3.65);
  });

  it('observes a gauge until the service shuts down', async () => {
    const metrics = initMetrics({ serviceName: 'svc-c' });
    let calls = 0;
    metrics.gauge('test.slots', { description: 'd', unit: '{slot}' }, (result) => {
      calls++;
      result.observe(7, metrics.service);
    });
    expect(sample((await metricsText()) ?? '', 'test_slots{ars_service="svc-c"}')).toBe(7);
    await metrics.shutdown();
    await metricsText();
    expect(calls).toBe(1);
  });

  it('puts attribute sets past the bound into one overflow series', () => {
    const family = counterFamily('test.overflow', { description: 'd', unit: '1' });
    for (let i = 0; i < MAX_SERIES_PER_FAMILY; i++) family.bind({ i: String(i) });
    const extra = family.bind({ i: 'one more' });
    expect(family.bind({ i: 'and another' })).toBe(extra);
  });

  it('binds a keyed series once per key and folds keys past its bound into _other', () => {
    const bound: string[] = [];
    const keyed = new KeyedSeries((key) => {
      bound.push(key);
      return { key };
    }, 2);
    expect(keyed.get('a')).toBe(keyed.get('a'));
    keyed.get('b');
    expect(keyed.get('c').key).toBe('_other');
    expect(keyed.get('d')).toBe(keyed.get('c'));
    expect(bound).toEqual(['a', 'b', '_other']);
  });
});
