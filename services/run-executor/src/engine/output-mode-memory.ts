import type { OutputMode, ProviderSettings } from '../providers/provider.ts';

/**
 * What output mode a provider's model accepted after refusing a better one,
 * remembered across runs by this executor: the next run calling that model
 * starts in the working mode instead of being refused again (and paying an
 * admission for it). Keyed by provider name, endpoint (two providers named
 * alike may be different servers) and model; bounded (the least recently
 * used entry goes first) and forgotten after a TTL, so a provider that gained
 * the mode is asked for it again. In memory only: a restart forgets it.
 */

export interface OutputModeMemoryOptions {
  /** How long a downgrade is remembered, in ms. @default 900000 (15 minutes) */
  readonly ttlMs?: number;
  /** Entries kept at most. @default 256 */
  readonly maxEntries?: number;
  /** The clock. @default Date.now */
  readonly now?: () => number;
}

interface Entry {
  readonly mode: OutputMode;
  readonly until: number;
}

/** A provider's model, as the memory keys it. */
export interface ModelAt {
  readonly settings: Pick<ProviderSettings, 'kind' | 'name' | 'baseUrl'>;
  readonly model: string;
}

export class OutputModeMemory {
  readonly #entries = new Map<string, Entry>();
  readonly #ttlMs: number;
  readonly #maxEntries: number;
  readonly #now: () => number;

  constructor(options: OutputModeMemoryOptions = {}) {
    this.#ttlMs = options.ttlMs ?? 900_000;
    this.#maxEntries = options.maxEntries ?? 256;
    this.#now = options.now ?? Date.now;
  }

  /** The mode remembered for the model, if any and not expired. */
  recall(at: ModelAt): OutputMode | undefined {
    const key = keyOf(at);
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.until <= this.#now()) {
      this.#entries.delete(key);
      return undefined;
    }
    // Most recently used last.
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    return entry.mode;
  }

  /** Remembers the mode the model was downgraded to. */
  remember(at: ModelAt, mode: OutputMode): void {
    const key = keyOf(at);
    this.#entries.delete(key);
    this.#entries.set(key, { mode, until: this.#now() + this.#ttlMs });
    while (this.#entries.size > this.#maxEntries) {
      const oldest = this.#entries.keys().next().value;
      if (oldest === undefined) break;
      this.#entries.delete(oldest);
    }
  }

  get size(): number {
    return this.#entries.size;
  }
}

function keyOf({ settings, model }: ModelAt): string {
  return JSON.stringify([settings.name ?? settings.kind, settings.baseUrl ?? '', model]);
}
