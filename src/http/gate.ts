/**
 * @module http/gate
 * The named points where accounts hook into every synthesis, whatever the
 * transport: `authenticate` before anything is parsed, `admit` once the cost
 * is known (credit check, concurrency and rate limits), and on the returned
 * admission `charge` at the moment the endpoint's billing rule says, then
 * `release` exactly once however the request ends.
 */
import type { FastifyRequest } from 'fastify';
import type { SynthesisRequest } from '../synthesis/request.js';

export interface Caller {
  orgId: string | null;
  keyId: string | null;
}

export type Endpoint = 'tts.bytes' | 'tts.bytes.stream' | 'tts.sse' | 'tts.websocket' | 'openai.speech';

export interface Admission {
  /** Headers describing cost and balance, sent with the response. */
  readonly headers: Record<string, string>;
  /** Records the charge for this request; idempotent. */
  charge(): Promise<void>;
  /** Frees concurrency slots; idempotent. */
  release(): void;
}

export interface RequestGate {
  authenticate(request: FastifyRequest): Promise<Caller>;
  admit(caller: Caller, synthesis: SynthesisRequest, endpoint: Endpoint): Promise<Admission>;
}

/** The gate used while accounts are not configured: everyone may speak, nothing is charged. */
export const openGate: RequestGate = {
  async authenticate() {
    return { orgId: null, keyId: null };
  },
  async admit() {
    return { headers: {}, async charge() {}, release() {} };
  },
};
