import { hunks } from '../config-diff.ts';
import type { DiffLine } from '../config-diff.ts';
import './pages.css';

const MARK: Readonly<Record<DiffLine['op'], string>> = { keep: ' ', remove: '-', add: '+' };
const SPOKEN: Readonly<Record<DiffLine['op'], string>> = { keep: '', remove: 'removed: ', add: 'added: ' };

/**
 * A unified line diff (`-` removed, `+` added, a few unchanged lines of
 * context, longer unchanged runs folded into a count). The sign is also said
 * in words for screen readers; colour is never the only cue.
 */
export function DiffView({
  lines,
  label,
  context = 3,
}: {
  readonly lines: readonly DiffLine[];
  readonly label: string;
  readonly context?: number;
}) {
  if (lines.every((line) => line.op === 'keep'))
    return <p className="hint">No difference: both revisions have the same configuration.</p>;
  const added = lines.filter((l) => l.op === 'add').length;
  const removed = lines.filter((l) => l.op === 'remove').length;
  return (
    <figure className="diff-figure">
      <figcaption>
        {label}: <span className="diff-count-add">{added} added</span>,{' '}
        <span className="diff-count-remove">{removed} removed</span>
      </figcaption>
      <ol className="diff" aria-label={label}>
        {hunks(lines, context).map((hunk, index) =>
          hunk.kind === 'skipped' ? (
            <li key={`s${index}`} className="diff-skip">
              ⋯ {hunk.count} unchanged {hunk.count === 1 ? 'line' : 'lines'}
            </li>
          ) : (
            hunk.lines.map((line) => (
              <li
                key={`${line.op}${line.oldLine ?? ''}:${line.newLine ?? ''}`}
                className={`diff-${line.op}`}
                data-op={line.op}
              >
                <span className="diff-no" aria-hidden="true">
                  {line.oldLine ?? ''}
                </span>
                <span className="diff-no" aria-hidden="true">
                  {line.newLine ?? ''}
                </span>
                <span className="diff-mark" aria-hidden="true">
                  {MARK[line.op]}
                </span>
                <span className="visually-hidden">{SPOKEN[line.op]}</span>
                <code>{line.text}</code>
              </li>
            ))
          ),
        )}
      </ol>
    </figure>
  );
}
