import { ValueType } from '@opentelemetry/api';
import type { Attributes, HrTime } from '@opentelemetry/api';
import { AggregationTemporality, DataPointType } from '@opentelemetry/sdk-metrics';
import type { CollectionResult, MetricData, MetricProducer } from '@opentelemetry/sdk-metrics';

/**
 * Pre-bound instruments for hot paths. A family (one metric name) hands out
 * a series per attribute set once (`bind`); recording on a series is plain
 * arithmetic on numbers it owns: no attribute hashing, no allocation, no
 * context lookup (the SDK's `Counter.add`/`Histogram.record` cost about
 * 0.5 µs and an allocation each). The families of a process live here, in
 * one registry; {@link instrumentsProducer} hands their cumulative figures
 * to the process's metric readers (Prometheus, OTLP) at collection time.
 */

/** What a family is. */
export interface InstrumentOptions {
  readonly description: string;
  /** UCUM unit, as the OTel semantic conventions give it: `s`, `{run}`, `{token}`, `USD`. */
  readonly unit: string;
}

/** Options of a histogram family. */
export interface HistogramOptions extends InstrumentOptions {
  /** Upper bounds of the buckets, ascending (a last `+Inf` bucket is implied). */
  readonly boundaries: readonly number[];
}

/** A counter series: monotonic, starts at 0. */
export interface BoundCounter {
  add(value?: number): void;
}

/** A histogram series. */
export interface BoundHistogram {
  record(value: number): void;
}

/** Series one family keeps at most; later attribute sets share one series marked `otel.metric.overflow`. */
export const MAX_SERIES_PER_FAMILY = 2_000;

/** The OTel specification's attribute of the overflow series. */
const OVERFLOW_ATTRIBUTES: Attributes = { 'otel.metric.overflow': true };

/**
 * The bucket bounds of durations in seconds, from the OTel HTTP semantic
 * conventions (`http.server.request.duration`), extended to 5 minutes for runs.
 */
export const SECONDS_BUCKETS: readonly number[] = [
  0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 30, 60, 120, 300,
];

/** Bounds of fast operations in seconds (a publish, a store transaction): 0.1 ms to 5 s. */
export const FAST_SECONDS_BUCKETS: readonly number[] = [
  0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5,
];

/** Bounds of token counts (`gen_ai.client.token.usage`, as the GenAI conventions advise). */
export const TOKEN_BUCKETS: readonly number[] = [
  1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864,
];

function hrNow(): HrTime {
  const ms = Date.now();
  return [Math.floor(ms / 1000), (ms % 1000) * 1_000_000];
}

/** A stable key of an attribute set (bind time only). */
function keyOf(attributes: Attributes): string {
  return JSON.stringify(Object.entries(attributes).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

class CounterSeries implements BoundCounter {
  readonly attributes: Attributes;
  readonly startTime: HrTime;
  value = 0;
  constructor(attributes: Attributes, startTime: HrTime) {
    this.attributes = attributes;
    this.startTime = startTime;
  }
  add(value = 1): void {
    this.value += value;
  }
}

class HistogramSeries implements BoundHistogram {
  readonly attributes: Attributes;
  readonly startTime: HrTime;
  readonly boundaries: readonly number[];
  readonly counts: Float64Array;
  sum = 0;
  count = 0;
  min = Infinity;
  max = -Infinity;
  constructor(attributes: Attributes, startTime: HrTime, boundaries: readonly number[]) {
    this.attributes = attributes;
    this.startTime = startTime;
    this.boundaries = boundaries;
    this.counts = new Float64Array(boundaries.length + 1);
  }
  record(value: number): void {
    const bounds = this.boundaries;
    let i = 0;
    while (i < bounds.length && value > (bounds[i] as number)) i++;
    this.counts[i] = (this.counts[i] as number) + 1;
    this.sum += value;
    this.count++;
    if (value < this.min) this.min = value;
    if (value > this.max) this.max = value;
  }
}

abstract class Family<S extends { readonly attributes: Attributes }> {
  readonly name: string;
  readonly options: InstrumentOptions;
  readonly #series = new Map<string, S>();
  #overflow: S | undefined;

  constructor(name: string, options: InstrumentOptions) {
    this.name = name;
    this.options = options;
  }

  protected abstract create(attributes: Attributes): S;

  /** The series of `attributes` (the same object for the same set); call once, keep the result. */
  bind(attributes: Attributes = {}): S {
    const key = keyOf(attributes);
    let series = this.#series.get(key);
    if (series !== undefined) return series;
    if (this.#series.size >= MAX_SERIES_PER_FAMILY) return (this.#overflow ??= this.create(OVERFLOW_ATTRIBUTES));
    series = this.create({ ...attributes });
    this.#series.set(key, series);
    return series;
  }

  protected series(): S[] {
    const all = [...this.#series.values()];
    if (this.#overflow !== undefined) all.push(this.#overflow);
    return all;
  }

  abstract collect(now: HrTime): MetricData;
}

/** A counter family: {@link Family.bind} gives a {@link BoundCounter}. */
export class CounterFamily extends Family<CounterSeries> {
  protected create(attributes: Attributes): CounterSeries {
    return new CounterSeries(attributes, hrNow());
  }

  collect(now: HrTime): MetricData {
    return {
      descriptor: { name: this.name, ...this.options, valueType: ValueType.DOUBLE },
      aggregationTemporality: AggregationTemporality.CUMULATIVE,
      dataPointType: DataPointType.SUM,
      isMonotonic: true,
      dataPoints: this.series().map((s) => ({
        startTime: s.startTime,
        endTime: now,
        attributes: s.attributes,
        value: s.value,
      })),
    };
  }
}

/** A histogram family with explicit bucket bounds: {@link Family.bind} gives a {@link BoundHistogram}. */
export class HistogramFamily extends Family<HistogramSeries> {
  readonly #boundaries: readonly number[];

  constructor(name: string, options: HistogramOptions) {
    super(name, { description: options.description, unit: options.unit });
    this.#boundaries = [...options.boundaries];
  }

  protected create(attributes: Attributes): HistogramSeries {
    return new HistogramSeries(attributes, hrNow(), this.#boundaries);
  }

  collect(now: HrTime): MetricData {
    return {
      descriptor: { name: this.name, ...this.options, valueType: ValueType.DOUBLE },
      aggregationTemporality: AggregationTemporality.CUMULATIVE,
      dataPointType: DataPointType.HISTOGRAM,
      dataPoints: this.series().map((s) => ({
        startTime: s.startTime,
        endTime: now,
        attributes: s.attributes,
        value: {
          buckets: { boundaries: [...this.#boundaries], counts: [...s.counts] },
          sum: s.sum,
          count: s.count,
          ...(s.count === 0 ? {} : { min: s.min, max: s.max }),
        },
      })),
    };
  }
}

const families = new Map<string, CounterFamily | HistogramFamily>();

/**
 * The process's counter family `name` (created on first use; a second call
 * returns the same family). Throws when `name` is already a histogram.
 */
export function counterFamily(name: string, options: InstrumentOptions): CounterFamily {
  const known = families.get(name);
  if (known instanceof CounterFamily) return known;
  if (known !== undefined) throw new Error(`metric ${name} is already defined as a histogram`);
  const family = new CounterFamily(name, options);
  families.set(name, family);
  return family;
}

/** The process's histogram family `name` (see {@link counterFamily}). */
export function histogramFamily(name: string, options: HistogramOptions): HistogramFamily {
  const known = families.get(name);
  if (known instanceof HistogramFamily) return known;
  if (known !== undefined) throw new Error(`metric ${name} is already defined as a counter`);
  const family = new HistogramFamily(name, options);
  families.set(name, family);
  return family;
}

/**
 * Series bound on demand by one changing key (an agent, a model, a tool):
 * the first record of a key binds its series, later ones find it in a Map.
 * Past `max` keys every new key shares the series of `overflowKey`.
 */
export class KeyedSeries<S> {
  readonly #series = new Map<string, S>();
  readonly #bindKey: (key: string) => S;
  readonly #max: number;
  readonly #overflowKey: string;

  /** `bindKey` binds the series of a key; `max` keys at most (@default 500), then `overflowKey` (@default `_other`). */
  constructor(bindKey: (key: string) => S, max = 500, overflowKey = '_other') {
    this.#bindKey = bindKey;
    this.#max = max;
    this.#overflowKey = overflowKey;
  }

  /** The series of `key`, bound on its first use. */
  get(key: string): S {
    let series = this.#series.get(key);
    if (series === undefined) {
      const bound = this.#series.size >= this.#max ? this.#overflowKey : key;
      series = this.#series.get(bound) ?? this.#bindKey(bound);
      this.#series.set(bound, series);
    }
    return series;
  }
}

/** Hands the registry's families to a metric reader (see `MetricReaderOptions.metricProducers`). */
export const instrumentsProducer: MetricProducer = {
  async collect(): Promise<CollectionResult> {
    const now = hrNow();
    const metrics = [...families.values()].map((family) => family.collect(now));
    return {
      resourceMetrics: {
        // The reader keeps the SDK's resource: this one is not read.
        resource: undefined as never,
        scopeMetrics: [{ scope: { name: '@ars/telemetry' }, metrics }],
      },
      errors: [],
    };
  },
};
