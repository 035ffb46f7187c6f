/**
 * @module synthesis/gate
 * The named points where accounts hook into every synthesis, whatever the
 * transport; the gate and its types know no transport, so a synthesis that
 * no HTTP request carries reaches them as the session does. The synthesis
 * session calls them in order: `authenticate` before anything is parsed;
 * `admit` once the request (and so its cost) is known — key still valid,
 * rate and concurrency limits, and a reservation of the cost against the
 * balance; on the returned admission `charge` when the endpoint's billing
 * policy says (settling a reservation into its ledger row), `reserve` for
 * each further batch of a WebSocket turn, and `release` exactly once however
 * the request ends.
 */
import type { SynthesisRequest } from './request.js';
import type { ModelProfile } from '../models/profile.js';

export interface Caller {
  orgId: string | null;
  /** The API key, or the key an access token was made from (its requests are billed and rate-limited as that key's). */
  keyId: string | null;
  /** Set when the caller presented an access token rather than an API key. */
  token?: { grants: { tts: boolean }; expiresAt: number };
  /**
   * The scopes the caller holds (`src/accounts/scopes.ts`): its key's, narrowed to what a token can
   * carry for an access token; absent or null: every scope (a key without a scope list, accounts off).
   */
  scopes?: readonly string[] | null;
  /** The client's address, as authenticated (`AuthenticateOptions.address`); `admit` checks it again against the key's networks. */
  address?: string | null;
}

/**
 * What a route lets an access token do: `tts` (synthesis on any transport) or `read` (reading
 * models and voices). A route that names none takes API keys only.
 */
export type TokenUse = 'tts' | 'read';

export interface AuthenticateOptions {
  /** Accept an access token for this use; absent: an access token is refused with 403 `access_token_not_allowed`. */
  token?: TokenUse;
  /**
   * The client's address (the socket's, or the trusted proxy's `X-Forwarded-For` entry), for a key
   * limited to some networks; absent: unknown, and such a key is refused.
   */
  address?: string | null;
}

export type Endpoint =
  | 'tts.bytes'
  | 'tts.bytes.stream'
  | 'tts.sse'
  | 'tts.dialogue'
  | 'tts.dialogue.stream'
  | 'tts.websocket'
  | 'openai.speech'
  | 'openai.speech.stream'
  | 'elevenlabs.tts'
  | 'elevenlabs.tts.stream'
  | 'elevenlabs.tts.websocket'
  | 'elevenlabs.dialogue'
  | 'elevenlabs.dialogue.stream'
  | 'deepgram.speak'
  | 'deepgram.speak.websocket'
  | 'tts.wyoming'
  | 'tts.jobs'
  /** The operator's preview of a built-in voice (`/admin/voices/{id}/preview`): charged to no organisation. */
  | 'admin.voice_preview';

export interface AdmitOptions {
  endpoint: Endpoint;
  /** The client's own `x-request-id`, recorded on ledger rows beside the server's id. */
  clientRequestId: string | null;
  /** Characters whose cost batch 0 reserves: the whole transcript, or a WebSocket turn's first batch. */
  reserveCharacters: number;
  /**
   * A long-form job: batch 0's reservation is held under `id` (the job id) for `ttlMs` and outlives
   * this admission — `release()` leaves it — until `settleHeld` charges it or `releaseHeld` drops it.
   */
  hold?: { id: string; ttlMs: number };
}

/** A held reservation's charge: one ledger row keyed by the hold's id, whichever server makes it. */
export interface HeldCharge {
  /** The hold's id (a job id): the reservation and the charge's idempotency key. */
  id: string;
  orgId: string;
  keyId: string | null;
  model: string;
  /** The model's credit multiplier. */
  creditMultiplier: number;
  characters: number;
  endpoint: Endpoint;
  requestId: string;
}

export interface Admission {
  /**
   * Cost headers as known at admission: the exact cost of the whole transcript and the balance it
   * leaves (the balance when reserved, less this cost). Sent by streams, whose charge comes later.
   */
  readonly quote: Record<string, string>;
  /** The same headers at `model`'s price: a stream a fallback model serves (synthesis/fallback). */
  quoteFor?(model: ModelProfile): Record<string, string>;
  /**
   * Records charge `index` of this request: one ledger row of `characters`, keyed
   * `<request id>/<index>`, in the same transaction that settles that batch's reservation. A retry
   * of the same index never charges twice. Resolves with the cost headers of this charge.
   * `served`: the model that made the audio when a fallback did (its price, its name on the row).
   */
  charge(index: number, characters: number, served?: ModelProfile): Promise<Record<string, string>>;
  /**
   * Reserves batch `index` (a WebSocket turn's next 1,000 characters); false when the balance is
   * used up. Throws the registry error when something else refuses it (the key's budget).
   */
  reserve(index: number, characters: number): Promise<boolean>;
  /** Drops every reservation not charged and frees the concurrency slot; idempotent. */
  release(): Promise<void>;
}

export interface RequestGate {
  /** The caller a credential (an API key or access token, as presented; null: none) stands for. */
  authenticate(credential: string | null, options?: AuthenticateOptions): Promise<Caller>;
  admit(caller: Caller, synthesis: SynthesisRequest, options: AdmitOptions): Promise<Admission>;
  /** Charges a hold exactly once (idempotent by its id, safe to retry and to repeat after a crash); resolves with the balance after it. */
  settleHeld(charge: HeldCharge): Promise<void>;
  /** Drops a hold without charging; a no-op for one that is gone or held by another server (it lapses there). */
  releaseHeld(id: string): Promise<void>;
}

/** The organisation that owns everything when accounts are off. */
export const LOCAL_ORG_ID = 'org_local';

const FREE: Admission = {
  quote: {},
  async charge() {
    return {};
  },
  async reserve() {
    return true;
  },
  async release() {},
};

/** The gate used while accounts are off: no key needed, nothing charged, one implicit organisation. */
export const localGate: RequestGate = {
  async authenticate() {
    return { orgId: LOCAL_ORG_ID, keyId: null };
  },
  async admit() {
    return FREE;
  },
  async settleHeld() {},
  async releaseHeld() {},
};
