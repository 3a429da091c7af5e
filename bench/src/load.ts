/**
 * A small closed-loop HTTP load generator: `concurrency` workers each send
 * requests back to back for `durationMs`, recording every latency. Runs in
 * the benchmark process; the servers under test run in their own processes.
 */
import { Agent, request } from 'undici';

/** What one load run measured. */
export interface LoadResult {
  readonly label: string;
  readonly requests: number;
  readonly errors: number;
  readonly perSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
}

/** One request as the workers send it. */
export interface LoadTarget {
  readonly label: string;
  readonly url: string;
  readonly method: 'GET' | 'POST';
  readonly headers?: Record<string, string>;
  readonly body?: string;
}

/** The value at quantile `q` (0..1) of sorted `values`. */
export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[index] ?? Number.NaN;
}

/** Runs `target` with `concurrency` workers for `durationMs` after a warm-up. */
export async function runLoad(
  target: LoadTarget,
  options: { concurrency: number; durationMs: number; warmupMs: number },
): Promise<LoadResult> {
  const dispatcher = new Agent({ connections: options.concurrency, pipelining: 1, keepAliveTimeout: 30_000 });
  const send = async (): Promise<boolean> => {
    const response = await request(target.url, {
      method: target.method,
      headers: target.headers,
      body: target.body,
      dispatcher,
    });
    await response.body.dump();
    return response.statusCode === 200;
  };
  const loop = async (until: number, latencies: number[] | undefined, counters: { errors: number }) => {
    while (performance.now() < until) {
      const started = performance.now();
      const ok = await send().catch(() => false);
      if (!ok) counters.errors += 1;
      latencies?.push(performance.now() - started);
    }
  };
  const warm = { errors: 0 };
  const warmUntil = performance.now() + options.warmupMs;
  await Promise.all(Array.from({ length: options.concurrency }, () => loop(warmUntil, undefined, warm)));

  const latencies: number[] = [];
  const counters = { errors: 0 };
  const started = performance.now();
  const until = started + options.durationMs;
  await Promise.all(Array.from({ length: options.concurrency }, () => loop(until, latencies, counters)));
  const elapsedSeconds = (performance.now() - started) / 1000;
  await dispatcher.close();
  latencies.sort((a, b) => a - b);
  return {
    label: target.label,
    requests: latencies.length,
    errors: counters.errors,
    perSecond: latencies.length / elapsedSeconds,
    p50Ms: quantile(latencies, 0.5),
    p99Ms: quantile(latencies, 0.99),
    maxMs: latencies.at(-1) ?? Number.NaN,
  };
}

/** One printable line per result. */
export function formatResult(result: LoadResult, concurrency: number): string {
  const f = (n: number) => n.toFixed(2);
  return (
    `${result.label.padEnd(34)} c=${String(concurrency).padStart(3)}  ` +
    `${result.perSecond.toFixed(0).padStart(7)} req/s  p50 ${f(result.p50Ms)} ms  p99 ${f(result.p99Ms)} ms  ` +
    `max ${f(result.maxMs)} ms  errors ${result.errors}/${result.requests}`
  );
}
