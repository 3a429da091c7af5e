import { compileErrors, validate } from '@readme/openapi-parser';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES, METHODS, PROTOCOL_VERSION, buildOpenApiDocument } from '../src/index.ts';

type Operation = {
  operationId: string;
  parameters?: { $ref?: string; name?: string; in?: string }[];
  requestBody?: { content: Record<string, { schema: { $ref: string } }> };
  responses: Record<string, { $ref?: string; content?: Record<string, { schema: { $ref?: string } }> }>;
};
type PathItem = Partial<Record<'get' | 'post' | 'put' | 'delete' | 'patch', Operation>>;

const doc = buildOpenApiDocument({ serverUrl: 'https://ars.example.com' });
const paths = doc.paths as Record<string, PathItem>;
const operations = Object.values(paths).flatMap((item) => Object.values(item));

describe('OpenAPI document', () => {
  it('validates as OpenAPI 3.1', async () => {
    const result = await validate(structuredClone(doc) as Parameters<typeof validate>[0]);
    expect(result.valid ? '' : compileErrors(result)).toBe('');
    expect(result.specification).toBe('OpenAPI');
  });

  it('states the protocol version and the server', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe(PROTOCOL_VERSION);
    expect(doc.servers).toEqual([{ url: 'https://ars.example.com' }]);
  });

  it('has one path item with one operation per route', () => {
    const routes = METHODS.flatMap((m) => m.routes);
    expect(Object.keys(paths).sort()).toEqual([...routes].sort());
    for (const item of Object.values(paths)) expect(Object.keys(item)).toHaveLength(1);
  });

  it('posts a JSON body to every route but GET /v1/events', () => {
    for (const m of METHODS.filter((x) => x.httpMethod === 'POST')) {
      for (const route of m.routes) {
        const op = paths[route]?.post;
        expect(op?.requestBody?.content['application/json']?.schema.$ref, route).toMatch(/^#\/components\/schemas\//);
        expect(op?.responses['200']?.content?.['application/json']?.schema.$ref, route).toMatch(
          /^#\/components\/schemas\//,
        );
      }
    }
  });

  it('serves events.subscribe as GET text/event-stream with its filter inputs', () => {
    const op = paths['/v1/events']?.get;
    expect(op?.operationId).toBe('events.subscribe');
    expect(Object.keys(op?.responses['200']?.content ?? {})).toEqual(['text/event-stream']);
    const names = (op?.parameters ?? []).map((p) => p.name ?? p.$ref);
    expect(names).toEqual(expect.arrayContaining(['X-Service-Run', 'X-Service-Event-Type', 'Last-Event-ID', 'admin']));
  });

  it('requires bearer auth and documents X-Service-Session on every operation', () => {
    expect(doc.security).toEqual([{ bearerAuth: [] }]);
    const components = doc.components as unknown as {
      securitySchemes: Record<string, unknown>;
      parameters: Record<string, { name: string }>;
    };
    expect(components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(components.parameters.ServiceSession?.name).toBe('X-Service-Session');
    for (const op of operations) expect(op.parameters?.[0]?.$ref).toBe('#/components/parameters/ServiceSession');
  });

  it('answers errors with the ErrorEnvelope of the catalogue', () => {
    const envelope = doc.components.schemas.ErrorEnvelope as { properties: { code: { enum: string[] } } };
    expect(envelope.properties.code.enum).toEqual(Object.keys(ERROR_CODES));
    const start = paths['/v1/control/start']?.post;
    expect(start?.responses['410']?.$ref).toBe('#/components/responses/Error410');
    expect(paths['/v1/control/cancel']?.post?.responses['422']?.$ref).toBe('#/components/responses/Error422');
  });

  it('names components after the spec, with one ControlRequest per control', () => {
    const names = Object.keys(doc.components.schemas);
    expect(names).toEqual(
      expect.arrayContaining([
        'StartRequest',
        'StartResponse',
        'ControlRequest',
        'ControlResponse',
        'RuntimeInfo',
        'TaskDetail',
        'ControlRequest.redirect',
      ]),
    );
    expect(paths['/v1/control/redirect']?.post?.requestBody?.content['application/json']?.schema.$ref).toBe(
      '#/components/schemas/ControlRequest.redirect',
    );
  });

  it('gives unique operation ids', () => {
    const ids = operations.map((op) => op.operationId);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
