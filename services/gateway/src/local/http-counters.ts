/** Counters of one method as seen at the HTTP edge. */
export interface MethodCounters {
  requests: number;
  /** Responses with status ≥ 400. */
  errors: number;
  /** Sum of response times, in milliseconds. */
  total_ms: number;
}

/** A snapshot of the gateway's HTTP counters. */
export interface HttpCountersSnapshot {
  readonly requests: number;
  readonly responses_4xx: number;
  readonly responses_5xx: number;
  readonly by_status: Readonly<Record<string, number>>;
  readonly by_method: Readonly<Record<string, Readonly<MethodCounters>>>;
}

/** Most tenants whose own figures are kept; past it the tenant seen longest ago is forgotten. */
const MAX_TENANTS = 10_000;

/**
 * The gateway's own request counters; in memory, per replica, since boot.
 * Kept for the whole replica and per tenant (the verified tenant of an
 * authenticated request), so that a caller without a cross-tenant claim can
 * be shown its own tenant's figures only.
 */
export class HttpCounters {
  #requests = 0;
  #byStatus = new Map<number, number>();
  #byMethod = new Map<string, MethodCounters>();
  readonly #tenants: Map<string, HttpCounters> | undefined;

  constructor(perTenant = true) {
    this.#tenants = perTenant ? new Map() : undefined;
  }

  /**
   * Records one finished response. `method` is the registry method, or the
   * route for the rest; `tenant` the verified tenant, when the request was
   * authenticated.
   */
  record(method: string, status: number, elapsedMs: number, tenant?: string): void {
    if (tenant !== undefined && this.#tenants !== undefined) {
      let own = this.#tenants.get(tenant);
      if (own === undefined) {
        own = new HttpCounters(false);
        if (this.#tenants.size >= MAX_TENANTS) this.#tenants.delete(this.#tenants.keys().next().value as string);
      } else {
        this.#tenants.delete(tenant);
      }
      this.#tenants.set(tenant, own);
      own.record(method, status, elapsedMs);
    }
    this.#requests += 1;
    this.#byStatus.set(status, (this.#byStatus.get(status) ?? 0) + 1);
    let row = this.#byMethod.get(method);
    if (row === undefined) {
      row = { requests: 0, errors: 0, total_ms: 0 };
      this.#byMethod.set(method, row);
    }
    row.requests += 1;
    if (status >= 400) row.errors += 1;
    row.total_ms += elapsedMs;
  }

  /** The figures of the replica, or of one tenant (zeros for a tenant not seen). */
  snapshot(tenant?: string): HttpCountersSnapshot {
    if (tenant !== undefined) return (this.#tenants?.get(tenant) ?? new HttpCounters(false)).snapshot();
    let responses4xx = 0;
    let responses5xx = 0;
    const byStatus: Record<string, number> = {};
    for (const [status, count] of [...this.#byStatus].sort(([a], [b]) => a - b)) {
      byStatus[String(status)] = count;
      if (status >= 500) responses5xx += count;
      else if (status >= 400) responses4xx += count;
    }
    const byMethod: Record<string, MethodCounters> = {};
    for (const [method, row] of [...this.#byMethod].sort(([a], [b]) => a.localeCompare(b))) {
      byMethod[method] = { ...row, total_ms: Math.round(row.total_ms * 1000) / 1000 };
    }
    return {
      requests: this.#requests,
      responses_4xx: responses4xx,
      responses_5xx: responses5xx,
      by_status: byStatus,
      by_method: byMethod,
    };
  }
}
