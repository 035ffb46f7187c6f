/**
 * @module models/import/piper
 * A Piper voice as Piper exports it (`<voice>.onnx` and its `<voice>.onnx.json`)
 * made into a sherpa-onnx model folder, as sherpa-onnx's own conversion
 * script does: the `.onnx.json` settings sherpa reads become ONNX metadata
 * (`model_type`, `comment: piper`, `language`, `voice`, `has_espeak`,
 * `n_speakers`, `sample_rate`) and `phoneme_id_map` becomes `tokens.txt`.
 * Before anything is written the pair is checked against itself: a graph
 * that already carries metadata must agree with the `.onnx.json`, and the
 * graph takes a speaker id exactly when the voice has several speakers.
 */
import { copyFileSync, appendFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { metadataBytes, OnnxFormatError, readGraphInputs, readOnnxSummary } from '../../engines/sherpa/onnx-metadata.js';
import { ImportRefused } from './refusal.js';

/** What sherpa-onnx reads of a Piper `.onnx.json`. */
export interface PiperVoiceConfig {
  sampleRate: number;
  speakers: number;
  espeakVoice: string;
  language: string;
  /** BCP 47 from `language.code` (`en_US` → `en-US`), when given. */
  languageCode: string | null;
  /** Symbol → token id (the first of each list, as sherpa's script takes it). */
  tokens: [symbol: string, id: number][];
  /** Speaker name → id, when the voice names them. */
  speakerIds: Record<string, number>;
}

const n = (value: number) => value.toLocaleString('en-US');

/** Reads and checks a Piper `.onnx.json`; `name` is the file's name, for messages. */
export function readPiperConfig(text: string, name: string): PiperVoiceConfig {
  let json: Record<string, unknown>;
  try {
    json = JSON.parse(text) as Record<string, unknown>;
  } catch {
    throw new ImportRefused(`\`${name}\` is not valid JSON`);
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) throw new ImportRefused(`\`${name}\` is not a JSON object`);
  const audio = json.audio as { sample_rate?: unknown } | undefined;
  const sampleRate = audio?.sample_rate;
  if (typeof sampleRate !== 'number' || !Number.isInteger(sampleRate) || sampleRate < 8000 || sampleRate > 192000) {
    throw new ImportRefused(`\`${name}\` gives no sample rate (audio.sample_rate), or one out of range`);
  }
  const speakers = json.num_speakers ?? 1;
  if (typeof speakers !== 'number' || !Number.isInteger(speakers) || speakers < 1 || speakers > 100_000) throw new ImportRefused(`\`${name}\` num_speakers must be a whole number from 1`);
  const phonemeType = json.phoneme_type ?? 'espeak';
  if (phonemeType !== 'espeak') throw new ImportRefused(`\`${name}\` has phoneme_type ${JSON.stringify(phonemeType)}; sherpa-onnx speaks Piper voices phonemized by eSpeak NG ("espeak")`);
  const espeakVoice = (json.espeak as { voice?: unknown } | undefined)?.voice;
  if (typeof espeakVoice !== 'string' || espeakVoice === '') throw new ImportRefused(`\`${name}\` names no eSpeak NG voice (espeak.voice)`);
  const map = json.phoneme_id_map;
  if (typeof map !== 'object' || map === null || Array.isArray(map) || Object.keys(map).length === 0) throw new ImportRefused(`\`${name}\` has no phoneme_id_map`);
  const tokens: [string, number][] = [];
  for (const [symbol, ids] of Object.entries(map as Record<string, unknown>)) {
    const id = Array.isArray(ids) ? ids[0] : undefined;
    if (typeof id !== 'number' || !Number.isInteger(id) || id < 0) throw new ImportRefused(`\`${name}\` phoneme_id_map[${JSON.stringify(symbol)}] is not a list of token ids`);
    if (symbol.includes('\n')) continue; // a line of tokens.txt cannot hold it
    tokens.push([symbol, id]);
  }
  const language = json.language as { name_english?: unknown; code?: unknown } | undefined;
  const code = typeof language?.code === 'string' ? language.code.replace('_', '-') : null;
  const speakerIds: Record<string, number> = {};
  if (json.speaker_id_map && typeof json.speaker_id_map === 'object') {
    for (const [speaker, id] of Object.entries(json.speaker_id_map as Record<string, unknown>)) if (typeof id === 'number') speakerIds[speaker] = id;
  }
  return {
    sampleRate,
    speakers,
    espeakVoice,
    language: typeof language?.name_english === 'string' ? language.name_english : espeakVoice,
    languageCode: code,
    tokens,
    speakerIds,
  };
}

/** Checks the graph at `onnx` (named `name`) against its `.onnx.json`; returns whether it already has sherpa's metadata. */
export function checkPiperGraph(onnx: string, name: string, config: PiperVoiceConfig, configName: string): boolean {
  let metadata: Record<string, string>;
  let inputs: string[];
  try {
    metadata = readOnnxSummary(onnx).metadata;
    inputs = readGraphInputs(onnx);
  } catch (err) {
    const reason = err instanceof OnnxFormatError ? err.message : (err as Error).message;
    throw new ImportRefused(`\`${name}\` is not a valid ONNX graph: ${reason}`);
  }
  const rate = Number(metadata.sample_rate);
  if (metadata.sample_rate !== undefined && rate !== config.sampleRate) {
    throw new ImportRefused(`\`${configName}\` says ${n(config.sampleRate)} Hz, the graph was exported for ${n(rate)}`);
  }
  const speakers = Number(metadata.n_speakers);
  if (metadata.n_speakers !== undefined && speakers !== config.speakers) {
    throw new ImportRefused(`\`${configName}\` says ${n(config.speakers)} speakers, the graph was exported for ${n(speakers)}`);
  }
  const takesSpeaker = inputs.includes('sid');
  if (!inputs.includes('input')) throw new ImportRefused(`\`${name}\` is not a Piper graph: it has no \`input\` (its inputs: ${inputs.join(', ') || 'none'})`);
  if (config.speakers > 1 && !takesSpeaker) throw new ImportRefused(`\`${configName}\` says ${n(config.speakers)} speakers, the graph takes no speaker id`);
  if (config.speakers === 1 && takesSpeaker) throw new ImportRefused(`\`${configName}\` says 1 speaker, the graph takes a speaker id (sid)`);
  return metadata.sample_rate !== undefined;
}

/** Writes `<dir>/<base>.onnx` (with sherpa's metadata added unless it has it) and `<dir>/tokens.txt`. */
export function writePiperModel(dir: string, base: string, onnx: string, config: PiperVoiceConfig, hasMetadata: boolean): void {
  const target = join(dir, `${base}.onnx`);
  copyFileSync(onnx, target);
  if (!hasMetadata) {
    appendFileSync(
      target,
      metadataBytes({
        model_type: 'vits',
        comment: 'piper',
        language: config.language,
        voice: config.espeakVoice,
        has_espeak: '1',
        n_speakers: String(config.speakers),
        sample_rate: String(config.sampleRate),
      }),
    );
  }
  writeFileSync(join(dir, 'tokens.txt'), config.tokens.map(([symbol, id]) => `${symbol} ${id}\n`).join(''));
}
