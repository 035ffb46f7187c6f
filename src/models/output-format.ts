/**
 * @module models/output-format
 * Checks a request's `output_format` against the model profile's fixed sets
 * and turns it into a typed `OutputFormat`. Nothing falls back silently: a
 * value outside the set, a field that does not belong to the container, an
 * mp3 bit rate LAME cannot produce at that rate, or an Opus sample rate libopus
 * does not take is a 400 that says why.
 */
import type { Container, Encoding, OutputFormat } from '../audio/format.js';
import { mp3BitRateProblem } from '../audio/mp3.js';
import { OPUS_SAMPLE_RATES, opusFormatProblem } from '../audio/opus.js';
import { ApiError } from '../errors/api-error.js';
import type { FormatRules, ModelProfile } from './profile.js';

function invalid(reason: string): ApiError {
  return new ApiError('invalid_output_format', { reason });
}

function list(values: readonly (string | number)[]): string {
  return values.join(', ');
}

/** The profile's default bit rate, or the highest listed one below it that LAME can make at this rate. */
function defaultBitRate(rules: FormatRules, sampleRate: number): number | undefined {
  const preferred = rules.defaultMp3BitRate;
  if (preferred === undefined) return undefined;
  const usable = rules.mp3BitRates.filter((b) => b <= preferred && !mp3BitRateProblem(sampleRate, b));
  return usable.length ? Math.max(...usable) : preferred;
}

/**
 * The output format a client asked for, in no dialect's shape: a dialect's parser reads its own
 * wire form into this (the native `output_format` object through `formatRequestOf`, an OpenAI
 * `response_format` or an ElevenLabs format name by their tables), checking only that each field
 * has its type; which values the model offers is decided by `resolveOutputFormat`.
 */
export interface FormatRequest {
  container?: string;
  encoding?: string;
  sampleRate?: number;
  bitRate?: number;
}

function describe(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(value) : `${Array.isArray(value) ? 'an array' : value === null ? 'null' : typeof value}`;
}

/**
 * Reads the native `output_format` object (`{container, encoding, sample_rate, bit_rate}`, as the
 * seeds and the Cartesia dialect send it, and long-form jobs take it) into a `FormatRequest`; null
 * when absent. A field of the wrong type is a 400 that names it.
 */
export function formatRequestOf(raw: unknown): FormatRequest | null {
  if (raw === undefined || raw === null) return null;
  if (typeof raw !== 'object' || Array.isArray(raw)) throw invalid('output_format is required: an object with container, encoding and sample_rate');
  const fields = raw as Record<string, unknown>;
  const request: FormatRequest = {};
  for (const [field, key, type] of [
    ['container', 'container', 'string'],
    ['encoding', 'encoding', 'string'],
    ['sample_rate', 'sampleRate', 'number'],
    ['bit_rate', 'bitRate', 'number'],
  ] as const) {
    const value = fields[field];
    if (value === undefined || value === null) continue;
    if (typeof value !== type) throw invalid(`output_format.${field} must be a ${type}; got ${describe(value)}`);
    (request as Record<string, unknown>)[key] = value;
  }
  return request;
}

export function resolveOutputFormat(requested: FormatRequest | null, model: ModelProfile, streaming: boolean): OutputFormat {
  if (!requested) throw invalid('output_format is required: an object with container, encoding and sample_rate');
  const rules: FormatRules = streaming ? model.stream : model.clip;
  const { container } = requested;
  if (typeof container !== 'string' || !rules.containers.includes(container as Container)) {
    const clipOnly = typeof container === 'string' && streaming && model.clip.containers.includes(container as Container);
    throw invalid(
      clipOnly
        ? `container ${container} is not available when streaming with ${model.id}; allowed: ${list(rules.containers)}`
        : `output_format.container must be one of ${list(rules.containers)} for ${model.id}` +
            (container === undefined ? '' : `; got ${JSON.stringify(container)}`),
    );
  }

  const { sampleRate } = requested;
  if (sampleRate === undefined || !rules.sampleRates.includes(sampleRate)) {
    throw invalid(
      `output_format.sample_rate must be one of ${list(rules.sampleRates)}` +
        (sampleRate === undefined ? '' : `; got ${JSON.stringify(sampleRate)}`),
    );
  }

  if (container === 'mp3') {
    if (requested.encoding !== undefined) throw invalid('output_format.encoding is not accepted with container mp3; use bit_rate');
    const bitRate = requested.bitRate ?? defaultBitRate(rules, sampleRate);
    if (bitRate === undefined || !rules.mp3BitRates.includes(bitRate)) {
      throw invalid(`output_format.bit_rate must be one of ${list(rules.mp3BitRates)}` + (bitRate === undefined ? '' : `; got ${JSON.stringify(bitRate)}`));
    }
    const problem = mp3BitRateProblem(sampleRate, bitRate);
    if (problem) throw invalid(problem);
    return { container: 'mp3', sampleRate, bitRate };
  }

  if (container === 'opus') {
    if (requested.encoding !== undefined) throw invalid('output_format.encoding is not accepted with container opus; use bit_rate');
    if (!OPUS_SAMPLE_RATES.includes(sampleRate)) {
      const rates = rules.sampleRates.filter((r) => OPUS_SAMPLE_RATES.includes(r));
      throw invalid(`opus does not support a sample rate of ${sampleRate} Hz; use one of ${list(rates)} with ${model.id}`);
    }
    const allowed = rules.opusBitRates ?? [];
    const bitRate = requested.bitRate ?? rules.defaultOpusBitRate;
    if (bitRate === undefined || !allowed.includes(bitRate)) {
      throw invalid(`output_format.bit_rate must be one of ${list(allowed)}` + (bitRate === undefined ? '' : `; got ${JSON.stringify(bitRate)}`));
    }
    const problem = opusFormatProblem(sampleRate, bitRate);
    if (problem) throw invalid(problem);
    return { container: 'opus', sampleRate, bitRate };
  }

  if (requested.bitRate !== undefined) throw invalid('output_format.bit_rate is only accepted with container mp3 or opus');
  const encoding = requested.encoding ?? rules.defaultEncoding;
  if (encoding === undefined || !rules.encodings.includes(encoding as Encoding)) {
    throw invalid(
      `output_format.encoding must be one of ${list(rules.encodings)} for ${model.id}` +
        (encoding === undefined ? '' : `; got ${JSON.stringify(encoding)}`),
    );
  }
  if (container === 'flac' && encoding !== 'pcm_s16le') throw invalid('output_format.encoding must be pcm_s16le with container flac (16-bit FLAC)');
  return { container: container as Container, encoding: encoding as Encoding, sampleRate };
}

/** The problem `resolveOutputFormat` would report for `requested` on `model` (a clip, or a stream), or null when it serves it. */
export function outputFormatProblem(requested: FormatRequest, model: ModelProfile, streaming: boolean): ApiError | null {
  try {
    resolveOutputFormat(requested, model, streaming);
    return null;
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
}

/** The names of a dialect's fixed formats (name → request) that `model` serves on a clip or a stream, in their order. */
export function formatsServed(names: Readonly<Record<string, FormatRequest>>, model: ModelProfile, streaming: boolean): string[] {
  return Object.entries(names)
    .filter(([, requested]) => !outputFormatProblem(requested, model, streaming))
    .map(([name]) => name);
}

