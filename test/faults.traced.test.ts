/**
 * @module test/faults.traced
 * The fault suites again (the request lifecycle's, and the ElevenLabs
 * WebSocket's), with tracing on at 100 % sampling, exporting OTLP to a sink
 * in this process: no crash, the same exact books after every case, and the
 * spans sent. Tracing reads its variables when a server is made, so they are
 * set before the suites are loaded.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, test } from 'node:test';
import { eventually } from './helpers/redis.js';

let exports = 0;
const sink = createServer((request, response) => {
  request.resume();
  request.on('end', () => {
    exports++;
    response.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
  });
});
await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve));
process.env.OTEL_EXPORTER_OTLP_ENDPOINT = `http://127.0.0.1:${(sink.address() as AddressInfo).port}`;
process.env.OTEL_BSP_SCHEDULE_DELAY = '50';
after(() => sink.close());

await import('./lifecycle.faults.test.js');
await import('./elevenlabs-websocket.faults.test.js');

test('the spans of the faults were exported', { timeout: 10_000 }, async () => {
  assert.ok(await eventually(() => exports > 0, 5_000), 'no OTLP export reached the sink');
});
