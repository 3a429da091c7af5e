import { describe, expect, it } from 'vitest';
import { flowVersion, isFlowName, parseFlowFile } from '../../src/flows/definition-file.ts';

const YAML = 'steps:\n  - id: a\n    type: run\n    query: "#script finish:ok"\n';

describe('parseFlowFile', () => {
  it('reads YAML and JSON alike, versioned by content', () => {
    const yaml = parseFlowFile(YAML, { extension: '.yaml', tenant: 'acme' });
    const json = parseFlowFile(JSON.stringify({ steps: [{ id: 'a', type: 'run', query: '#script finish:ok' }] }), {
      extension: '.json',
      tenant: 'acme',
    });
    expect(yaml.ok && json.ok && yaml.definition).toEqual(json.ok && json.definition);
    expect(yaml.version).toBe(flowVersion(YAML));
    expect(yaml.version).not.toBe(json.version);
    expect(yaml.version).toMatch(/^sha256:[0-9a-f]{16}$/);
  });

  it('reports text that does not parse, and a definition the schema refuses, with paths', () => {
    const bad = parseFlowFile('{ nope', { extension: '.json', tenant: 'acme' });
    expect(bad.ok).toBe(false);
    expect(!bad.ok && bad.problems[0]).toMatch(/^not JSON/);
    const refused = parseFlowFile('steps: []', { extension: '.yml', tenant: 'acme' });
    expect(!refused.ok && refused.problems[0]).toMatch(/^steps:/);
  });

  it('needs a tenant member at the top of the directory, and the directory tenant when both are named', () => {
    expect(parseFlowFile(YAML, { extension: '.yaml', tenant: undefined }).ok).toBe(false);
    expect(parseFlowFile(`tenant: acme\n${YAML}`, { extension: '.yaml', tenant: undefined }).ok).toBe(true);
    const other = parseFlowFile(`tenant: globex\n${YAML}`, { extension: '.yaml', tenant: 'acme' });
    expect(!other.ok && other.problems).toEqual(["tenant: globex is not the file's tenant directory acme"]);
  });
});

describe('isFlowName', () => {
  it("refuses hidden names (a ConfigMap's ..data) and empty ones", () => {
    expect(isFlowName('summarize')).toBe(true);
    expect(isFlowName('..data')).toBe(false);
    expect(isFlowName('')).toBe(false);
  });
});
