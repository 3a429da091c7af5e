import type { z } from 'zod';
import { ERROR_CODES } from './errors.ts';
import type { ErrorCode } from './errors.ts';
import { EventFrame } from './event-def.ts';
import { IdentityScope } from './identity.ts';
import { JSON_SCHEMA_DIALECT, toJsonSchemaComponents } from './json-schema.ts';
import type { JsonSchema } from './json-schema.ts';
import type { MethodDef } from './method-def.ts';
import { METHODS } from './methods/index.ts';
import { EVENTS_SUBSCRIBE_INPUTS } from './methods/events.ts';
import { ControlRequest } from './methods/start-steering.ts';
import { AgentConfigContent, AgentConfigRevision, SkillView } from './schemas/agent-config.ts';
import { ArtifactMetadata } from './schemas/artifact.ts';
import { Session, StateRecord } from './schemas/session.ts';
import { PausedRun, StatusCounts, Task } from './schemas/task.ts';
import { PROTOCOL_VERSION } from './version.ts';

/** Options of {@link buildOpenApiDocument}. */
export interface OpenApiOptions {
  /** The server URL advertised in `servers`. @default '/' (relative to where the document is served) */
  readonly serverUrl?: string;
}

/** An OpenAPI 3.1 document (plain JSON). */
export type OpenApiDocument = {
  readonly openapi: '3.1.0';
  readonly info: { readonly title: string; readonly version: string; readonly description: string };
  readonly paths: Readonly<Record<string, unknown>>;
  readonly components: {
    readonly schemas: Readonly<Record<string, JsonSchema>>;
    readonly [section: string]: unknown;
  };
  readonly [member: string]: unknown;
};

const SCHEMA_REF = '#/components/schemas/';
const ref = (name: string) => ({ $ref: `${SCHEMA_REF}${name}` });

/** Shared pieces named as components so that schemas reference them instead of inlining. */
const SHARED_COMPONENTS: ReadonlyArray<readonly [string, z.ZodType]> = [
  ['IdentityScope', IdentityScope],
  ['ControlRequest', ControlRequest],
  ['EventFrame', EventFrame],
  ['Task', Task],
  ['StatusCounts', StatusCounts],
  ['PausedRun', PausedRun],
  ['Session', Session],
  ['StateRecord', StateRecord],
  ['ArtifactMetadata', ArtifactMetadata],
  ['AgentConfigContent', AgentConfigContent],
  ['AgentConfigRevision', AgentConfigRevision],
  ['SkillView', SkillView],
];

/**
 * Names every request and response schema after the spec (requestName,
 * responseName). Methods sharing a name share one schema, except the steering
 * controls, whose per-control ControlRequest is named `ControlRequest.<method>`.
 */
function nameSchemas(): {
  names: Map<string, z.ZodType>;
  requestOf: Map<string, string>;
  responseOf: Map<string, string>;
} {
  const names = new Map<string, z.ZodType>();
  const byInstance = new Map<z.ZodType, string>();
  const claim = (name: string, schema: z.ZodType, method: string): string => {
    const known = byInstance.get(schema);
    if (known !== undefined) return known;
    const id = names.has(name) ? `${name}.${method}` : name;
    if (names.has(id)) throw new Error(`OpenAPI component name collision: ${id}`);
    names.set(id, schema);
    byInstance.set(schema, id);
    return id;
  };
  for (const [name, schema] of SHARED_COMPONENTS) claim(name, schema, name);
  const requestOf = new Map<string, string>();
  const responseOf = new Map<string, string>();
  for (const m of METHODS) {
    requestOf.set(m.name, claim(m.requestName, m.request, m.name));
    responseOf.set(m.name, claim(m.responseName, m.response, m.name));
  }
  return { names, requestOf, responseOf };
}

const STATUS_TITLES: Readonly<Record<number, string>> = {
  400: 'Bad request',
  401: 'Identity unknown',
  403: 'Identity known but insufficient',
  404: 'Not found',
  408: 'Request timeout',
  409: 'Conflict',
  410: 'Gone',
  413: 'Payload too large',
  422: 'Payload invalid',
  429: 'Rate limited',
  431: 'Headers too large',
  500: 'Internal error',
  501: 'Not implemented',
  503: 'Unavailable',
  504: 'Timeout',
};

function codesWithStatus(status: number): ErrorCode[] {
  return (Object.keys(ERROR_CODES) as ErrorCode[]).filter((code) => ERROR_CODES[code] === status);
}

const errorResponseName = (status: number) => `Error${status}`;

function errorResponses(): Record<string, unknown> {
  const statuses = [...new Set(Object.values(ERROR_CODES))].sort((a, b) => a - b);
  return Object.fromEntries(
    statuses.map((status) => [
      errorResponseName(status),
      {
        description: `${STATUS_TITLES[status] ?? 'Error'}: ${codesWithStatus(status).join(', ')}`,
        content: { 'application/json': { schema: ref('ErrorEnvelope') } },
      },
    ]),
  );
}

/** The methods that write under the caller's session: refused 410 `session_erased` once it was erased. */
const SESSION_WRITES: ReadonlySet<string> = new Set([
  'start',
  'memory.put',
  'agent_config.session.skills.upsert',
  'agent_config.session.skills.delete',
  'agent_config.session.set_user_prompt',
  'agent_config.session.set_source_disables',
]);

/** The error statuses an operation documents, from what the registry row says about it. */
function errorStatusesOf(method: MethodDef): number[] {
  const statuses = new Set([400, 401, 404, 429, 500, 501, 503, 504]);
  const authorized =
    method.auth.some((a) => a === 'A' || a === 'X' || a === 'XA') ||
    method.crossing !== undefined ||
    method.steering !== undefined ||
    method.requiredScope !== undefined;
  if (authorized) statuses.add(403);
  if (method.httpMethod === 'POST') statuses.add(413);
  if (method.auth.includes('M')) statuses.add(409);
  if (method.steering !== undefined) statuses.add(422);
  if (SESSION_WRITES.has(method.name)) statuses.add(410);
  return [...statuses].sort((a, b) => a - b);
}

function describeMethod(method: MethodDef, canonical: string): string {
  const lines = [
    method.summary,
    '',
    `Method \`${method.name}\`; owner \`${method.service}\`; auth ${method.auth.join(', ')}.`,
  ];
  if (method.steering) lines.push(`Minimum steering tier: \`${method.steering}\`.`);
  if (method.requiredScope) lines.push(`Requires the verified \`${method.requiredScope}\` claim.`);
  if (method.ownIdentityOnly) lines.push('Own verified identity only: no admin or cross-tenant path.');
  if (method.crossing) lines.push(`Body identity crossing: \`${JSON.stringify(method.crossing)}\`.`);
  if (canonical !== '') lines.push(`Alias of \`${canonical}\`.`);
  return lines.join('\n');
}

function extensions(method: MethodDef): Record<string, unknown> {
  return {
    'x-ars-method': method.name,
    'x-ars-service': method.service,
    'x-ars-auth': [...method.auth],
    'x-ars-surface': method.surface,
    ...(method.steering ? { 'x-ars-steering': method.steering } : {}),
    ...(method.requiredScope ? { 'x-ars-required-scope': method.requiredScope } : {}),
  };
}

function errorRefs(method: MethodDef): Record<string, unknown> {
  return Object.fromEntries(
    errorStatusesOf(method).map((s) => [String(s), { $ref: `#/components/responses/${errorResponseName(s)}` }]),
  );
}

function postOperation(method: MethodDef, index: number, requestName: string, responseName: string): unknown {
  const canonical = index === 0 ? '' : (method.routes[0] ?? '');
  return {
    operationId: index === 0 ? method.name : `${method.name}:${index}`,
    summary: method.summary,
    description: describeMethod(method, canonical),
    tags: [method.family],
    parameters: [{ $ref: '#/components/parameters/ServiceSession' }],
    requestBody: { required: true, content: { 'application/json': { schema: ref(requestName) } } },
    responses: {
      '200': { description: method.responseName, content: { 'application/json': { schema: ref(responseName) } } },
      ...errorRefs(method),
    },
    ...extensions(method),
  };
}

function subscribeOperation(method: MethodDef): unknown {
  const header = (name: string, description: string, schema: JsonSchema) => ({
    name,
    in: 'header',
    required: false,
    description,
    schema,
  });
  return {
    operationId: method.name,
    summary: method.summary,
    description: `${describeMethod(method, '')}\n\nEach SSE frame's \`data:\` line is one EventFrame JSON object; its \`id:\` is the frame's \`sequence\`.`,
    tags: [method.family],
    parameters: [
      { $ref: '#/components/parameters/ServiceSession' },
      header(EVENTS_SUBSCRIBE_INPUTS.runHeader, 'only events of this run (task id)', { type: 'string', minLength: 1 }),
      header(EVENTS_SUBSCRIBE_INPUTS.typeHeader, 'one event type or a comma-separated list', {
        type: 'string',
        minLength: 1,
      }),
      header(EVENTS_SUBSCRIBE_INPUTS.lastEventIdHeader, 'resume strictly after this sequence', {
        type: 'string',
        pattern: '^[0-9]+$',
      }),
      {
        name: EVENTS_SUBSCRIBE_INPUTS.adminQuery,
        in: 'query',
        required: false,
        description: 'admin=1: cross-tenant fan-in (admin or console:fleet)',
        schema: { type: 'string', enum: ['1'] },
      },
    ],
    responses: {
      '200': {
        description: 'Server-sent event stream of EventFrame objects (components.schemas.EventFrame).',
        content: { 'text/event-stream': { schema: { type: 'string' } } },
      },
      ...errorRefs(method),
    },
    ...extensions(method),
  };
}

const ERROR_ENVELOPE: JsonSchema = {
  type: 'object',
  description: 'The error envelope of every error response. Clients branch on code, never on message.',
  properties: {
    code: { type: 'string', enum: Object.keys(ERROR_CODES) },
    message: { type: 'string' },
  },
  required: ['code', 'message'],
};

/**
 * Builds the OpenAPI 3.1 document of the 126 registry methods: one path item
 * per route (aliases included), JSON request and response schemas from the
 * zod registry, the error envelope, bearer security and the
 * `X-Service-Session` header.
 */
export function buildOpenApiDocument(options: OpenApiOptions = {}): OpenApiDocument {
  const { names, requestOf, responseOf } = nameSchemas();
  const paths: Record<string, unknown> = {};
  for (const method of METHODS) {
    method.routes.forEach((route, index) => {
      const requestName = requestOf.get(method.name) ?? method.requestName;
      const responseName = responseOf.get(method.name) ?? method.responseName;
      paths[route] =
        method.httpMethod === 'GET'
          ? { get: subscribeOperation(method) }
          : { post: postOperation(method, index, requestName, responseName) };
    });
  }
  const families = [...new Set(METHODS.map((m) => m.family))];
  return {
    openapi: '3.1.0',
    info: {
      title: 'Agent Run Service',
      version: PROTOCOL_VERSION,
      description:
        'The wire contract of the Agent Run Service, generated from the @ars/contracts method registry. ' +
        'Every method is POST with a JSON body carrying `identity`, except events.subscribe (GET, text/event-stream).',
    },
    jsonSchemaDialect: JSON_SCHEMA_DIALECT,
    servers: [{ url: options.serverUrl ?? '/' }],
    security: [{ bearerAuth: [] }],
    tags: families.map((name) => ({ name })),
    paths,
    components: {
      schemas: { ...toJsonSchemaComponents(names, SCHEMA_REF, 'input'), ErrorEnvelope: ERROR_ENVELOPE },
      responses: errorResponses(),
      parameters: {
        ServiceSession: {
          name: 'X-Service-Session',
          in: 'header',
          required: false,
          description: "The conversation session; replaces the token's session claim.",
          schema: { type: 'string', minLength: 1 },
        },
      },
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'The connection token.' },
      },
    },
  };
}
