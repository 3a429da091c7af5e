import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { EVENTS, EVENT_SCHEMA_ANNOTATIONS, buildEventJsonSchemas } from '../src/index.ts';

/** The slice of Ajv's API the tests use. */
interface Ajv {
  compile(schema: object): ((data: unknown) => boolean) & { errors?: unknown };
}
type AjvClass = new (options: object) => Ajv;

// Ajv is not a dependency of this workspace; it comes with @readme/openapi-parser
// (a root devDependency), so resolve it from there.
const requireFromRoot = createRequire(import.meta.url);
const requireFromParser = createRequire(requireFromRoot.resolve('@readme/openapi-parser'));
const Ajv2020 = (requireFromParser('ajv/dist/2020') as { default: AjvClass }).default;

// Strict mode: an unknown keyword, type or format makes compile throw.
const ajv = new Ajv2020({
  strict: true,
  allErrors: true,
  keywords: [...EVENT_SCHEMA_ANNOTATIONS],
  formats: { 'date-time': true },
});

const schemas = buildEventJsonSchemas();

describe('event JSON schemas', () => {
  it('has a schema for every registered type', () => {
    expect(Object.keys(schemas.events).sort()).toEqual(EVENTS.map((e) => e.type).sort());
  });

  it.each(EVENTS.map((e) => e.type))('compiles the %s schema', (type) => {
    expect(() => ajv.compile(schemas.events[type] ?? {})).not.toThrow();
  });

  it('compiles the frame schema and accepts a frame', () => {
    const validate = ajv.compile(schemas.frame);
    const frame = {
      type: 'task.started',
      sequence: 42,
      occurred_at: '2025-01-02T03:04:05Z',
      tenant: 't',
      user: 'u',
      session: 's',
      run: 'task-1',
      payload: { TaskID: 'task-1', PriorState: 'pending' },
    };
    expect(validate(frame)).toBe(true);
    expect(validate({ ...frame, sequence: -1 })).toBe(false);
  });

  it('validates payloads like the zod registry does', () => {
    const validate = ajv.compile(schemas.events['task.started'] ?? {});
    expect(validate({ TaskID: 't', PriorState: 'pending' })).toBe(true);
    expect(validate({ TaskID: 't', PriorState: 'done' })).toBe(false);
    expect(validate({ TaskID: 't', PriorState: 'pending', Extra: 1 })).toBe(false);
  });

  it('annotates each schema with its type, class and group', () => {
    expect(schemas.events['notification.task_failed']).toMatchObject({
      title: 'notification.task_failed',
      'x-ars-class': 'redacted',
      'x-ars-group': 'notification',
    });
    expect(schemas.events['planner.finish']).toMatchObject({ 'x-ars-reserved': true });
  });
});
