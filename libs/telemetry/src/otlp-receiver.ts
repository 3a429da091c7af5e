import { createServer } from 'node:http';
import type { Server } from 'node:http';
import { createRequire } from 'node:module';

/**
 * `@ars/telemetry/testing`: an in-process OTLP/HTTP receiver for tests that
 * check what a system exports. It keeps every body posted to `/v1/traces`
 * and answers 200; {@link OtlpReceiver.spans} reads both encodings, protobuf
 * with the generated protobufjs types of the SDK's 0.203 transformer
 * (`otlp-proto-reference`, a development dependency: the SDK's later versions
 * encode by hand and decode no request), a decoder independent of our encoder.
 */

interface ProtobufMessageType {
  decode(bytes: Uint8Array): unknown;
  toObject(message: unknown, options: Record<string, unknown>): unknown;
}
const requestType = (
  createRequire(import.meta.url)('otlp-proto-reference/build/src/generated/root.js') as {
    opentelemetry: { proto: { collector: { trace: { v1: { ExportTraceServiceRequest: ProtobufMessageType } } } } };
  }
).opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;

/** An OTLP/protobuf request as the OTLP/JSON encoding writes it: ids in hex, 64-bit integers as strings. */
function protobufAsJson(bytes: Buffer): JsonBody {
  const object = requestType.toObject(requestType.decode(bytes), { longs: String, bytes: String, arrays: true });
  return JSON.parse(JSON.stringify(object), (key, value: unknown) =>
    (key === 'traceId' || key === 'spanId' || key === 'parentSpanId') && typeof value === 'string'
      ? Buffer.from(value, 'base64').toString('hex')
      : value,
  ) as JsonBody;
}

/** An OTLP/JSON attribute value. */
interface AnyValue {
  readonly stringValue?: string;
  readonly intValue?: number | string;
  readonly doubleValue?: number;
  readonly boolValue?: boolean;
  readonly arrayValue?: { readonly values: readonly AnyValue[] };
}
interface KeyValue {
  readonly key: string;
  readonly value: AnyValue;
}

/** A received span, its attributes flattened to plain values. */
export interface ReceivedSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string;
  readonly name: string;
  readonly kind: number;
  /** Start and end, Unix epoch milliseconds (sub-millisecond in the fraction). */
  readonly startMs: number;
  readonly endMs: number;
  readonly scope: string;
  readonly attributes: Readonly<Record<string, unknown>>;
  readonly events: readonly { readonly name: string; readonly attributes: Readonly<Record<string, unknown>> }[];
  readonly links: readonly { readonly traceId: string; readonly spanId: string }[];
  /** The attributes of the resource the span was exported under. */
  readonly resource: Readonly<Record<string, unknown>>;
}

export interface OtlpReceiver {
  /** The base URL (`OTEL_EXPORTER_OTLP_ENDPOINT`). */
  readonly url: string;
  /** Every span received so far, of either encoding. */
  spans(): ReceivedSpan[];
  /** Every body received, with its content type. */
  readonly bodies: { readonly type: string; readonly bytes: Buffer }[];
  close(): Promise<void>;
}

function plain(value: AnyValue): unknown {
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.arrayValue !== undefined) return value.arrayValue.values.map(plain);
  return undefined;
}

function attributesOf(list: readonly KeyValue[] | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map((kv) => [kv.key, plain(kv.value)]));
}

interface JsonBody {
  resourceSpans: {
    resource?: { attributes?: KeyValue[] };
    scopeSpans: {
      scope?: { name: string };
      spans: {
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        name: string;
        kind: number;
        startTimeUnixNano?: string | number;
        endTimeUnixNano?: string | number;
        attributes?: KeyValue[];
        events?: { name: string; attributes?: KeyValue[] }[];
        links?: { traceId: string; spanId: string }[];
      }[];
    }[];
  }[];
}

/** Nanoseconds since the epoch (a decimal string past 2^53) as milliseconds. */
function epochMs(nanos: string | number | undefined): number {
  if (nanos === undefined) return 0;
  const text = String(nanos);
  const cut = Math.max(0, text.length - 6);
  return Number(text.slice(0, cut) || '0') + Number(text.slice(cut)) / 1e6;
}

function spansOf(body: JsonBody): ReceivedSpan[] {
  return body.resourceSpans.flatMap((rs) => {
    const resource = attributesOf(rs.resource?.attributes);
    return rs.scopeSpans.flatMap((ss) =>
      ss.spans.map((span) => ({
        traceId: span.traceId,
        spanId: span.spanId,
        parentSpanId: span.parentSpanId ?? '',
        name: span.name,
        kind: span.kind,
        startMs: epochMs(span.startTimeUnixNano),
        endMs: epochMs(span.endTimeUnixNano),
        scope: ss.scope?.name ?? '',
        attributes: attributesOf(span.attributes),
        events: (span.events ?? []).map((e) => ({ name: e.name, attributes: attributesOf(e.attributes) })),
        links: (span.links ?? []).map((l) => ({ traceId: l.traceId, spanId: l.spanId })),
        resource,
      })),
    );
  });
}

/**
 * Starts a receiver on a free loopback port. With `keep: false` it reads
 * and drops every body (a sink for benchmarks, which measure the exporter's
 * work and not a collector's).
 */
export function startOtlpReceiver(options: { readonly keep?: boolean } = {}): Promise<OtlpReceiver> {
  const keep = options.keep ?? true;
  const bodies: { type: string; bytes: Buffer }[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    if (keep) request.on('data', (chunk: Buffer) => chunks.push(chunk));
    else request.resume();
    request.on('end', () => {
      if (keep && request.url === '/v1/traces') {
        bodies.push({ type: request.headers['content-type'] ?? '', bytes: Buffer.concat(chunks) });
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      resolve({
        url: `http://127.0.0.1:${port}`,
        bodies,
        spans: () =>
          bodies.flatMap((b) =>
            spansOf(
              b.type.includes('json') ? (JSON.parse(b.bytes.toString('utf8')) as JsonBody) : protobufAsJson(b.bytes),
            ),
          ),
        close: () => new Promise((done) => server.close(() => done())),
      });
    });
  });
}
