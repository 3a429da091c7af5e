/**
 * Benchmark (issue 28): what the OTLP/protobuf export costs per span, this
 * package's streaming processor against the SDK's BatchSpanProcessor with
 * its protobuf exporter (64-span batches, as the package used before), in
 * one process, alternated. Each round creates and ends `--spans` spans of a
 * run's usual shape (8 attributes, one event in four) and posts them to a
 * receiver that keeps nothing. Figures: CPU µs per span of the whole process
 * (all threads: the garbage collector's helpers included) without any
 * export, and what each export adds to it (medians of the rounds).
 *
 *   node libs/telemetry/bench/otlp-export.bench.ts [--rounds 6] [--spans 20000]
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { ROOT_CONTEXT, SpanKind, trace } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { startOtlpReceiver } from '../src/otlp-receiver.ts';
import { OtlpSpanStreamProcessor } from '../src/otlp-span-stream.ts';

const { values } = parseArgs({
  options: { rounds: { type: 'string', default: '6' }, spans: { type: 'string', default: '20000' } },
});
const SPANS = Number(values.spans);

const sink = await startOtlpReceiver({ keep: false });
const url = `${sink.url}/v1/traces`;

const resource = resourceFromAttributes({ 'service.name': 'bench', 'host.name': 'h', 'process.pid': process.pid });

const SIDES: Record<string, () => SpanProcessor> = {
  /** Spans created and ended, exported nowhere: what the export adds is the difference. */
  none: () => ({
    onStart: () => undefined,
    onEnd: () => undefined,
    forceFlush: async () => undefined,
    shutdown: async () => undefined,
  }),
  sdk: () => new BatchSpanProcessor(new OTLPTraceExporter({ url }), { maxExportBatchSize: 64 }),
  stream: () => new OtlpSpanStreamProcessor({ url }),
};

async function measure(makeProcessor: () => SpanProcessor): Promise<number> {
  const processor = makeProcessor();
  const provider = new BasicTracerProvider({ resource, spanProcessors: [processor] });
  const tracer = provider.getTracer('run-executor', '0.1.0');
  const cpuBefore = process.cpuUsage();
  for (let i = 0; i < SPANS; i++) {
    const parent = tracer.startSpan('run', { kind: SpanKind.INTERNAL });
    const span = tracer.startSpan(
      'chat gpt-4o',
      {
        kind: SpanKind.CLIENT,
        attributes: {
          'ars.service': 'run-executor',
          'ars.task_id': `task-${i}`,
          'ars.tenant': 'tenant-a',
          'ars.agent_id': 'agent-1',
          'gen_ai.system': 'openai',
          'gen_ai.request.model': 'gpt-4o',
          'gen_ai.usage.input_tokens': 1200 + (i % 50),
          'gen_ai.usage.output_tokens': 80,
        },
      },
      trace.setSpan(ROOT_CONTEXT, parent),
    );
    if (i % 4 === 0) span.addEvent('gen_ai.first_token', { 'gen_ai.latency_s': 0.012 });
    span.end();
    parent.end();
    // Paced like a busy service (about 6,400 spans/s: 200 runs/s of ~30 spans), the exports running between bursts.
    if (i % 16 === 15) await sleep(5);
  }
  await processor.forceFlush();
  const cpu = process.cpuUsage(cpuBefore);
  await provider.shutdown();
  return (cpu.user + cpu.system) / (SPANS * 2);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
const results: Record<string, number[]> = { none: [], sdk: [], stream: [] };
await measure(SIDES.stream!); // warm both paths once
await measure(SIDES.sdk!);
for (let round = 1; round <= Number(values.rounds); round++) {
  const order = round % 2 === 1 ? ['none', 'sdk', 'stream'] : ['stream', 'sdk', 'none'];
  for (const name of order) {
    const cpuUs = await measure(SIDES[name]!);
    results[name]!.push(cpuUs);
    process.stdout.write(
      `round ${round} ${name}: ${cpuUs.toFixed(2)} CPU µs per span (load ${loadavg()[0]?.toFixed(2)})\n`,
    );
  }
}
const none = median(results.none!);
const sdk = median(results.sdk!) - none;
const stream = median(results.stream!) - none;
process.stdout.write(
  `\nCPU µs per span, median of ${values.rounds} rounds: spans alone ${none.toFixed(2)}; the export adds: ` +
    `SDK batch + protobufjs ${sdk.toFixed(2)}, streaming encoder ${stream.toFixed(2)} ` +
    `(${((stream / sdk) * 100).toFixed(1)}% of the SDK's)\n`,
);
await sink.close();
