/**
 * @module http/route-schema
 * Routes declare their requests with zod in Fastify's `schema` (`params`, `querystring`,
 * `headers`, `body`) and their answers in `schema.response` (the success with its media types,
 * the error statuses as references to the document's error responses). Validation is
 * `fastify-type-provider-zod`'s, compiled by Fastify once per route when it is registered, and the
 * handler's types come from the same schema; the OpenAPI document is generated from these very
 * declarations (`openapi/`).
 *
 * A validation failure becomes a registry error here, once for every dialect: the message the
 * schema gives (`{ error: '…' }`), which is a registry code (`missing_transcript`, sent with that
 * code's own message), a code and its reason (`invalid_generation_config: speed must be a number`)
 * or a sentence naming the field (an `invalid_request`); without one, `<field> <zod's
 * message>`. Each dialect's error renderer writes it in its own shape, with the field's location.
 */
import type { FastifyInstance } from 'fastify';
import { validatorCompiler } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ApiError } from '../errors/api-error.js';
import { ERRORS, isErrorCode, type ErrorCode } from '../errors/registry.js';

/** The schemas that become `components.schemas` of the document, by id. */
export const components = z.registry<{ id: string }>();

/** `schema`, named `id` in the document (a `$ref` wherever a route or another schema uses it). */
export function component<T extends z.ZodType>(id: string, schema: T): T {
  components.add(schema, { id });
  return schema;
}

/**
 * Validation by the zod type provider; answers are serialised as JSON without a schema (a route's
 * `response` describes it for the document and the tests, which validate real answers against it).
 */
export function installRouteSchemas(app: FastifyInstance): void {
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
}

/** The dialects, each with its error responses in the document. */
export type Dialect = 'native' | 'openai' | 'elevenlabs' | 'deepgram';

const RESPONSE_PREFIX: Record<Dialect, string> = { native: 'Error', openai: 'OpenAIError', elevenlabs: 'ElevenLabsError', deepgram: 'DeepgramError' };

const STATUSES = new Set(Object.values(ERRORS).map((definition) => definition.status as number));

/**
 * A route's error responses, for `schema.response`: each status a reference to the document's
 * response of that status in the dialect's shape (naming the registry codes sent with it).
 * ElevenLabs answers a field problem 422, as it does.
 */
export function errorResponses(dialect: Dialect, statuses: readonly number[]): Record<string, { $ref: string }> {
  const out: Record<string, { $ref: string }> = {};
  for (const status of statuses) {
    if (!STATUSES.has(status)) throw new Error(`no registry code has status ${status}`);
    out[String(status)] = { $ref: `#/components/responses/${RESPONSE_PREFIX[dialect]}${status}` };
  }
  if (dialect === 'elevenlabs' && statuses.includes(400)) out['422'] = { $ref: '#/components/responses/ElevenLabsValidation' };
  return out;
}

/** Where a refused value stands: ElevenLabs' `loc` (`['body', 'voice_settings', 'stability']`), OpenAI's `param` is its second. */
export interface FieldProblem {
  error: ApiError;
  loc: (string | number)[];
}

const LOCATION: Record<string, string> = { body: 'body', querystring: 'query', params: 'path', headers: 'header' };

interface ValidationIssue {
  instancePath: string;
  message: string;
  keyword: string;
}

/** A message zod writes itself, said of the field: `seed: Invalid input: expected number, received string`. */
function reasonOf(message: string, field: string): string {
  if (message && !/^(Invalid|Too (big|small)|Unrecognized)/.test(message)) return message;
  return field ? `${field}: ${message}` : `${message}; the body must be a JSON object`;
}

/** The registry error of a Fastify validation failure (`FST_ERR_VALIDATION`), or null for any other error. */
export function fieldProblem(err: unknown): FieldProblem | null {
  const failure = err as { validation?: ValidationIssue[]; validationContext?: string } | null;
  if (!failure || !Array.isArray(failure.validation) || failure.validation.length === 0) return null;
  const issue = failure.validation[0];
  const path = issue.instancePath
    .split('/')
    .filter(Boolean)
    .map((part) => (/^\d+$/.test(part) ? Number(part) : part));
  return problemOf(issue.message, path, LOCATION[failure.validationContext ?? 'body'] ?? 'body');
}

/** The registry error of a schema's refusal: `message` at `path` (in the body, unless `location` says where). */
export function problemOf(message: string, path: (string | number)[], location = 'body'): FieldProblem {
  const loc = [location, ...path];
  if (isErrorCode(message)) return { error: new ApiError(message as ErrorCode, { reason: '', index: path[1] }), loc };
  // `code: reason`: a registry code whose message is the reason given.
  const coded = /^([a-z_]+): (.+)$/s.exec(message);
  if (coded && isErrorCode(coded[1])) return { error: new ApiError(coded[1] as ErrorCode, { reason: coded[2] }), loc };
  const field = path.reduce<string>((name, part) => (typeof part === 'number' ? `${name}[${part}]` : name ? `${name}.${part}` : part), '');
  // `{index}`: the item of a list the message is about (`inputs[{index}] must be …`).
  return { error: new ApiError('invalid_request', { reason: reasonOf(message, field).replace('{index}', String(path[1])) }), loc };
}

/** A schema of the document by name, for an answer whose schema is declared elsewhere (a stream's events). */
export function schemaRef(id: string): { $ref: string } {
  return { $ref: `#/components/schemas/${id}` };
}

const BINARY = { type: 'string', format: 'binary' };

/** Media types answered with bytes, each documented as binary. */
export function binaryContent(...types: string[]): Record<string, { schema: unknown }> {
  return Object.fromEntries(types.map((type) => [type, { schema: BINARY }]));
}

/** A route's answer as the document describes it; `cost`: the cost headers come with it when accounts are on. */
export interface DocumentedResponse {
  description: string;
  content?: Record<string, { schema: unknown }>;
  /** Headers of the route's own, beside `x-request-id` (and the cost headers). */
  headers?: Record<string, { description: string; schema: unknown }>;
  cost?: boolean;
  /** Speech: the answer names the model that served (`x-voicegate-model`: the one asked for, or its fallback's). */
  spoken?: boolean;
}

/** How a route authenticates (`accounts/` checks it; the document names it as the operation's security). */
export type RouteAuth = 'none' | 'key' | 'admin';

/** What a route declares in its `config` beside its schema: its authentication and credentials. */
export interface RouteDeclaration {
  auth?: RouteAuth;
  /** An access token (`POST /access-token`) is accepted in place of an API key. */
  token?: boolean;
  /** The dialect's own credential schemes, beside `Bearer` and `X-API-Key` (`xiApiKey`, `deepgramToken`). */
  credentials?: string[];
  /**
   * A `multipart/form-data` body the handler reads itself, part by part (`@fastify/multipart`): an
   * object of its parts (a file part `format: 'binary'`), for the document only. Fastify validates
   * no `body` for the route, so the upload is streamed, not buffered; the handler checks each part.
   */
  multipart?: z.ZodObject;
}

/**
 * What any route can answer before its handler runs: 400 `unsupported_version` (a `Cartesia-Version`
 * the server does not know) and 503 `not_ready` (the server is shutting down).
 */
export const ANY_ROUTE_ERRORS: readonly number[] = [400, 503];

/** A text answer (`text/html`, `text/css` …) in the document. */
export function textContent(...types: string[]): Record<string, { schema: unknown }> {
  return Object.fromEntries(types.map((type) => [type, { schema: { type: 'string' } }]));
}

/** A JSON answer in the document: a zod schema, or the name of a component. */
export function jsonContent(schema: z.ZodType | string): Record<string, { schema: unknown }> {
  return { 'application/json': { schema: typeof schema === 'string' ? schemaRef(schema) : schema } };
}

declare module 'fastify' {
  /** What every route may declare in its `config` (`RouteDeclaration`). */
  interface FastifyContextConfig {
    auth?: RouteAuth;
    token?: boolean;
    credentials?: string[];
    /** With `auth: 'admin'`: the refusal while no admin token is configured (`admin_disabled` unless named). */
    withoutAdminToken?: ErrorCode;
  }
}
