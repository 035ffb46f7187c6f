/**
 * @module http/json-body
 * Request bodies. TTS routes read theirs as bytes and decode JSON
 * themselves: any Content-Type is accepted (curl's default form type
 * included), the size cap is enforced before reading, and a body that is not
 * a JSON object gets the documented `invalid_json` rather than a framework
 * error. The other routes parse JSON with Fastify's own parser, but an empty
 * body of any type counts as no body, so a DELETE or GET that a client sends
 * with `Content-Type: application/json` and nothing else is not refused; a
 * route that needs a body answers its own documented error.
 */
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../errors/api-error.js';
import { acceptedBodyType, unsupportedMediaType } from './errors.js';

/** Registers a raw-bytes body parser in this (encapsulated) Fastify scope. */
export function acceptRawBodies(scope: FastifyInstance, bodyLimit: number): void {
  scope.removeAllContentTypeParsers();
  scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit }, (_request, body, done) => done(null, body));
}

/**
 * Registers a parser of any Content-Type that reads a JSON object into the body, for the route's
 * schema to validate, and keeps any other bytes as they are: the handler refuses them
 * (`decodeJsonObject`) once the request is authenticated, as it does a schema's refusal.
 */
export function acceptJsonBodies(scope: FastifyInstance, bodyLimit: number): void {
  scope.removeAllContentTypeParsers();
  scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit }, (_request, body, done) => {
    const bytes = body as Buffer;
    // `{` first (after blanks): anything else cannot be an object, and is not parsed twice.
    if (/^\s*\{/.test(bytes.subarray(0, 64).toString('latin1'))) {
      try {
        const value: unknown = JSON.parse(bytes.toString('utf8'));
        if (typeof value === 'object' && value !== null && !Array.isArray(value)) return done(null, value);
      } catch {
        // Kept as bytes: decodeJsonObject says what is wrong with them.
      }
    }
    done(null, bytes);
  });
}

/**
 * Registers, in this scope and the scopes it will register, a JSON parser
 * that reads an empty body as none, and a catch-all that accepts an empty
 * body of any other type and answers a non-empty one `unsupported_media_type`.
 */
export function acceptEmptyBodies(scope: FastifyInstance): void {
  const parseJson = scope.getDefaultJsonParser('error', 'error');
  scope.removeContentTypeParser('application/json');
  scope.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body: string, done) => {
    if (body.length === 0) return done(null, undefined);
    parseJson(request, body, done);
  });
  scope.addContentTypeParser('*', { parseAs: 'buffer' }, (request, body, done) => {
    if (body.length === 0) return done(null, undefined);
    done(unsupportedMediaType(request.headers['content-type'], acceptedBodyType(request.server)), undefined);
  });
}

export function decodeJsonObject(body: unknown): Record<string, unknown> {
  // Already read as an object (`acceptJsonBodies`).
  if (typeof body === 'object' && body !== null && !Buffer.isBuffer(body) && !Array.isArray(body)) return body as Record<string, unknown>;
  if (!Buffer.isBuffer(body) || body.length === 0) throw new ApiError('invalid_json', { reason: '; the body is empty' });
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch (err) {
    throw new ApiError('invalid_json', { reason: `; ${(err as Error).message}` });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ApiError('invalid_json', { reason: `; got ${Array.isArray(value) ? 'an array' : value === null ? 'null' : typeof value}` });
  }
  return value as Record<string, unknown>;
}

const OTHER_METHODS = ['GET', 'HEAD', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

/** Answers every method but POST on `url` with 405 `method_not_allowed`. */
export function postOnly(scope: FastifyInstance, url: string): void {
  scope.route({
    method: [...OTHER_METHODS],
    url,
    exposeHeadRoute: false,
    handler: async (request) => {
      throw new ApiError('method_not_allowed', { method: request.method, path: url, allowed: 'POST' }, { allow: 'POST' });
    },
  });
}
