/**
 * @module openapi/generate
 * The operations of the OpenAPI document, generated from the routes: `@fastify/swagger` collects
 * every route as it is registered, and the transform here turns each route's own declarations
 * (`http/route-schema.ts`: zod `params`, `querystring`, `headers` and `body`, `response` with its
 * media types and error statuses, `config.auth`, and `config.multipart`: the parts of an upload the
 * handler reads itself) into its operation. A route without a `summary`
 * (a 405 answer, a WebSocket's HTTP side) is left out.
 */
import type { FastifyInstance, RouteOptions } from 'fastify';
import { fastifySwagger } from '@fastify/swagger';
import { z } from 'zod';
import { components, type DocumentedResponse, type RouteDeclaration } from '../http/route-schema.js';

type Json = Record<string, any>;

export interface GenerateOptions {
  /** Accounts on: operations carry their security, successes the cost headers. */
  accounts: boolean;
}

const REQUEST_ID = { 'x-request-id': { $ref: '#/components/headers/RequestId' } };
const COST = {
  'x-request-cost-usd': { $ref: '#/components/headers/RequestCostUsd' },
  'x-request-credits': { $ref: '#/components/headers/RequestCredits' },
  'x-credits-remaining-usd': { $ref: '#/components/headers/CreditsRemainingUsd' },
  'x-credits-remaining': { $ref: '#/components/headers/CreditsRemaining' },
};

const SPOKEN = { 'x-voicegate-model': { $ref: '#/components/headers/VoicegateModel' } };

/** The credential schemes of each kind of authentication (`components.securitySchemes`). */
const KEY_SCHEMES = ['bearerKey', 'headerKey'];

/**
 * What zod writes of each schema: its own metadata (`describe`, `meta`) with, for a named one, its
 * id from `components` (so it is referenced, not repeated).
 */
const METADATA = {
  get: (schema: z.core.$ZodType) => {
    const own = z.globalRegistry.get(schema);
    const named = components.get(schema);
    return own || named ? { ...own, ...named } : undefined;
  },
  has: (schema: z.core.$ZodType) => z.globalRegistry.has(schema) || components.has(schema),
} as unknown as typeof components;

/** A zod schema as JSON Schema; a named one (or one naming others) by reference to `components.schemas`. */
export function jsonSchemaOf(schema: unknown): Json {
  if (!(schema instanceof z.ZodType)) return schema as Json;
  const id = components.get(schema)?.id;
  if (id) return { $ref: `#/components/schemas/${id}` };
  const { $schema: _s, $defs: _d, ...rest } = z.toJSONSchema(schema, { metadata: METADATA, unrepresentable: 'any' }) as Json;
  return JSON.parse(JSON.stringify(rest).replaceAll('"#/$defs/', '"#/components/schemas/')) as Json;
}

/** The parameters of an object schema (`params`, `querystring`, `headers`), one per property. */
function parameters(schema: unknown, where: 'path' | 'query' | 'header'): Json[] {
  if (!(schema instanceof z.ZodObject)) return [];
  return Object.entries(schema.shape as Record<string, z.ZodType>).map(([name, property]) => {
    const { description, ...json } = jsonSchemaOf(property);
    return { name, in: where, required: where === 'path' || !property.safeParse(undefined).success, ...(description ? { description } : {}), schema: json };
  });
}

function responses(declared: Record<string, DocumentedResponse | { $ref: string }> | undefined, options: GenerateOptions): Json {
  const out: Json = {};
  for (const [status, response] of Object.entries(declared ?? {})) {
    if ('$ref' in response) {
      out[status] = response;
      continue;
    }
    const content = response.content && Object.fromEntries(Object.entries(response.content).map(([type, media]) => [type, { schema: jsonSchemaOf(media.schema) }]));
    const headers = { ...REQUEST_ID, ...(response.spoken ? SPOKEN : {}), ...(response.cost && options.accounts ? COST : {}), ...response.headers };
    out[status] = { description: response.description, headers, ...(content ? { content } : {}) };
  }
  return out;
}

/** `postTtsBytes`, `getVoicesById`: the operation's id, the same for a generated and a hand-described path. */
export function operationId(method: string, path: string): string {
  const words = path
    .replace(/\{(\w+)\}/g, 'by $1')
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean);
  const slash = path.length > 1 && path.endsWith('/') ? ['Slash'] : [];
  return [method, ...words.map((w) => w[0].toUpperCase() + w.slice(1)), ...slash].join('') || method;
}

/** The operation of a route, from what the route declares. */
function operation(route: RouteOptions, url: string, options: GenerateOptions): Json {
  const schema = route.schema as Json;
  const declared = (route.config ?? {}) as RouteDeclaration;
  const method = String([route.method].flat()[0]).toLowerCase();
  let security: Json[] = [];
  if (options.accounts && declared.auth === 'admin') security = [{ adminToken: [] }];
  else if (options.accounts && declared.auth === 'key') security = [...KEY_SCHEMES, ...(declared.credentials ?? [])].map((scheme) => ({ [scheme]: [] }));
  const description = [schema.description, declared.token && options.accounts ? 'An access token from `POST /access-token` is accepted in place of an API key.' : undefined].filter(Boolean).join(' ');
  const params = [...parameters(schema.params, 'path'), ...parameters(schema.querystring, 'query'), ...parameters(schema.headers, 'header')];
  // `consumes`: media types beside JSON the body may come as, each the text itself (`text/plain`).
  const others = ((schema.consumes ?? []) as string[]).filter((type) => type !== 'application/json').map((type) => [type, { schema: { type: 'string' } }]);
  let body: Json | undefined;
  if (schema.body) body = { required: true, content: { 'application/json': { schema: jsonSchemaOf(schema.body) }, ...Object.fromEntries(others) } };
  // A multipart upload: its parts, declared in `config` so that Fastify does not validate (or buffer) the stream.
  else if (declared.multipart) body = { required: true, content: { 'multipart/form-data': { schema: jsonSchemaOf(declared.multipart) } } };
  return {
    operationId: operationId(method, url),
    tags: schema.tags ?? [],
    summary: schema.summary,
    ...(description ? { description } : {}),
    ...(params.length ? { parameters: params } : {}),
    ...(body ? { requestBody: body } : {}),
    responses: responses(schema.response, options),
    security,
    ...Object.fromEntries(Object.entries(schema).filter(([key]) => key.startsWith('x-'))),
  };
}

const generators = new WeakMap<FastifyInstance, (options: GenerateOptions) => Record<string, Json>>();

/**
 * Starts collecting the routes of `app` for the document; call before registering any. The
 * plugin is run at once, not queued, so its route hook sees every route registered after it.
 */
export function collectRoutes(app: FastifyInstance): void {
  let current: GenerateOptions = { accounts: false };
  fastifySwagger(
    app,
    {
      decorator: 'routeOperations',
      openapi: { openapi: '3.1.0', info: { title: 'Voicegate', version: '0' } },
      transform: ({ schema, url, route }: { schema: Json | undefined; url: string; route: RouteOptions }) =>
        !schema?.summary ? { schema: { hide: true }, url } : { schema: { 'x-operation': operation(route, url.replace(/:(\w+)/g, '{$1}'), current) }, url },
    } as never,
    () => {},
  );
  generators.set(app, (options) => {
    current = options;
    const generated = (app as unknown as { routeOperations(): Json }).routeOperations();
    const paths: Record<string, Json> = {};
    for (const [path, item] of Object.entries(generated.paths as Json)) {
      paths[path] = Object.fromEntries(Object.entries(item as Json).map(([method, op]) => [method, (op as Json)['x-operation']]));
    }
    return paths;
  });
}

/** The operations of every documented route of `app`, by path (once the app is ready). */
export function generatedPaths(app: FastifyInstance, options: GenerateOptions): Record<string, Json> {
  const generate = generators.get(app);
  return generate ? generate(options) : {};
}
