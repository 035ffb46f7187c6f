/**
 * @module api/route-auth
 * Authentication declared per route: a route's `config.auth` (`http/route-schema.ts`
 * `RouteDeclaration`) says what it takes, and the document names the same field as the
 * operation's security. One hook checks the admin token, in constant time, for every route that
 * declares `admin` (the operator's API under `/admin`, whose plugin declares it for each of its
 * routes, and `/metrics`); an API key is checked by the gate where the request is admitted.
 */
import type { FastifyInstance } from 'fastify';
import { tokensEqual } from '../accounts/api-keys.js';
import { ApiError } from '../errors/api-error.js';
import type { ErrorCode } from '../errors/registry.js';
import type { RouteDeclaration } from '../http/route-schema.js';

/** What a route declaring the admin token adds: the refusal while no admin token is configured (`admin_disabled`). */
export interface AdminDeclaration extends RouteDeclaration {
  withoutAdminToken?: ErrorCode;
}

/** Throws unless `authorization` carries the admin token; `withoutToken` while none is configured. */
export function checkAdminToken(authorization: string | undefined, adminToken: string | null, withoutToken: ErrorCode = 'admin_disabled'): void {
  if (!adminToken) throw new ApiError(withoutToken);
  const match = /^Bearer\s+(\S+)$/i.exec(authorization ?? '');
  if (!match || !tokensEqual(match[1], adminToken)) throw new ApiError('invalid_admin_token');
}

/** The one admin-token hook: it runs first on every request, and checks the routes that declare `auth: 'admin'`. */
export function installRouteAuth(app: FastifyInstance, adminToken: string | null): void {
  // A callback hook: it runs on every request and needs no promise.
  app.addHook('onRequest', (request, _reply, done) => {
    const declared = request.routeOptions.config as AdminDeclaration | undefined;
    if (declared?.auth !== 'admin') return done();
    try {
      checkAdminToken(request.headers.authorization, adminToken, declared.withoutAdminToken);
      done();
    } catch (err) {
      done(err as Error);
    }
  });
}

/** Every route registered in `scope` (and in the scopes it registers) declares the admin token unless it declares otherwise. */
export function declareAdminRoutes(scope: FastifyInstance): void {
  scope.addHook('onRoute', (route) => {
    route.config = { ...route.config, auth: (route.config as RouteDeclaration | undefined)?.auth ?? 'admin' } as typeof route.config;
  });
}
