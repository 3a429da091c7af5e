import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Flow files of the flow tests, written under `<dir>/<tenant>/`: a
 * sequence passing answers forward, a fan-out/fan-in, a branch on a failed
 * run, budget stops, a slow flow to cancel, and an invalid file.
 */

/** A flow definition as the tests write it (JSON or YAML text). */
export const FLOW_FILES: Readonly<Record<string, string>> = {
  'sequence.yaml': [
    'name: Two in a row',
    'input_schema:',
    '  type: object',
    '  required: [topic]',
    '  properties:',
    '    topic: { type: string }',
    'steps:',
    '  - id: first',
    '    type: run',
    "    query: '#script finish:first-{{input.topic}}'",
    '  - id: second',
    '    type: run',
    "    query: '#script finish:second saw [{{ steps.first.answer }}]'",
  ].join('\n'),
  'fanout.json': JSON.stringify({
    name: 'Three at once',
    steps: [
      { id: 'prep', type: 'run', query: '#script finish:prepared' },
      {
        id: 'fan',
        type: 'parallel',
        join: 'all',
        branches: ['b0', 'b1', 'b2'].map((a, i) => ({
          query: `#script tool:wait{"ms":${100 * (3 - i)}};finish:${a}`,
        })),
      },
      {
        id: 'join',
        type: 'run',
        query: '#script finish:joined {{steps.fan.answers.0}},{{steps.fan.answers.1}},{{steps.fan.answers.2}}',
      },
    ],
  }),
  'branchy.json': JSON.stringify({
    steps: [
      { id: 'attempt', type: 'run', query: '#script cost:not-a-number' },
      {
        id: 'check',
        type: 'branch',
        on: 'attempt',
        cases: [{ when: { outcome: 'failed' }, goto: 'recover' }],
        default: 'happy',
      },
      { id: 'happy', type: 'run', query: '#script finish:happy' },
      { id: 'done', type: 'branch', on: 'happy', cases: [{ when: { outcome: 'completed' }, goto: '$end' }] },
      { id: 'recover', type: 'run', query: '#script finish:recovered after {{steps.attempt.outcome}}' },
    ],
  }),
  'matcher.json': JSON.stringify({
    steps: [
      { id: 'ask', type: 'run', query: '#script finish:{{input.word}}' },
      {
        id: 'route',
        type: 'branch',
        on: 'ask',
        cases: [{ when: { answer_matches: '^ye' }, goto: '$end' }],
        default: '$fail',
      },
    ],
  }),
  'stepcap.json': JSON.stringify({
    name: 'Capped at two',
    budget: { steps: 2 },
    steps: ['one', 'two', 'three'].map((a) => ({ id: a, type: 'run', query: `#script finish:${a}` })),
  }),
  'slow.json': JSON.stringify({
    name: 'Slow',
    budget: { wall_time_ms: 1_500 },
    steps: [{ id: 'wait', type: 'run', query: '#script tool:wait{"ms":8000};finish:late' }],
  }),
  'cancellable.json': JSON.stringify({
    steps: [
      {
        id: 'fan',
        type: 'parallel',
        branches: [
          { query: '#script tool:wait{"ms":8000};finish:x' },
          { query: '#script tool:wait{"ms":8000};finish:y' },
        ],
      },
    ],
  }),
  'broken.yaml': 'steps:\n  - id: a\n    type: teleport\n',
};

/** Writes {@link FLOW_FILES} as tenant `tenant`'s flows under `dir`. */
export async function writeFlows(dir: string, tenant: string): Promise<void> {
  await mkdir(join(dir, tenant), { recursive: true });
  await Promise.all(Object.entries(FLOW_FILES).map(([name, text]) => writeFile(join(dir, tenant, name), text)));
}
