/**
 * @module config/sections/wyoming
 * The Wyoming protocol listener (Home Assistant's speech servers): off unless
 * a port is set; its interface, the one API key it speaks as, the models it
 * offers, its caps, and its zeroconf advertisement.
 */
import { z } from 'zod';
import { defineSection } from '../section.js';

const WYOMING_DEFAULTS = {
  port: null,
  host: null,
  apiKey: null,
  models: null,
  maxCharacters: 100_000,
  maxConnections: 64,
  idleTimeoutMs: 60_000,
  zeroconf: false,
  zeroconfName: null,
};

const wyomingSchema = z
  .object({
    /** TCP port of the listener (Home Assistant's convention is 10200); null: no listener. */
    port: z.number().int().min(0).max(65535).nullable().default(WYOMING_DEFAULTS.port),
    /** Interface it listens on; null: `server.host`. */
    host: z.string().min(1).nullable().default(WYOMING_DEFAULTS.host),
    /** The API key every Wyoming request speaks as (Wyoming has no authentication); required with accounts on. */
    apiKey: z.string().min(1).nullable().default(WYOMING_DEFAULTS.apiKey),
    /** The models whose voices are offered, in this order; null: every configured model. */
    models: z.array(z.string().min(1)).min(1).nullable().default(WYOMING_DEFAULTS.models),
    /** The longest text one synthesis (or one stream) may have, in characters. */
    maxCharacters: z.number().int().min(1).default(WYOMING_DEFAULTS.maxCharacters),
    /** Connections open at once; one more gets an `error` and is closed. */
    maxConnections: z.number().int().min(1).default(WYOMING_DEFAULTS.maxConnections),
    /** A connection with no event and no synthesis under way for this long is closed. */
    idleTimeoutMs: z.number().int().min(1000).default(WYOMING_DEFAULTS.idleTimeoutMs),
    /** Advertise the listener over mDNS as `_wyoming._tcp.local.`, so Home Assistant discovers it. */
    zeroconf: z.boolean().default(WYOMING_DEFAULTS.zeroconf),
    /** The advertised instance name; null: `voicegate-<hostname>`. */
    zeroconfName: z.string().min(1).max(63).nullable().default(WYOMING_DEFAULTS.zeroconfName),
  })
  .strict();

export const wyomingSection = defineSection('wyoming', wyomingSchema.default(WYOMING_DEFAULTS), {
  VOICEGATE_WYOMING_PORT: ['port', 'number'],
  VOICEGATE_WYOMING_HOST: ['host', 'string'],
  VOICEGATE_WYOMING_API_KEY: ['apiKey', 'string'],
  VOICEGATE_WYOMING_MODELS: ['models', 'list'],
  VOICEGATE_WYOMING_MAX_CHARACTERS: ['maxCharacters', 'number'],
  VOICEGATE_WYOMING_MAX_CONNECTIONS: ['maxConnections', 'number'],
  VOICEGATE_WYOMING_IDLE_TIMEOUT_MS: ['idleTimeoutMs', 'number'],
  VOICEGATE_WYOMING_ZEROCONF: ['zeroconf', 'boolean'],
  VOICEGATE_WYOMING_ZEROCONF_NAME: ['zeroconfName', 'string'],
});

export type WyomingConfig = z.output<typeof wyomingSchema>;
