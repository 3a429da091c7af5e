import { createRequire } from 'node:module';
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, TraceFlags, trace } from '@opentelemetry/api';
import { TraceState } from '@opentelemetry/core';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import type { ReadableSpan, Sampler, SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { SamplingDecision } from '@opentelemetry/sdk-trace-base';
import { ProtoWriter } from '../src/otlp-proto-writer.ts';
import { OtlpSpanStreamProcessor } from '../src/otlp-span-stream.ts';
import { encodeResource, encodeScope, writeRequest, writeSpan } from '../src/otlp-trace-encoding.ts';

// The generated protobufjs types of the SDK's 0.203 transformer: an independent decoder of what both encoders write.
const root = createRequire(import.meta.url)('otlp-proto-reference/build/src/generated/root.js') as {
  opentelemetry: {
    proto: {
      collector: {
        trace: {
          v1: {
            ExportTraceServiceRequest: {
              decode(bytes: Uint8Array): unknown;
              toObject(message: unknown, options: Record<string, unknown>): Record<string, unknown>;
            };
          };
        };
      };
    };
  };
};
const RequestType = root.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
const decode = (bytes: Uint8Array) =>
  RequestType.toObject(RequestType.decode(bytes), { longs: String, bytes: String, defaults: true, arrays: true });

interface DecodedRequest {
  resourceSpans: { scopeSpans: { scope: { name: string }; spans: { name: string }[] }[] }[];
}
const spanNames = (bytes: Uint8Array): string[] =>
  (decode(bytes) as unknown as DecodedRequest).resourceSpans.flatMap((rs) =>
    rs.scopeSpans.flatMap((ss) => ss.spans.map((s) => s.name)),
  );

const RESOURCE = resourceFromAttributes({
  'service.name': 'encoding-test',
  'host.name': 'h',
  'process.pid': 4242,
  'process.command_args': ['node', 'x.js'],
});

/** Spans of every shape the encoder handles, ended (sampled or not) and returned. */
function makeSpans(processor?: SpanProcessor, sampler?: Sampler): ReadableSpan[] {
  const ended: ReadableSpan[] = [];
  const keep: SpanProcessor = {
    onStart: () => undefined,
    onEnd: (span) => void ended.push(span),
    forceFlush: async () => undefined,
    shutdown: async () => undefined,
  };
  const provider = new BasicTracerProvider({
    resource: RESOURCE,
    ...(sampler === undefined ? {} : { sampler }),
    spanProcessors: [keep, ...(processor === undefined ? [] : [processor])],
  });
  const tracer = provider.getTracer('scope-a', '1.2.3');
  const other = provider.getTracer('scope-b');
  const parent = tracer.startSpan('parent é ünïcode', { kind: SpanKind.SERVER });
  const parentContext = trace.setSpan(ROOT_CONTEXT, parent);
  const child = tracer.startSpan(
    'child',
    {
      kind: SpanKind.CLIENT,
      attributes: {
        str: 'value',
        long: 'x'.repeat(300),
        unicode: 'naïve 日本',
        int: 42,
        zero: 0,
        negative: -7,
        big: 2 ** 40 + 3,
        double: 1.5,
        bool: true,
        false: false,
        strings: ['a', 'b'],
        numbers: [1, 2.5, -3],
        bools: [true, false],
      },
      links: [
        {
          context: {
            traceId: '0af7651916cd43dd8448eb211c80319c',
            spanId: 'b7ad6b7169203331',
            traceFlags: TraceFlags.SAMPLED,
            traceState: new TraceState('vendor=1'),
          },
          attributes: { 'link.kind': 'previous attempt' },
        },
      ],
    },
    parentContext,
  );
  child.addEvent('gen_ai.first_token', { 'gen_ai.latency_s': 0.012 });
  child.addEvent('bare');
  child.setStatus({ code: SpanStatusCode.ERROR, message: 'it failed' });
  child.end();
  const ok = other.startSpan('x'.repeat(200), { kind: SpanKind.CONSUMER }, parentContext);
  ok.setStatus({ code: SpanStatusCode.OK });
  ok.end();
  const wide = other.startSpan('wide', { kind: SpanKind.PRODUCER }, parentContext);
  for (let i = 0; i < 40; i++) wide.setAttribute(`attribute.${i}`, `value ${i} `.repeat(5));
  wide.end();
  parent.end();
  return ended;
}

/** One request of `spans` by this package's encoder (grouped by scope, as the processor does). */
function encodeOurs(spans: readonly ReadableSpan[]): Buffer {
  const byScope = new Map<string, { scope: ReadableSpan['instrumentationScope']; w: ProtoWriter }>();
  for (const span of spans) {
    const key = span.instrumentationScope.name;
    let entry = byScope.get(key);
    if (entry === undefined) {
      entry = { scope: span.instrumentationScope, w: new ProtoWriter(64) };
      byScope.set(key, entry);
    }
    writeSpan(entry.w, span);
  }
  const w = new ProtoWriter(64);
  writeRequest(
    w,
    encodeResource(RESOURCE.attributes),
    [...byScope.values()].map(({ scope, w: sw }) => ({
      scope: encodeScope(scope),
      schemaUrl: undefined,
      spans: sw.bytes(),
    })),
  );
  return w.bytes();
}

describe('the OTLP protobuf encoding of spans', () => {
  it('decodes to exactly what the SDK serializer sends for the same spans', () => {
    const spans = makeSpans();
    expect(spans).toHaveLength(4);
    const theirs = decode(ProtobufTraceSerializer.serializeRequest(spans)!);
    const ours = decode(encodeOurs(spans));
    expect(ours).toEqual(theirs);
    // Not vacuous: the decoded request holds the spans, their attributes and their times.
    const text = JSON.stringify(ours);
    for (const expected of [
      'naïve 日本',
      'it failed',
      'gen_ai.first_token',
      'vendor=1',
      'previous attempt',
      'attribute.39',
    ]) {
      expect(text).toContain(expected);
    }
  });

  it('writes nanosecond timestamps exactly, past 2^53', () => {
    const w = new ProtoWriter(8);
    const time: [number, number] = [1_795_778_751, 709_123_456];
    w.hrTime(1, time);
    const bytes = w.bytes();
    expect(bytes.readBigUInt64LE(1)).toBe(1_795_778_751_709_123_456n);
  });

  it('writes negative int64 values as ten-byte two’s complement', () => {
    const w = new ProtoWriter(2);
    w.int64(3, -1);
    expect([...w.bytes()]).toEqual([24, 255, 255, 255, 255, 255, 255, 255, 255, 255, 1]);
  });
});

interface Received {
  readonly headers: IncomingMessage['headers'];
  readonly body: Buffer;
}

/** A collector whose answer to each request the test decides (200 unless `answer` says otherwise). */
async function collector(
  answer: (index: number, response: ServerResponse) => void = (_i, r) => r.writeHead(200).end(),
) {
  const received: Received[] = [];
  let index = 0;
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (c: Buffer) => chunks.push(c));
    request.on('end', () => {
      received.push({ headers: request.headers, body: Buffer.concat(chunks) });
      answer(index++, response);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}/v1/traces`,
    received,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

describe('the streaming OTLP span processor', () => {
  const closers: (() => unknown)[] = [];
  afterEach(() => {
    for (const close of closers.splice(0)) close();
  });

  it('posts full batches at once and the rest on flush, with the configured headers', async () => {
    const c = await collector();
    closers.push(c.close);
    const processor = new OtlpSpanStreamProcessor({ url: c.url, headers: { 'x-api-key': 'k1' }, maxBatchSpans: 3 });
    const spans = makeSpans(processor);
    await processor.forceFlush();
    expect(c.received).toHaveLength(2);
    for (const r of c.received) {
      expect(r.headers['content-type']).toBe('application/x-protobuf');
      expect(r.headers['x-api-key']).toBe('k1');
    }
    const names = c.received.flatMap((r) => spanNames(r.body));
    expect(names.sort()).toEqual(spans.map((s) => s.name).sort());
    await processor.shutdown();
  });

  it('sends an incomplete batch after the delay without a flush', async () => {
    const c = await collector();
    closers.push(c.close);
    const processor = new OtlpSpanStreamProcessor({ url: c.url, delayMs: 50 });
    makeSpans(processor);
    await expect.poll(() => c.received.length, { timeout: 5000 }).toBe(1);
    expect(spanNames(c.received[0]!.body)).toHaveLength(4);
    await processor.shutdown();
  });

  it('retries a request the collector answered 503, and the spans arrive once', async () => {
    const c = await collector((i, r) => (i === 0 ? r.writeHead(503, {}).end() : r.writeHead(200).end()));
    closers.push(c.close);
    const processor = new OtlpSpanStreamProcessor({ url: c.url });
    makeSpans(processor);
    await processor.forceFlush();
    expect(c.received).toHaveLength(2);
    expect(c.received[1]!.body.equals(c.received[0]!.body)).toBe(true);
    await processor.shutdown();
  });

  it('drops spans beyond the queue bound while the collector does not answer, and keeps the rest', async () => {
    const held: ServerResponse[] = [];
    const c = await collector((_i, r) => void held.push(r));
    closers.push(c.close);
    const processor = new OtlpSpanStreamProcessor({ url: c.url, maxBatchSpans: 2, maxQueueSpans: 2 });
    makeSpans(processor); // 4 spans: the first 2 go out and hang, the next 2 find the queue full
    await expect.poll(() => held.length).toBe(1);
    makeSpans(processor);
    for (const r of held.splice(0)) r.writeHead(200).end();
    await processor.forceFlush();
    expect(held).toHaveLength(0);
    expect(c.received.flatMap((r) => spanNames(r.body))).toHaveLength(2);
    await processor.shutdown();
  });

  it('exports only sampled spans', async () => {
    const c = await collector();
    closers.push(c.close);
    const processor = new OtlpSpanStreamProcessor({ url: c.url });
    const recordOnly: Sampler = {
      shouldSample: () => ({ decision: SamplingDecision.RECORD }),
      toString: () => 'record',
    };
    expect(makeSpans(processor, recordOnly)).toHaveLength(4);
    await processor.forceFlush();
    expect(c.received).toHaveLength(0);
    await processor.shutdown();
  });
});
