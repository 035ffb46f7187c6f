/**
 * @module synthesis/resolve
 * Turns a transport-neutral `SpeechInput` into the `SynthesisRequest` the
 * pipeline runs: the model profile (length, streaming, formats, settings),
 * the engine bound to it, the voice as the calling organisation sees it and
 * that engine's profile of it and its loudness gain (as known: resolving runs
 * no engine), a cloned voice's
 * reference clip for an engine that clones, the pronunciation dictionary,
 * and the segments to speak (tags read). Knows no dialect: every transport's
 * request is resolved here the same way.
 */
import type { Engine, VoiceReference } from '../engines/engine.js';
import { ApiError } from '../errors/api-error.js';
import { LOCAL_ORG_ID } from './gate.js';
import { resolveGenerationConfig } from '../models/generation-config.js';
import { resolveOutputFormat } from '../models/output-format.js';
import type { ModelProfile } from '../models/profile.js';
import type { PronunciationItem } from '../store/store.js';
import { dialogueSegments, readDialogue, DIALOGUE_DEFAULTS, turnOffsets, type Speaker } from './dialogue.js';
import type { SynthesisRequest } from './request.js';
import { segmentsOf, speechSegments } from './segments.js';
import { isSsml, readSsml } from './ssml.js';
import type { SynthesisServices } from './services.js';
import type { SpeechInput } from './speech-input.js';
import { hasClip, type Voice } from '../voices/voice.js';
import { countTranscriptCharacters } from './tags.js';
import { knownGain } from './voice-gain.js';
import { decideLanguage, requestedLanguage } from './language.js';

export interface ResolveContext {
  services: SynthesisServices;
  requestId: string;
  /** Calling organisation; null means the implicit local one. */
  orgId: string | null;
  /** The WebSocket opens a context with an empty transcript; HTTP endpoints never allow one. */
  allowEmptyTranscript?: boolean;
  /** The most characters allowed instead of the model's per-request limit (a long-form job's segment, checked against the job's own limit). */
  maxCharacters?: number;
}

/** A mixed voice as `engine` speaks it: every part must be one of its voices, and the engine must mix them. */
function mixOn(engine: Engine, voice: Voice, modelId: string): Voice {
  const parts = voice.mix!;
  if (!engine.mixProfiles) throw new ApiError('voice_mix_unsupported', { voice: parts[0].voice.id, model: modelId, engine: engine.type });
  for (const part of parts) {
    if (!engine.supportsVoice(part.voice)) throw new ApiError('voice_profile_missing', { voice: part.voice.id, model: modelId, engine: engine.type });
  }
  const profiles = engine.mixProfiles(parts);
  if (!profiles) throw new ApiError('voice_mix_unsupported', { voice: parts[0].voice.id, model: modelId, engine: engine.type });
  return { ...voice, profiles };
}

export async function resolveSpeech(input: SpeechInput, context: ResolveContext): Promise<SynthesisRequest> {
  const { models, engines, store } = context.services;
  const model = models.get(input.modelId);
  if (!model) {
    throw new ApiError('model_not_found', { reason: `model ${input.modelId} does not exist; available: ${models.list().map((m) => m.id).join(', ')}` });
  }
  const turns = input.turns;
  // A dialogue's turns are checked one by one (`readDialogue`), each named by its index.
  if (!input.transcript && !turns && !context.allowEmptyTranscript) throw new ApiError('missing_transcript');
  const dialogue = context.services.dialogue ?? DIALOGUE_DEFAULTS;
  // SSML is read first: a document that cannot be read is refused before anything else is looked up.
  // A dialogue's turns are read, and counted, each on its own.
  const turnsRead = turns ? readDialogue(turns, dialogue) : null;
  const reading = !turns && isSsml(input.transcript, input.transcriptType) ? readSsml(input.transcript) : null;
  const characters = turnsRead ? turnsRead.characters : reading ? reading.characters : countTranscriptCharacters(input.transcript);
  const max = context.maxCharacters ?? model.maxTranscriptChars;
  if (characters > max) throw new ApiError('input_too_long', { count: characters, max });

  if (input.streaming && !model.streaming) throw new ApiError('invalid_request', { reason: `model ${model.id} does not offer streaming` });
  const format = resolveOutputFormat(input.outputFormat, model, input.streaming);
  const settings = resolveGenerationConfig(input.generationConfig, model, input.streaming);

  const requested = requestedLanguage(input.language);
  const engine = engines.get(model.engine);
  const first = await speakerOf(input.voiceId, engine, model, context);
  // Every turn's voice is looked up (once per id) before the dictionary, so a bad one is reported first.
  let speakers: Speaker[] | undefined;
  if (turns) {
    const found = new Map<string, Omit<Speaker, 'at'>>([[input.voiceId, first]]);
    const offsets = turnOffsets(turns);
    speakers = [];
    for (const [index, turn] of turns.entries()) {
      let speaker = found.get(turn.voiceId);
      if (!speaker) found.set(turn.voiceId, (speaker = await speakerOf(turn.voiceId, engine, model, context)));
      // A turn's own language, else the request's, else its voice's.
      const language = requestedLanguage(turn.language, `turn ${index} language`) ?? requested;
      speakers.push({ ...speaker, at: offsets[index], language: decideLanguage(language, speaker.voice, model) });
    }
  }
  const { voice, reference, gain } = first;

  // Looked up last, so a bad model, format or voice is reported first; empty means none.
  let pronunciation: PronunciationItem[] | null = null;
  // Several dictionaries apply in the order given: their items one list, the first's first.
  const dictIds = input.pronunciationDictIds ?? (input.pronunciationDictId ? [input.pronunciationDictId] : []);
  for (const id of dictIds) {
    const dict = await store.dicts.get(id);
    if (!dict || dict.orgId !== (context.orgId ?? LOCAL_ORG_ID)) throw new ApiError('dict_not_found', { id });
    pronunciation = pronunciation ? [...pronunciation, ...dict.items] : dict.items;
  }
  // Limits and billing stay on the transcript as sent; only the spoken text is expanded.
  const normalize = input.normalize ?? engines.normalizes(model.engine);
  const language = decideLanguage(requested, voice, model);
  const segmentContext = { model, settings, streaming: input.streaming, pronunciation, voiceGain: gain, normalize, language };
  const segments = speakers
    ? dialogueSegments(turns!, turnsRead!, speakers, segmentContext, dialogue.pauseSeconds)
    : reading
      ? segmentsOf(reading.segments, segmentContext)
      : speechSegments(input.transcript, segmentContext);
  // Only tags, or only whitespace: nothing to speak (a WebSocket context may open so).
  if (segments.every((segment) => segment.kind === 'mark') && !context.allowEmptyTranscript) throw new ApiError('missing_transcript');
  return {
    requestId: context.requestId,
    model,
    ...(input.modelNamed !== undefined ? { modelNamed: input.modelNamed } : {}),
    engine: engine!,
    transcript: input.transcript,
    characters,
    ...(reading ? { markup: reading.markup } : turnsRead ? { markup: turnsRead.markup } : {}),
    segments,
    voiceGain: gain,
    pronunciation,
    normalize,
    voice,
    ...(speakers ? { speakers } : {}),
    reference,
    format,
    language: requested,
    spokenLanguage: language,
    settings,
    streaming: input.streaming,
    wordTimestamps: input.wordTimestamps,
    contextId: input.contextId,
  };
}

/**
 * A voice as `engine` speaks it for the caller: the voice, its clip when the engine clones it, and
 * its loudness gain as known (looked up, never measured here: a voice not measured yet is spoken at
 * unity gain, and measured once its request has been admitted, session.ts, so no caller makes an
 * engine work before that).
 */
async function speakerOf(voiceId: string, engine: Engine | undefined, model: ModelProfile, context: ResolveContext): Promise<Omit<Speaker, 'at'>> {
  const found = await context.services.voices.get(voiceId, context.orgId);
  if (!found) throw new ApiError('voice_not_found', { id: voiceId });
  if (!engine) throw new ApiError('engine_unavailable', {}, { 'retry-after': '1' });
  const voice = found.mix ? mixOn(engine, found, model.id) : found;
  if (!found.mix && !engine.supportsVoice(voice)) throw new ApiError('voice_profile_missing', { voice: voice.id, model: model.id, engine: engine.type });
  // A cloning engine speaks a cloned voice from its clip; only such a pair needs the reference.
  const clones = engine.cloning !== undefined && hasClip(voice);
  if (clones && engine.cloning!.requiresTranscript && !voice.transcript?.trim()) {
    throw new ApiError('voice_transcript_missing', { voice: voice.id, model: model.id, engine: engine.type });
  }
  const reference: VoiceReference | null = clones ? await context.services.voices.reference(voice) : null;
  return { voice, reference, gain: knownGain(engine, voice, reference) ?? 1 };
}
