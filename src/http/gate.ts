/**
 * @module http/gate
 * The named points where accounts hook into every synthesis, whatever the
 * transport: `authenticate` before anything is parsed, `admit` once the cost
 * is known (credit check, concurrency and rate limits), and on the returned
 * admission `charge` at the moment the endpoint's billing rule says, then
 * `release` exactly once however the request ends.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { SynthesisRequest } from '../synthesis/request.js';

export interface Caller {
  orgId: string | null;
  keyId: string | null;
}

export type Endpoint = 'tts.bytes' | 'tts.bytes.stream' | 'tts.sse' | 'tts.websocket' | 'openai.speech';

/** What credentials are read from: an HTTP request or a WebSocket upgrade. */
export interface CredentialSource {
  headers: IncomingHttpHeaders;
  url: string;
}

export interface Admission {
  /**
   * Records the charge for the whole transcript (idempotent) and returns the
   * cost headers for the response: exact, since the cost is known up front and
   * the balance is the one this charge produced.
   */
  charge(): Promise<Record<string, string>>;
  /** Records one batch of a WebSocket turn: one ledger row for `characters`. */
  chargeBatch(characters: number): Promise<void>;
  /** Whether the organisation's balance is still above zero (checked before each new batch). */
  hasCredit(): Promise<boolean>;
  /** Frees concurrency slots; idempotent. */
  release(): void;
}

export interface RequestGate {
  /** `allowQuery`: also accept `api_key` / `access_token` in the query (WebSocket upgrades). */
  authenticate(source: CredentialSource, options?: { allowQuery?: boolean }): Promise<Caller>;
  admit(caller: Caller, synthesis: SynthesisRequest, endpoint: Endpoint): Promise<Admission>;
}

/** The organisation that owns everything when accounts are off. */
export const LOCAL_ORG_ID = 'org_local';

/** The gate used while accounts are off: no key needed, nothing charged, one implicit organisation. */
export const localGate: RequestGate = {
  async authenticate() {
    return { orgId: LOCAL_ORG_ID, keyId: null };
  },
  async admit() {
    return {
      async charge() {
        return {};
      },
      async chargeBatch() {},
      async hasCredit() {
        return true;
      },
      release() {},
    };
  },
};
