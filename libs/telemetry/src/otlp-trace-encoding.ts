import type { Attributes, AttributeValue, HrTime, Link } from '@opentelemetry/api';
import type { InstrumentationScope } from '@opentelemetry/core';
import type { ReadableSpan, TimedEvent } from '@opentelemetry/sdk-trace-node';
import { ProtoWriter } from './otlp-proto-writer.ts';

/**
 * The OTLP trace messages (opentelemetry/proto/trace/v1/trace.proto,
 * collector/trace/v1/trace_service.proto) written straight from the SDK's
 * spans, field for field as the SDK's own transformer fills them
 * (@opentelemetry/otlp-transformer `sdkSpanToOtlpSpan`), so that a collector
 * sees the same request. Field numbers are the proto's.
 */

/** `ExportTraceServiceRequest.resource_spans` (1), `ResourceSpans.resource` (1) / `.scope_spans` (2). */
const REQUEST_RESOURCE_SPANS = 1;
const RESOURCE_SPANS_RESOURCE = 1;
const RESOURCE_SPANS_SCOPE_SPANS = 2;
/** `ScopeSpans.scope` (1), `.spans` (2), `.schema_url` (3). */
const SCOPE_SPANS_SCOPE = 1;
const SCOPE_SPANS_SPANS = 2;
const SCOPE_SPANS_SCHEMA_URL = 3;

type AnyAttributeValue = AttributeValue | Uint8Array | Readonly<Record<string, unknown>> | null | undefined;

/** `AnyValue`: string 1, bool 2, int 3, double 4, array 5, kvlist 6, bytes 7; anything else an empty value, as the SDK. */
function writeAnyValue(w: ProtoWriter, field: number, value: unknown): void {
  const start = w.begin(field);
  switch (typeof value) {
    case 'string':
      w.string(1, value);
      break;
    case 'number':
      if (Number.isInteger(value)) w.int64(3, value);
      else w.double(4, value);
      break;
    case 'boolean':
      w.bool(2, value);
      break;
    case 'object':
      if (value instanceof Uint8Array) w.bytesField(7, value);
      else if (Array.isArray(value)) {
        const array = w.begin(5);
        for (const item of value as unknown[]) writeAnyValue(w, 1, item);
        w.end(array);
      } else if (value !== null) {
        const list = w.begin(6);
        for (const key of Object.keys(value)) writeKeyValue(w, 1, key, (value as Record<string, unknown>)[key]);
        w.end(list);
      }
      break;
    default:
      break;
  }
  w.end(start);
}

/** `KeyValue`: key 1, value 2. */
function writeKeyValue(w: ProtoWriter, field: number, key: string, value: unknown): void {
  const start = w.begin(field);
  w.string(1, key);
  writeAnyValue(w, 2, value as AnyAttributeValue);
  w.end(start);
}

function writeAttributes(w: ProtoWriter, field: number, attributes: Attributes | undefined): void {
  if (attributes === undefined) return;
  for (const key in attributes) writeKeyValue(w, field, key, attributes[key]);
}

/** `Span.Event`: time 1, name 2, attributes 3, dropped_attributes_count 4. */
function writeEvent(w: ProtoWriter, event: TimedEvent): void {
  const start = w.begin(11);
  w.hrTime(1, event.time as HrTime);
  w.string(2, event.name);
  writeAttributes(w, 3, event.attributes);
  if (event.droppedAttributesCount) w.uint(4, event.droppedAttributesCount);
  w.end(start);
}

/** `SpanFlags`: the context's `is_remote` is known (bit 8) and is true (bit 9), above the W3C trace flags. */
const SPAN_FLAGS_HAS_IS_REMOTE = 0x100;
const SPAN_FLAGS_IS_REMOTE = 0x200;

function spanFlags(traceFlags: number, isRemote: boolean | undefined): number {
  return (traceFlags & 0xff) | SPAN_FLAGS_HAS_IS_REMOTE | (isRemote === true ? SPAN_FLAGS_IS_REMOTE : 0);
}

/** `Span.Link`: trace_id 1, span_id 2, trace_state 3, attributes 4, dropped_attributes_count 5, flags 6. */
function writeLink(w: ProtoWriter, link: Link): void {
  const start = w.begin(13);
  w.hex(1, link.context.traceId);
  w.hex(2, link.context.spanId);
  const state = link.context.traceState?.serialize();
  if (state) w.string(3, state);
  writeAttributes(w, 4, link.attributes);
  if (link.droppedAttributesCount) w.uint(5, link.droppedAttributesCount);
  w.fixed32(6, spanFlags(link.context.traceFlags, link.context.isRemote));
  w.end(start);
}

/**
 * Appends one `Span` as an element of `ScopeSpans.spans`: trace_id 1,
 * span_id 2, trace_state 3, parent_span_id 4, name 5, kind 6 (the API's
 * kind + 1), start 7, end 8, attributes 9, dropped counts 10/12/14, events
 * 11, links 13, status 15 (message 2, code 3), flags 16 (the parent's
 * `is_remote`).
 */
export function writeSpan(w: ProtoWriter, span: ReadableSpan): void {
  const start = w.begin(SCOPE_SPANS_SPANS);
  const context = span.spanContext();
  w.hex(1, context.traceId);
  w.hex(2, context.spanId);
  const state = context.traceState?.serialize();
  if (state) w.string(3, state);
  const parent = span.parentSpanContext?.spanId;
  if (parent) w.hex(4, parent);
  w.string(5, span.name);
  w.uint(6, span.kind + 1);
  w.hrTime(7, span.startTime);
  w.hrTime(8, span.endTime);
  writeAttributes(w, 9, span.attributes);
  if (span.droppedAttributesCount) w.uint(10, span.droppedAttributesCount);
  for (const event of span.events) writeEvent(w, event);
  if (span.droppedEventsCount) w.uint(12, span.droppedEventsCount);
  for (const link of span.links) writeLink(w, link);
  if (span.droppedLinksCount) w.uint(14, span.droppedLinksCount);
  const status = w.begin(15);
  if (span.status.message) w.string(2, span.status.message);
  if (span.status.code) w.uint(3, span.status.code);
  w.end(status);
  w.fixed32(16, spanFlags(context.traceFlags, span.parentSpanContext?.isRemote));
  w.end(start);
}

/** The `Resource` message (attributes 1), for {@link writeRequest}. */
export function encodeResource(attributes: Attributes): Buffer {
  const w = new ProtoWriter(1024);
  writeAttributes(w, 1, attributes);
  return w.bytes();
}

/** The `InstrumentationScope` message (name 1, version 2). */
export function encodeScope(scope: InstrumentationScope): Buffer {
  const w = new ProtoWriter(256);
  w.string(1, scope.name);
  if (scope.version) w.string(2, scope.version);
  return w.bytes();
}

/** The spans of one instrumentation scope, each already written by {@link writeSpan}. */
export interface ScopeBatch {
  readonly scope: Buffer;
  readonly schemaUrl: string | undefined;
  /** Concatenated `ScopeSpans.spans` elements. */
  readonly spans: Uint8Array;
}

/** An `ExportTraceServiceRequest` of one resource's scopes. */
export function writeRequest(w: ProtoWriter, resource: Buffer, scopes: readonly ScopeBatch[]): void {
  const resourceSpans = w.begin(REQUEST_RESOURCE_SPANS);
  w.tag(RESOURCE_SPANS_RESOURCE, 2);
  w.raw(resource, true);
  for (const batch of scopes) {
    const scopeSpans = w.begin(RESOURCE_SPANS_SCOPE_SPANS);
    w.tag(SCOPE_SPANS_SCOPE, 2);
    w.raw(batch.scope, true);
    w.raw(batch.spans);
    if (batch.schemaUrl) w.string(SCOPE_SPANS_SCHEMA_URL, batch.schemaUrl);
    w.end(scopeSpans);
  }
  w.end(resourceSpans);
}
