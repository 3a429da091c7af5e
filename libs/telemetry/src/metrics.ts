import { metrics as metricsApi } from '@opentelemetry/api';
import type { Attributes, Meter, ObservableCallback, ObservableGauge } from '@opentelemetry/api';
import type * as OtlpMetrics from '@opentelemetry/exporter-metrics-otlp-http';
import { PrometheusExporter, PrometheusSerializer } from '@opentelemetry/exporter-prometheus';
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import type { MetricReader } from '@opentelemetry/sdk-metrics';
import { instrumentsProducer } from './instruments.ts';
import { requireOnce } from './require-once.ts';
import { flushBeforeStop } from './stop-flush.ts';
import { buildResource } from './resource.ts';
import type { ResourceOptions } from './resource.ts';

/**
 * One MeterProvider per process. The first {@link initMetrics} call creates
 * it with a Prometheus reader (read by {@link metricsText}, for `/metrics`)
 * and, when an OTLP endpoint is given, a periodic OTLP/HTTP reader; later
 * calls (the other services of a one-process system, tests) share it. Every
 * service's series carry {@link SERVICE_ATTRIBUTE}, so that the services of
 * one process never collide in one family.
 */

/** The attribute naming the service a series belongs to (`ars_service` in Prometheus). */
export const SERVICE_ATTRIBUTE = 'ars.service';

/** `Content-Type` of {@link metricsText}: the Prometheus text exposition format 0.0.4. */
export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** Default interval of the OTLP export, in ms (`OTEL_METRIC_EXPORT_INTERVAL`'s default). */
export const DEFAULT_EXPORT_INTERVAL_MS = 60_000;

/** What {@link initMetrics} needs; the caller reads its environment, never this module. */
export interface MetricsOptions {
  /** The service: `service.name` of the process's resource when first, and {@link SERVICE_ATTRIBUTE} of its series. */
  readonly serviceName: string;
  /** Base URL of an OTLP/HTTP collector (`OTEL_EXPORTER_OTLP_ENDPOINT`); metrics go to `<it>/v1/metrics`. */
  readonly otlpEndpoint?: string;
  /** Full URL of the metrics endpoint (`OTEL_EXPORTER_OTLP_METRICS_ENDPOINT`); wins over `otlpEndpoint`. */
  readonly otlpMetricsEndpoint?: string;
  /** @default {@link DEFAULT_EXPORT_INTERVAL_MS} */
  readonly exportIntervalMs?: number;
  /** Headers of every OTLP export request (`OTEL_EXPORTER_OTLP_HEADERS`). */
  readonly otlpHeaders?: Readonly<Record<string, string>>;
  /** The process resource (first call only), as the traces' one. @default `service.name` = serviceName, detectors */
  readonly resource?: Omit<ResourceOptions, 'serviceName'> & { readonly serviceName?: string };
}

/** A service's handle on the process's metrics. */
export interface Metrics {
  /** The API meter of the process (observable instruments, anything off the hot path). */
  readonly meter: Meter;
  /** `{ 'ars.service': serviceName }`: spread into every attribute set the service binds. */
  readonly service: Attributes;
  /**
   * Observes the process-wide gauge `name` through `callback` until
   * {@link Metrics.shutdown}; the callback should add {@link Metrics.service}
   * to its attributes. It may be async (it is awaited at collection).
   */
  gauge(
    name: string,
    options: { readonly description: string; readonly unit: string },
    callback: ObservableCallback,
  ): void;
  /** Removes this service's callbacks; the last service of the process flushes the OTLP export. Idempotent. */
  shutdown(): Promise<void>;
}

interface Registration {
  readonly provider: MeterProvider;
  readonly prometheus: PrometheusExporter;
  readonly otlp: MetricReader | undefined;
  readonly gauges: Map<string, ObservableGauge>;
  users: number;
}

let registration: Registration | undefined;

/** The SDK's OTLP metric exporter, loaded by the first process that exports metrics to a collector. */
const otlpMetrics = requireOnce<typeof OtlpMetrics>('@opentelemetry/exporter-metrics-otlp-http');

function otlpMetricsUrl(options: MetricsOptions): string | undefined {
  if (options.otlpMetricsEndpoint !== undefined && options.otlpMetricsEndpoint !== '') {
    return options.otlpMetricsEndpoint;
  }
  if (options.otlpEndpoint === undefined || options.otlpEndpoint === '') return undefined;
  const trimmed = options.otlpEndpoint.replace(/\/+$/, '');
  return trimmed.endsWith('/v1/metrics') ? trimmed : `${trimmed}/v1/metrics`;
}

function register(options: MetricsOptions): Registration {
  const prometheus = new PrometheusExporter({
    preventServerStart: true,
    metricProducers: [instrumentsProducer],
    withoutScopeInfo: true,
  });
  const url = otlpMetricsUrl(options);
  const otlp =
    url === undefined
      ? undefined
      : new PeriodicExportingMetricReader({
          exporter: new (otlpMetrics().OTLPMetricExporter)({
            url,
            ...(options.otlpHeaders === undefined ? {} : { headers: { ...options.otlpHeaders } }),
          }),
          exportIntervalMillis: options.exportIntervalMs ?? DEFAULT_EXPORT_INTERVAL_MS,
          exportTimeoutMillis: Math.min(30_000, options.exportIntervalMs ?? DEFAULT_EXPORT_INTERVAL_MS),
          metricProducers: [instrumentsProducer],
        });
  const { serviceName = options.serviceName, ...resource } = options.resource ?? {};
  const provider = new MeterProvider({
    resource: buildResource({ ...resource, serviceName }),
    readers: otlp === undefined ? [prometheus] : [prometheus, otlp],
  });
  metricsApi.setGlobalMeterProvider(provider);
  return { provider, prometheus, otlp, gauges: new Map(), users: 0 };
}

/**
 * Sets up metrics for a service of this process (see the module comment).
 * The OTLP reader is decided by the first call: the services of one
 * process share their environment.
 */
export function initMetrics(options: MetricsOptions): Metrics {
  registration ??= register(options);
  const shared = registration;
  shared.users++;
  const meter = shared.provider.getMeter('@ars/telemetry');
  const added: { gauge: ObservableGauge; callback: ObservableCallback }[] = [];
  let stopped = false;
  return {
    meter,
    service: Object.freeze({ [SERVICE_ATTRIBUTE]: options.serviceName }),
    gauge(name, gaugeOptions, callback) {
      let gauge = shared.gauges.get(name);
      if (gauge === undefined) {
        gauge = meter.createObservableGauge(name, gaugeOptions);
        shared.gauges.set(name, gauge);
      }
      gauge.addCallback(callback);
      added.push({ gauge, callback });
    },
    async shutdown() {
      if (stopped) return;
      stopped = true;
      for (const { gauge, callback } of added) gauge.removeCallback(callback);
      if (--shared.users === 0 && shared.otlp !== undefined) {
        await flushBeforeStop('OTLP metric export', shared.otlp.forceFlush());
      }
    },
  };
}

/** No `otel_scope_name` label: every series of this package has the one scope `@ars/telemetry`. */
const serializer = new PrometheusSerializer('', false, undefined, false, true);

/**
 * Every series of the process in the Prometheus text format (what `GET
 * /metrics` answers); `undefined` before any {@link initMetrics}.
 */
export async function metricsText(): Promise<string | undefined> {
  if (registration === undefined) return undefined;
  const { resourceMetrics } = await registration.prometheus.collect();
  return serializer.serialize(resourceMetrics);
}
