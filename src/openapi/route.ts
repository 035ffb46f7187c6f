/**
 * @module openapi/route
 * `GET /openapi.json` (the document, built once) and `GET /docs` (a small
 * rendered reference of it: every operation with its parameters, body and
 * responses), both without authentication: they describe the API, not
 * anyone's data. The page is rendered here, with no script or asset from
 * elsewhere, so it works offline.
 */
import type { FastifyInstance } from 'fastify';
import { buildOpenApiDocument, type DocumentOptions } from './document.js';
import { generatedPaths } from './generate.js';
import { ANY_ROUTE_ERRORS, errorResponses, textContent } from '../http/route-schema.js';

type Json = Record<string, any>;

function escape(text: unknown): string {
  return String(text ?? '').replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** `code` spans for backticks; everything else escaped. */
function prose(text: unknown): string {
  return escape(text).replace(/`([^`]+)`/g, '<code>$1</code>');
}

function schemaName(schema: Json | undefined): string {
  if (!schema) return '';
  if (typeof schema.$ref === 'string') {
    const name = schema.$ref.split('/').pop();
    return `<a href="#schema-${escape(name)}">${escape(name)}</a>`;
  }
  return `<code>${escape(schema.type ?? 'object')}</code>`;
}

function content(body: Json | undefined): string {
  if (!body?.content) return '';
  return Object.entries(body.content as Json)
    .map(([type, media]) => `<code>${escape(type)}</code> ${schemaName((media as Json).schema)}`)
    .join(', ');
}

/** The reference page: operations by tag, then the schemas as JSON. */
export function renderReference(document: Json): string {
  const sections: string[] = [];
  for (const tag of document.tags as Json[]) {
    const rows: string[] = [];
    for (const [path, item] of Object.entries(document.paths as Json)) {
      for (const [method, op] of Object.entries(item as Json)) {
        if (!(op.tags as string[]).includes(tag.name)) continue;
        const params = ((op.parameters ?? []) as Json[]).map((p) => `<code>${escape(p.name)}</code> (${escape(p.in)})`).join(', ');
        const responses = Object.entries(op.responses as Json)
          .map(([status, r]) => {
            const target = (r as Json).$ref ? String((r as Json).$ref).split('/').pop() : null;
            return target ? `<a href="#response-${escape(target)}">${escape(status)}</a>` : `${escape(status)} ${content(r as Json)}`;
          })
          .join(' · ');
        rows.push(
          `<tr><td><b>${escape(method.toUpperCase())}</b> <code>${escape(path)}</code></td><td>${prose(op.summary)}${op.description ? `<br><small>${prose(op.description)}</small>` : ''}` +
            `${params ? `<br>Parameters: ${params}` : ''}${op.requestBody ? `<br>Body: ${content(op.requestBody)}` : ''}<br>Responses: ${responses}</td></tr>`,
        );
      }
    }
    if (rows.length) sections.push(`<h2>${escape(tag.name)}</h2>${tag.description ? `<p>${prose(tag.description)}</p>` : ''}<table>${rows.join('')}</table>`);
  }
  const responses = Object.entries(document.components.responses as Json)
    .filter(([name]) => name.startsWith('Error'))
    .map(([name, r]) => `<li id="response-${escape(name)}"><b>${escape(name.slice(5))}</b>: ${prose((r as Json).description)}</li>`)
    .join('');
  const schemas = Object.entries(document.components.schemas as Json)
    .map(([name, s]) => `<h3 id="schema-${escape(name)}">${escape(name)}</h3><pre>${escape(JSON.stringify(s, null, 2))}</pre>`)
    .join('');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escape(document.info.title)} API ${escape(document.info.version)}</title>
<style>body{font:15px/1.45 system-ui,sans-serif;max-width:72rem;margin:2rem auto;padding:0 1rem}table{border-collapse:collapse;width:100%}td{border-top:1px solid #ddd;padding:.4rem;vertical-align:top}td:first-child{white-space:nowrap}pre{background:#f5f5f5;padding:.6rem;overflow:auto;font-size:13px}code{background:#f2f2f2;padding:0 .2rem}</style></head>
<body><h1>${escape(document.info.title)} API <small>${escape(document.info.version)}</small></h1><p>${prose(document.info.description)}</p><p>The machine-readable document: <a href="/openapi.json"><code>/openapi.json</code></a> (OpenAPI 3.1).</p>
${sections.join('\n')}<h2>Errors</h2><p>Every error response carries the <a href="#schema-ErrorBody">ErrorBody</a> envelope (OpenAI’s shape on <code>/v1/audio/speech</code>).</p><ul>${responses}</ul><h2>Schemas</h2>${schemas}</body></html>`;
}

export function registerOpenApi(app: FastifyInstance, options: DocumentOptions): void {
  let document: Json | null = null;
  let page: string | null = null;
  // Built on first use, once every route is registered.
  const built = () => (document ??= buildOpenApiDocument(options, generatedPaths(app, { accounts: options.accounts })));
  const errors = errorResponses('native', ANY_ROUTE_ERRORS);
  const self = { tags: ['Operations'], summary: 'This document', response: { 200: { description: 'The OpenAPI 3.1 document.', content: { 'application/json': { schema: { type: 'object' } } } }, ...errors } };
  const docs = { tags: ['Operations'], summary: 'A rendered reference of this document', response: { 200: { description: 'HTML.', content: textContent('text/html') }, ...errors } };
  app.get('/openapi.json', { schema: self }, async (_request, reply) => reply.type('application/json; charset=utf-8').send(built()));
  app.get('/docs', { schema: docs }, async (_request, reply) => reply.type('text/html; charset=utf-8').send((page ??= renderReference(built()))));
}
