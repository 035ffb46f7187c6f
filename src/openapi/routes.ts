/**
 * @module openapi/routes
 * The routes a Fastify instance registered, collected as they are added (an
 * `onRoute` hook installed before any route), so a test can check that the
 * OpenAPI document names every one of them.
 */
import type { FastifyInstance } from 'fastify';

export interface RegisteredRoute {
  method: string;
  /** Fastify's form: `/voices/:id`. */
  url: string;
}

const tracked = new WeakMap<FastifyInstance, RegisteredRoute[]>();

/** Starts collecting the routes of `app`; call before registering any. */
export function trackRoutes(app: FastifyInstance): void {
  const routes: RegisteredRoute[] = [];
  tracked.set(app, routes);
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) routes.push({ method, url: route.url });
  });
}

/** Every route registered on `app` since `trackRoutes` (complete once the app is ready). */
export function registeredRoutes(app: FastifyInstance): readonly RegisteredRoute[] {
  return tracked.get(app) ?? [];
}

/** A Fastify path in OpenAPI's form: `/voices/:id` → `/voices/{id}`. */
export function openApiPath(url: string): string {
  return url.replace(/:(\w+)/g, '{$1}');
}
