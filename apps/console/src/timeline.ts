import type { EventFrame } from '@ars/client';

/** One entry of a run's timeline: consecutive LLM chunks merged into one text. */
export type TimelineEntry =
  | { readonly kind: 'llm'; readonly key: string; readonly text: string; readonly done: boolean }
  | { readonly kind: 'event'; readonly key: string; readonly frame: EventFrame };

/** Folds a run's frames into timeline entries (in sequence order, each frame once). */
export function buildTimeline(frames: readonly EventFrame[]): TimelineEntry[] {
  const entries: TimelineEntry[] = [];
  for (const frame of frames) {
    if (frame.type === 'llm.completion.chunk') {
      const delta = typeof frame.payload.Delta === 'string' ? frame.payload.Delta : '';
      const done = frame.payload.Done === true;
      const last = entries.at(-1);
      if (last?.kind === 'llm' && !last.done) {
        entries[entries.length - 1] = { ...last, text: last.text + delta, done };
      } else {
        entries.push({ kind: 'llm', key: `llm-${frame.sequence}`, text: delta, done });
      }
      continue;
    }
    entries.push({ kind: 'event', key: String(frame.sequence), frame });
  }
  return entries;
}

/** The total of `llm.cost.recorded` costs, by currency. */
export function costTotals(frames: readonly EventFrame[]): Record<string, number> {
  const totals: Record<string, number> = {};
  for (const frame of frames) {
    if (frame.type !== 'llm.cost.recorded') continue;
    const cost = frame.payload.Cost as { currency?: unknown; total?: unknown } | undefined;
    if (typeof cost?.total !== 'number') continue;
    const currency = typeof cost.currency === 'string' ? cost.currency : 'USD';
    totals[currency] = (totals[currency] ?? 0) + cost.total;
  }
  return totals;
}

/** A steering request the console sent, and what the stream said of it. */
export interface SteeringEffect {
  readonly id: number;
  readonly method: string;
  readonly state: 'sent' | 'applied' | 'rejected';
  readonly detail?: string;
}

/**
 * Marks the oldest `sent` effect of the frame's control `Type` as applied or
 * rejected when its `control.applied` / `control.rejected` arrives.
 */
export function settleEffect(effects: readonly SteeringEffect[], frame: EventFrame): readonly SteeringEffect[] {
  if (frame.type !== 'control.applied' && frame.type !== 'control.rejected') return effects;
  const type = frame.payload.Type;
  const index = effects.findIndex((e) => e.state === 'sent' && e.method === type);
  if (index === -1) return effects;
  const applied = frame.type === 'control.applied';
  const detail = applied
    ? String(frame.payload.Outcome ?? '')
    : String(frame.payload.Reason ?? frame.payload.Err ?? '');
  const next = [...effects];
  next[index] = { ...(effects[index] as SteeringEffect), state: applied ? 'applied' : 'rejected', detail };
  return next;
}
