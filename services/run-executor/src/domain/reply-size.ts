import type { Task } from '@ars/contracts';

/**
 * Sizes of task reads. A reply travels as one bus message (NATS
 * `max_payload`, 1 MiB by default), so every read of tasks stays within a
 * byte budget well under it: pages end early (with the cursor of the rest),
 * and a row too large on its own is abbreviated rather than answered with an
 * error. Only rows stored before `StartRequest.query` was bounded, or made of
 * characters JSON escapes six bytes at a time, can be that large.
 */

/** Characters (code points) an abbreviated `query` or `goal` keeps: its head. */
export const ABBREVIATED_CHARS = 4_096;

/** The members of a task view that may be abbreviated. */
const LONG_MEMBERS = ['query', 'goal'] as const;

/** The share of the bus's `max_payload` one read reply may fill. */
const BUDGET_SHARE = 3 / 4;

/** `max_payload` of a nats-server that does not say: its default, 1 MiB. */
const DEFAULT_MAX_PAYLOAD = 1_048_576;

/**
 * The byte budget of one task read reply: three quarters of the bus's
 * `max_payload` (768 KiB of the default 1 MiB). The rest of a reply (counts,
 * cursor, envelope, headers) takes well under 1 KiB, so the margin is ample.
 */
export function replyBudgetBytes(maxPayload: number | undefined): number {
  return Math.floor((maxPayload ?? DEFAULT_MAX_PAYLOAD) * BUDGET_SHARE);
}

/** Bytes of `value`'s JSON in UTF-8: what it adds to a reply. */
export function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value) ?? '', 'utf8');
}

/** The first `max` code points of `text` (never splitting a surrogate pair); `undefined` when it has no more. */
function head(text: string, max: number): string | undefined {
  if (text.length <= max) return undefined;
  let chars = 0;
  for (let index = 0; index < text.length; chars += 1) {
    if (chars === max) return text.slice(0, index);
    const code = text.codePointAt(index)!;
    index += code > 0xffff ? 2 : 1;
  }
  return undefined;
}

/**
 * `view` with `query` and `goal` cut to their first {@link ABBREVIATED_CHARS}
 * characters, each cut member named in `abbreviated`.
 */
export function abbreviateTask(view: Task): Task {
  const cut: Partial<Record<(typeof LONG_MEMBERS)[number], string>> = {};
  for (const member of LONG_MEMBERS) {
    const shortened = head(view[member], ABBREVIATED_CHARS);
    if (shortened !== undefined) cut[member] = shortened;
  }
  const names = LONG_MEMBERS.filter((member) => cut[member] !== undefined);
  return names.length === 0 ? view : { ...view, ...cut, abbreviated: names };
}
