import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ApiError } from '../errors/api-error.js';
import { createLogger } from '../log/logger.js';
import type { Caller } from './gate.js';
import { openTurn, type TurnConnection, type TurnOpening } from './open-turn.js';
import type { SynthesisServices } from './services.js';
import type { TurnOutput } from './turn.js';
import { RECENT_CONTEXTS, TurnContexts } from './turn-contexts.js';

const log = createLogger('silent');
const caller = { orgId: 'org_a', keyId: null } as unknown as Caller;
let ids = 0;

/** A connection whose turns are all refused before admission (nothing below it is reached). */
function connection(change: Partial<TurnConnection> = {}): TurnConnection {
  return {
    services: { instanceId: 'turn-contexts-test', logger: log } as unknown as SynthesisServices,
    transport: 'websocket',
    signal: new AbortController().signal,
    connectionId: 'conn_1',
    draining: () => false,
    newRequestId: () => `req_${++ids}`,
    log,
    ...change,
  };
}

const output = { log } as unknown as TurnOutput;

function opening(request: TurnOpening['request']): Omit<TurnOpening, 'opened'> {
  return { endpoint: 'tts.websocket', caller, request, output, lifetimeMs: 1000 };
}

test('a refusal before admission is handed back with its request id, for the dialect to render', async () => {
  const opened = await openTurn(connection(), opening(() => {
    throw new ApiError('invalid_message', { reason: 'bad' });
  }));
  assert.equal(opened.turn, null);
  assert.equal(opened.refused?.code, 'invalid_message');
  assert.match((opened as { requestId: string }).requestId, /^req_\d+$/);
});

test('a leaving server refuses a new turn with not_ready before decoding its message', async () => {
  let decoded = false;
  const opened = await openTurn(connection({ draining: () => true }), opening(() => ((decoded = true), null)));
  assert.equal(opened.refused?.code, 'not_ready');
  assert.equal(decoded, false);
});

test('a message with nothing to speak opens nothing and is no refusal; nor is a client that has gone', async () => {
  const empty = await openTurn(connection(), opening(() => null));
  assert.deepEqual(empty, { turn: null, refused: null, empty: true });
  const gone = new AbortController();
  gone.abort();
  const left = await openTurn(connection({ signal: gone.signal }), opening(() => {
    throw new ApiError('invalid_message', { reason: 'bad' });
  }));
  assert.deepEqual(left, { turn: null, refused: null, empty: false });
});

test('the table remembers the last RECENT_CONTEXTS refused ids, the oldest forgotten first', async () => {
  const contexts = new TurnContexts(connection());
  const refuse = () => {
    throw new ApiError('too_many_contexts', { max: 1 });
  };
  for (let i = 0; i <= RECENT_CONTEXTS; i++) await contexts.open(`ctx_${i}`, undefined, opening(refuse));
  assert.equal(contexts.wasRefused('ctx_0'), false);
  assert.equal(contexts.wasRefused('ctx_1'), true);
  assert.equal(contexts.wasRefused(`ctx_${RECENT_CONTEXTS}`), true);
  contexts.forgetRefusal('ctx_1');
  assert.equal(contexts.wasRefused('ctx_1'), false);
  assert.equal(contexts.size, 0);
  assert.equal(contexts.hasEnded('ctx_1'), false);
});
