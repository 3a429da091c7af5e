/**
 * A line diff of two JSON documents, for the agent configuration page: both
 * values are printed as canonical JSON (object keys sorted, two-space indent)
 * so that a diff shows what changed, not how the keys happened to be ordered.
 */

/** One line of a diff: kept (in both), removed (only in the old) or added (only in the new). */
export interface DiffLine {
  readonly op: 'keep' | 'remove' | 'add';
  readonly text: string;
  /** 1-based line number in the old text (keep and remove). */
  readonly oldLine?: number;
  /** 1-based line number in the new text (keep and add). */
  readonly newLine?: number;
}

/** A run of diff lines shown together, or a count of unchanged lines left out between two runs. */
export type DiffHunk =
  | { readonly kind: 'lines'; readonly lines: readonly DiffLine[] }
  | { readonly kind: 'skipped'; readonly count: number };

/** Above this many cells (old lines × new lines) the middle is shown as replaced rather than aligned. */
export const MAX_DIFF_CELLS = 4_000_000;

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== 'object') return value;
  const sorted: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) sorted[key] = sortKeys((value as Record<string, unknown>)[key]);
  return sorted;
}

/** Canonical JSON: keys sorted at every depth, two-space indent; `undefined` prints as an empty document. */
export function canonicalJson(value: unknown): string {
  return value === undefined ? '' : JSON.stringify(sortKeys(value), null, 2);
}

/** The lines of a text; an empty text has none. */
function linesOf(text: string): string[] {
  return text === '' ? [] : text.split('\n');
}

/**
 * The longest common subsequence alignment of two line lists (after the
 * common head and tail are taken off), as diff lines in order. Removals come
 * before additions where lines are replaced.
 */
export function diffLines(oldText: string, newText: string): DiffLine[] {
  const a = linesOf(oldText);
  const b = linesOf(newText);
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const out: DiffLine[] = [];
  for (let i = 0; i < head; i++) out.push({ op: 'keep', text: a[i] ?? '', oldLine: i + 1, newLine: i + 1 });
  out.push(...alignMiddle(a.slice(head, a.length - tail), b.slice(head, b.length - tail), head));
  for (let k = tail; k > 0; k--) {
    const i = a.length - k;
    const j = b.length - k;
    out.push({ op: 'keep', text: a[i] ?? '', oldLine: i + 1, newLine: j + 1 });
  }
  return out;
}

function alignMiddle(a: readonly string[], b: readonly string[], offset: number): DiffLine[] {
  const n = a.length;
  const m = b.length;
  const removed = (i: number): DiffLine => ({ op: 'remove', text: a[i] ?? '', oldLine: offset + i + 1 });
  const added = (j: number): DiffLine => ({ op: 'add', text: b[j] ?? '', newLine: offset + j + 1 });
  if (n * m > MAX_DIFF_CELLS || n === 0 || m === 0) {
    return [...a.map((_, i) => removed(i)), ...b.map((_, j) => added(j))];
  }
  // lcs[i][j]: length of the longest common subsequence of a[i..] and b[j..], flattened row by row.
  const width = m + 1;
  const lcs = new Uint32Array((n + 1) * width);
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i * width + j] =
        a[i] === b[j]
          ? (lcs[(i + 1) * width + j + 1] ?? 0) + 1
          : Math.max(lcs[(i + 1) * width + j] ?? 0, lcs[i * width + j + 1] ?? 0);
    }
  }
  const out: DiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (a[i] === b[j]) {
      out.push({ op: 'keep', text: a[i] ?? '', oldLine: offset + i + 1, newLine: offset + j + 1 });
      i++;
      j++;
    } else if ((lcs[(i + 1) * width + j] ?? 0) >= (lcs[i * width + j + 1] ?? 0)) out.push(removed(i++));
    else out.push(added(j++));
  }
  while (i < n) out.push(removed(i++));
  while (j < m) out.push(added(j++));
  return out;
}

/** The line diff of two values' canonical JSON. */
export function diffJson(oldValue: unknown, newValue: unknown): DiffLine[] {
  return diffLines(canonicalJson(oldValue), canonicalJson(newValue));
}

/** True when the diff changes nothing. */
export function isUnchanged(lines: readonly DiffLine[]): boolean {
  return lines.every((line) => line.op === 'keep');
}

/**
 * Groups a diff for display: changed lines with up to `context` unchanged
 * lines around them; longer unchanged runs become a `skipped` count.
 */
export function hunks(lines: readonly DiffLine[], context = 3): DiffHunk[] {
  const shown = lines.map(() => false);
  lines.forEach((line, index) => {
    if (line.op === 'keep') return;
    for (let k = Math.max(0, index - context); k <= Math.min(lines.length - 1, index + context); k++) shown[k] = true;
  });
  const out: DiffHunk[] = [];
  let run: DiffLine[] = [];
  let skipped = 0;
  lines.forEach((line, index) => {
    if (shown[index] === true) {
      if (skipped > 0) out.push({ kind: 'skipped', count: skipped });
      skipped = 0;
      run.push(line);
    } else {
      if (run.length > 0) out.push({ kind: 'lines', lines: run });
      run = [];
      skipped++;
    }
  });
  if (run.length > 0) out.push({ kind: 'lines', lines: run });
  if (skipped > 0) out.push({ kind: 'skipped', count: skipped });
  return out;
}
