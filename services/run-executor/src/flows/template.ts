import { flowTemplateReferences } from '@ars/contracts';
import type { FlowDefinition, FlowStep } from '@ars/contracts';

/**
 * Query templates of a flow's steps (grammar: `FlowDefinition` in
 * @ars/contracts): the input paths they need, and their rendering. Pure.
 */

/** What a template sees of one earlier step. */
export interface StepResult {
  readonly outcome?: 'completed' | 'failed';
  readonly answer?: string;
  readonly answers?: readonly string[];
}

/** What a template is rendered with. */
export interface TemplateScope {
  readonly input: Readonly<Record<string, unknown>>;
  readonly steps: ReadonlyMap<string, StepResult>;
}

function templates(step: FlowStep): string[] {
  if (step.type === 'run') return [step.query];
  if (step.type === 'parallel') return step.branches.map((b) => b.query);
  return [];
}

function lookup(input: Readonly<Record<string, unknown>>, path: readonly string[]): unknown {
  let value: unknown = input;
  for (const key of path) {
    if (value === null || typeof value !== 'object' || !Object.hasOwn(value, key)) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

/**
 * The `{{input.…}}` paths of the definition's templates that `input` does
 * not hold (a flow run with one missing is refused before it starts).
 */
export function missingInputs(definition: FlowDefinition, input: Readonly<Record<string, unknown>>): string[] {
  const missing = new Set<string>();
  for (const template of definition.steps.flatMap(templates)) {
    for (const ref of flowTemplateReferences(template)) {
      if (ref.kind === 'input' && lookup(input, ref.path) === undefined) missing.add(`input.${ref.path.join('.')}`);
    }
  }
  return [...missing];
}

function text(value: unknown): string {
  if (value === undefined || value === null) return '';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/**
 * Renders a template: input values (non-strings as JSON), step answers
 * (a parallel step's joined by a blank line), outcomes; a step that did not
 * run renders empty.
 */
export function renderTemplate(template: string, scope: TemplateScope): string {
  let out = '';
  let at = 0;
  for (const ref of flowTemplateReferences(template)) {
    const start = template.indexOf(ref.text, at);
    out += template.slice(at, start);
    at = start + ref.text.length;
    if (ref.kind === 'input') out += text(lookup(scope.input, ref.path));
    else if (ref.kind === 'step') {
      const result = scope.steps.get(ref.step);
      if (ref.member === 'outcome') out += result?.outcome ?? '';
      else if (ref.member === 'answers') out += result?.answers?.[ref.index ?? 0] ?? '';
      else out += result?.answer ?? '';
    } else out += ref.text;
  }
  return out + template.slice(at);
}
