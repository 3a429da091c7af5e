import { TraceFlags, diag } from '@opentelemetry/api';
import type { Context } from '@opentelemetry/api';
import { ExportResultCode } from '@opentelemetry/core';
import type { ExportResult } from '@opentelemetry/core';
import type * as OtlpHttp from '@opentelemetry/otlp-exporter-base/node-http';
import type * as OtlpTransformer from '@opentelemetry/otlp-transformer';
import type { Resource } from '@opentelemetry/resources';
import type { ReadableSpan, Span, SpanProcessor } from '@opentelemetry/sdk-trace-node';
import { ProtoWriter } from './otlp-proto-writer.ts';
import { encodeResource, encodeScope, writeRequest, writeSpan } from './otlp-trace-encoding.ts';
import type { ScopeBatch } from './otlp-trace-encoding.ts';
import { requireOnce } from './require-once.ts';

/**
 * The OTLP/HTTP protobuf export of this package: a span processor that
 * writes each span's protobuf bytes the moment it ends and posts them in
 * batches. The SDK's BatchSpanProcessor kept every ended span object queued
 * until its batch left, then built an OTLP object tree of it for protobufjs:
 * spans outlived a young-generation collection and were promoted, and the
 * collector threads' work made most of what tracing cost (bench/HISTORY.md,
 * "Tracing overhead"). Here a span is garbage once it has ended.
 *
 * The HTTP side is the SDK's own (`@opentelemetry/otlp-exporter-base`):
 * retries of 429/502/503/504 with backoff and `Retry-After`, the export
 * timeout, compression and the `OTEL_EXPORTER_OTLP_*` settings it reads.
 */

export interface OtlpSpanStreamOptions {
  /** The traces URL. */
  readonly url: string;
  readonly headers?: Readonly<Record<string, string>>;
  /** Longest wait before an incomplete batch is sent, ms (`OTEL_BSP_SCHEDULE_DELAY`). @default 5000 */
  readonly delayMs?: number;
  /** Spans per export request (the SDK batch processor's default). @default 512 */
  readonly maxBatchSpans?: number;
  /** Spans held, written or in flight, beyond which new spans are dropped (as the SDK's queue). @default 2048 */
  readonly maxQueueSpans?: number;
}

/** The spans of one instrumentation scope waiting for the next request. */
interface ScopeBuffer {
  readonly scope: Buffer;
  readonly schemaUrl: string | undefined;
  readonly writer: ProtoWriter;
}

/** The SDK's HTTP export, loaded by the first processor: a process that exports no traces never loads it. */
const otlpHttp = requireOnce<typeof OtlpHttp>('@opentelemetry/otlp-exporter-base/node-http');
const otlpTransformer = requireOnce<typeof OtlpTransformer>('@opentelemetry/otlp-transformer');

/** A serializer for the SDK's export delegate whose requests are already bytes. */
const passThrough = {
  serializeRequest: (request: Uint8Array): Uint8Array => request,
  deserializeResponse: (data: Uint8Array) => otlpTransformer().ProtobufTraceSerializer.deserializeResponse(data),
};

/**
 * What the delegate's own metrics (`otel.sdk.exporter.*`) count of a request. They go to a no-op meter (no
 * meter provider is given), so the count of spans in a request's bytes is never needed.
 */
const uncountedSpans = { name: 'span' as const, countItems: (): number => 0 };

const scopeKey = (span: ReadableSpan): string => {
  const { name, version = '', schemaUrl = '' } = span.instrumentationScope;
  return `${name}@${version}:${schemaUrl}`;
};

export class OtlpSpanStreamProcessor implements SpanProcessor {
  readonly #delegate;
  readonly #delayMs: number;
  readonly #maxBatchSpans: number;
  readonly #maxQueueSpans: number;
  /** Buffers per resource (one in practice: the provider's), then per scope. */
  readonly #buffers = new Map<Resource, Map<string, ScopeBuffer>>();
  readonly #resources = new WeakMap<Resource, Buffer>();
  readonly #exports = new Set<Promise<void>>();
  readonly #request = new ProtoWriter(64 * 1024);
  #written = 0;
  #inFlight = 0;
  #dropped = 0;
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;

  constructor(options: OtlpSpanStreamOptions) {
    const { createOtlpHttpExportDelegate, convertLegacyHttpOptions } = otlpHttp();
    this.#delegate = createOtlpHttpExportDelegate(
      convertLegacyHttpOptions({ url: options.url, headers: { ...options.headers } }, 'TRACES', 'v1/traces', {
        'User-Agent': 'ars-telemetry',
        'Content-Type': 'application/x-protobuf',
      }),
      passThrough,
      'otlp_http_span_exporter',
      uncountedSpans,
      undefined,
    );
    this.#delayMs = options.delayMs ?? 5000;
    this.#maxBatchSpans = options.maxBatchSpans ?? 512;
    this.#maxQueueSpans = options.maxQueueSpans ?? 2048;
  }

  onStart(_span: Span, _parentContext: Context): void {}

  onEnd(span: ReadableSpan): void {
    if (this.#stopped || (span.spanContext().traceFlags & TraceFlags.SAMPLED) === 0) return;
    if (this.#written + this.#inFlight >= this.#maxQueueSpans) {
      // A collector that does not keep up costs spans, never memory: say so once per episode.
      if (this.#dropped++ === 0)
        diag.warn(`OTLP export: more than ${this.#maxQueueSpans} spans queued; dropping spans`);
      return;
    }
    writeSpan(this.#bufferOf(span).writer, span);
    if (++this.#written >= this.#maxBatchSpans) void this.#flush();
    else this.#timer ??= setTimeout(() => void this.#flush(), this.#delayMs).unref();
  }

  #bufferOf(span: ReadableSpan): ScopeBuffer {
    let scopes = this.#buffers.get(span.resource);
    if (scopes === undefined) {
      scopes = new Map();
      this.#buffers.set(span.resource, scopes);
    }
    const key = scopeKey(span);
    let buffer = scopes.get(key);
    if (buffer === undefined) {
      buffer = {
        scope: encodeScope(span.instrumentationScope),
        schemaUrl: span.instrumentationScope.schemaUrl,
        writer: new ProtoWriter(16 * 1024),
      };
      scopes.set(key, buffer);
    }
    return buffer;
  }

  async #resourceBytes(resource: Resource): Promise<Buffer> {
    let bytes = this.#resources.get(resource);
    if (bytes === undefined) {
      if (resource.asyncAttributesPending) await resource.waitForAsyncAttributes?.();
      bytes = encodeResource(resource.attributes);
      this.#resources.set(resource, bytes);
    }
    return bytes;
  }

  /** Sends every span written so far as one request. */
  #flush(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const spans = this.#written;
    if (spans === 0) return Promise.resolve();
    this.#written = 0;
    this.#inFlight += spans;
    // Taken synchronously, so that spans ending while the resource is awaited go to the next request.
    const taken = [...this.#buffers].map(([resource, scopes]) => ({
      resource,
      scopes: [...scopes.values()]
        .filter((b) => b.writer.length > 0)
        .map((b): ScopeBatch => {
          const batch = { scope: b.scope, schemaUrl: b.schemaUrl, spans: b.writer.bytes() };
          b.writer.reset();
          return batch;
        }),
    }));
    const done = this.#send(taken)
      .catch((error: unknown) => diag.error('OTLP export failed', error))
      .finally(() => {
        this.#inFlight -= spans;
        this.#exports.delete(done);
        if (this.#inFlight === 0 && this.#dropped > 0) {
          diag.warn(`OTLP export: ${this.#dropped} spans were dropped`);
          this.#dropped = 0;
        }
      });
    this.#exports.add(done);
    return done;
  }

  async #send(taken: readonly { resource: Resource; scopes: readonly ScopeBatch[] }[]): Promise<void> {
    const resources = await Promise.all(taken.map(({ resource }) => this.#resourceBytes(resource)));
    const w = this.#request;
    w.reset();
    taken.forEach(({ scopes }, i) => {
      if (scopes.length > 0) writeRequest(w, resources[i] as Buffer, scopes);
    });
    const body = w.bytes();
    const result = await new Promise<ExportResult>((resolve) => this.#delegate.export(body, resolve));
    if (result.code !== ExportResultCode.SUCCESS) throw result.error ?? new Error('the collector refused the spans');
  }

  async forceFlush(): Promise<void> {
    void this.#flush();
    await Promise.all([...this.#exports]);
  }

  async shutdown(): Promise<void> {
    if (this.#stopped) return;
    await this.forceFlush();
    this.#stopped = true;
    await this.#delegate.shutdown();
  }
}
