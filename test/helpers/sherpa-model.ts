/**
 * @module test/helpers/sherpa-model
 * A stand-in Piper (VITS) model for sherpa-onnx that tests write themselves,
 * so no test needs model weights or shared files: an ONNX graph of a few
 * standard ops that turns each phoneme token into a short tone of its own
 * pitch (longer with a larger length scale, so speed works; shifted by the
 * speaker id in multi-speaker form), the metadata sherpa requires, a
 * `tokens.txt` with Piper's symbol set, and `espeak-ng-data/` (linked) from
 * the bundled eSpeak NG. Built once per test run under `os.tmpdir()` and reused.
 * Variants make the broken models the bad-model tests need, and a stand-in
 * ZipVoice model (`zipvoiceStandIn`) clones a voice for the cloning tests.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import onnxProto from 'onnx-proto';
import { ensureEspeakData } from '../../src/engines/sherpa/espeak-data.js';

const { onnx } = onnxProto;

/** Piper's phoneme symbols, in token-id order. */
export const PIPER_SYMBOLS = [
  ..."_^$ !'(),-.:;?abcdefhijklmnopqrstuvwxyzæçðøħŋœǀǁǂǃɐɑɒɓɔɕɖɗɘəɚɛɜɞɟɠɡɢɣɤɥɦɧɨɪɫɬɭɮɯɰɱɲɳɴɵɶɸɹɺɻɽɾʀʁʂʃʄʈʉʊʋʌʍʎʏʐʑʒʔʕʘʙʛʜʝʟʡʢʲˈˌːˑ˞βθχᵻⱱ",
];

export const STAND_IN_RATE = 22050;
/** Samples per token at length scale 1 (25 ms; sherpa puts a pad token between phonemes). */
const SAMPLES_PER_TOKEN = 551;

export interface StandInOptions {
  speakers?: number;
  /** Leave out sherpa's metadata (a raw Piper export). */
  withoutMetadata?: boolean;
  sampleRate?: number;
}

const { TensorProto } = onnx;
const FLOAT = TensorProto.DataType.FLOAT;
const INT64 = TensorProto.DataType.INT64;

function tensor(name: string, dims: number[], values: number[], type = FLOAT): onnxProto.onnx.ITensorProto {
  return type === FLOAT ? { name, dims, dataType: FLOAT, floatData: values } : { name, dims, dataType: INT64, int64Data: values };
}

function value(name: string, type: number, shape: (number | string)[]): onnxProto.onnx.IValueInfoProto {
  return {
    name,
    type: { tensorType: { elemType: type, shape: { dim: shape.map((d) => (typeof d === 'number' ? { dimValue: d } : { dimParam: d })) } } },
  };
}

const node = (opType: string, input: string[], output: string[], attribute: onnxProto.onnx.IAttributeProto[] = []): onnxProto.onnx.INodeProto => ({
  opType,
  input,
  output,
  attribute,
});

/** A stand-in model's ONNX bytes: `graph` named `name`, with `metadata` as its metadata. */
function encode(name: string, graph: onnxProto.onnx.IGraphProto, metadata: Record<string, string> = {}): Uint8Array {
  return onnx.ModelProto.encode({
    irVersion: 7,
    producerName: 'voicegate-stand-in',
    opsetImport: [{ domain: '', version: 13 }],
    graph: { name, ...graph },
    metadataProps: Object.entries(metadata).map(([key, v]) => ({ key, value: v })),
  }).finish();
}

/** The ONNX bytes of the stand-in graph. */
export function standInOnnx(options: StandInOptions = {}): Uint8Array {
  const speakers = options.speakers ?? 1;
  const rate = options.sampleRate ?? STAND_IN_RATE;
  const nodes: onnxProto.onnx.INodeProto[] = [
    // Per-token sample count from the length scale: n = 882 · scales[1].
    node('Gather', ['scales', 'one'], ['length_scale'], [{ name: 'axis', type: onnx.AttributeProto.AttributeType.INT, i: 0 }]),
    node('Mul', ['length_scale', 'per_token'], ['limit']),
    node('Range', ['zero', 'limit', 'delta'], ['ramp']),
    node('Mul', ['ramp', 'inv_rate'], ['t']),
    node('Reshape', ['t', 'row'], ['t3']),
    // Pitch per token: 150 Hz + 25 Hz · id (+ 400 Hz · sid), and 2π.
    node('Cast', ['input'], ['ids'], [{ name: 'to', type: onnx.AttributeProto.AttributeType.INT, i: FLOAT }]),
    node('Mul', ['ids', 'step'], ['pitch0']),
    node('Add', ['pitch0', 'base'], ['pitch1']),
  ];
  let pitch = 'pitch1';
  if (speakers > 1) {
    nodes.push(node('Cast', ['sid'], ['sidf'], [{ name: 'to', type: onnx.AttributeProto.AttributeType.INT, i: FLOAT }]));
    nodes.push(node('Mul', ['sidf', 'speaker_step'], ['shift']));
    nodes.push(node('Add', ['pitch1', 'shift'], ['pitch2']));
    pitch = 'pitch2';
  }
  nodes.push(
    node('Unsqueeze', [pitch, 'last'], ['pitch3']),
    node('Mul', ['pitch3', 't3'], ['phase']),
    node('Sin', ['phase'], ['wave']),
    node('Mul', ['wave', 'gain'], ['loud']),
    node('Reshape', ['loud', 'flat'], ['output']),
  );
  const inputs = [value('input', INT64, [1, 'T']), value('input_lengths', INT64, [1]), value('scales', FLOAT, [3])];
  if (speakers > 1) inputs.push(value('sid', INT64, [1]));
  const model: onnxProto.onnx.IModelProto = {
    irVersion: 7,
    producerName: 'voicegate-stand-in',
    opsetImport: [{ domain: '', version: 13 }],
    graph: {
      name: 'stand-in-vits',
      node: nodes,
      input: inputs,
      output: [value('output', FLOAT, [1, 1, 'S'])],
      initializer: [
        tensor('one', [], [1], INT64),
        tensor('per_token', [], [SAMPLES_PER_TOKEN]),
        tensor('zero', [], [0]),
        tensor('delta', [], [1]),
        tensor('inv_rate', [], [(2 * Math.PI) / rate]),
        tensor('row', [3], [1, 1, -1], INT64),
        tensor('step', [], [25]),
        tensor('base', [], [150]),
        tensor('speaker_step', [], [400]),
        tensor('last', [1], [2], INT64),
        tensor('gain', [], [0.3]),
        tensor('flat', [3], [1, 1, -1], INT64),
      ],
    },
    metadataProps: options.withoutMetadata
      ? []
      : Object.entries({
          model_type: 'vits',
          comment: 'piper',
          language: 'English',
          voice: 'en-us',
          sample_rate: String(rate),
          n_speakers: String(speakers),
          add_blank: '0',
        }).map(([key, v]) => ({ key, value: v })),
  };
  return onnx.ModelProto.encode(model).finish();
}

export const standInTokens = (): string => PIPER_SYMBOLS.map((s, i) => `${s} ${i}\n`).join('');

/** The stand-in's `.onnx.json` as Piper writes one (rate, speakers and eSpeak NG voice as given). */
export function standInPiperJson(options: { sampleRate?: number; speakers?: number; voice?: string } = {}): string {
  return JSON.stringify({
    audio: { sample_rate: options.sampleRate ?? STAND_IN_RATE, quality: 'medium' },
    espeak: { voice: options.voice ?? 'en-us' },
    language: { code: 'en_US', family: 'en', region: 'US', name_native: 'English', name_english: 'English', country_english: 'United States' },
    inference: { noise_scale: 0.667, length_scale: 1, noise_w: 0.8 },
    phoneme_type: 'espeak',
    phoneme_map: {},
    phoneme_id_map: Object.fromEntries(PIPER_SYMBOLS.map((s, i) => [s, [i]])),
    num_symbols: PIPER_SYMBOLS.length,
    num_speakers: options.speakers ?? 1,
    speaker_id_map: {},
    piper_version: '1.0.0',
  });
}

/** Writes a stand-in model folder at `dir` (`model.onnx`, `tokens.txt`, `espeak-ng-data/`). */
export function writeStandInModel(dir: string, options: StandInOptions & { onnxName?: string } = {}): string {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, options.onnxName ?? 'model.onnx'), standInOnnx(options));
  writeFileSync(join(dir, 'tokens.txt'), standInTokens());
  // One extracted copy per run, linked into every model folder.
  symlinkSync(ensureEspeakData(join(runDir(), 'espeak-ng-data')), join(dir, 'espeak-ng-data'), 'dir');
  return dir;
}

export const ZIPVOICE_STAND_IN_RATE = 24000;
/** Samples per mel frame of the ZipVoice stand-in (its vocoder's hop). */
export const ZIPVOICE_HOP = 256;

/**
 * The three graphs of a stand-in ZipVoice model (text encoder, flow-matching decoder, Vocos
 * vocoder), made so its output shows what reached it: the encoder asks for 4 frames per text
 * token, plus as many frames again as the reference clip has (sherpa drops one clip's worth), plus
 * 4 per token of the clip's transcript; the decoder keeps sherpa's noise as it is; the vocoder turns
 * every frame into a steady 187.5 Hz tone. So, per sentence, the audio lasts
 * `ZIPVOICE_HOP · (4 · text tokens + clip frames + 4 · transcript tokens)` samples: a longer clip or
 * a longer transcript makes longer audio.
 */
export function zipvoiceStandInOnnx(): { encoder: Uint8Array; decoder: Uint8Array; vocoder: Uint8Array } {
  const INT = onnx.AttributeProto.AttributeType.INT;
  const axis0 = [{ name: 'axis', type: INT, i: 0 }];
  const encoder = encode('stand-in-zipvoice-encoder', {
    node: [
      node('Shape', ['tokens'], ['tokens_shape']),
      node('Gather', ['tokens_shape', 'index1'], ['text_len'], axis0),
      node('Shape', ['prompt_tokens'], ['prompt_shape']),
      node('Gather', ['prompt_shape', 'index1'], ['prompt_len'], axis0),
      node('Add', ['text_len', 'prompt_len'], ['all_tokens']),
      node('Mul', ['all_tokens', 'four'], ['token_frames']),
      node('Mul', ['prompt_features_len', 'two'], ['clip_frames']),
      node('Add', ['token_frames', 'clip_frames'], ['frames']),
      node('Concat', ['one', 'frames', 'feat_dim'], ['condition_shape'], axis0),
      node('ConstantOfShape', ['condition_shape'], ['text_condition'], [{ name: 'value', type: onnx.AttributeProto.AttributeType.TENSOR, t: tensor('zero', [1], [0]) }]),
    ],
    input: [value('tokens', INT64, [1, 'T']), value('prompt_tokens', INT64, [1, 'P']), value('prompt_features_len', INT64, [1]), value('speed', FLOAT, [1])],
    output: [value('text_condition', FLOAT, [1, 'N', 100])],
    initializer: [tensor('index1', [1], [1], INT64), tensor('four', [], [4], INT64), tensor('two', [], [2], INT64), tensor('one', [1], [1], INT64), tensor('feat_dim', [1], [100], INT64)],
  });
  const decoder = encode('stand-in-zipvoice-decoder', {
    node: [node('Mul', ['x', 'zero'], ['v'])],
    input: [value('t', FLOAT, [1]), value('x', FLOAT, [1, 'N', 100]), value('text_condition', FLOAT, [1, 'N', 100]), value('speech_condition', FLOAT, [1, 'N', 100]), value('guidance_scale', FLOAT, [1])],
    output: [value('v', FLOAT, [1, 'N', 100])],
    initializer: [tensor('zero', [], [0])],
  });
  // One bin, 8 of 1024 at 24 kHz: 4 cycles per 256-sample hop, so the frames join into one steady tone.
  const magnitude = Array.from({ length: 513 }, (_, bin) => (bin === 8 ? 60 : 0));
  const vocoder = encode(
    'stand-in-vocos',
    {
      node: [
        node('Shape', ['mels'], ['mels_shape']),
        node('Gather', ['mels_shape', 'index2'], ['frames'], axis0),
        node('Concat', ['one', 'bins', 'frames'], ['spectrum_shape'], axis0),
        node('Expand', ['magnitude', 'spectrum_shape'], ['mag']),
        node('Expand', ['cosine', 'spectrum_shape'], ['x']),
        node('Expand', ['sine', 'spectrum_shape'], ['y']),
      ],
      input: [value('mels', FLOAT, [1, 100, 'T'])],
      output: [value('mag', FLOAT, [1, 513, 'T']), value('x', FLOAT, [1, 513, 'T']), value('y', FLOAT, [1, 513, 'T'])],
      initializer: [
        tensor('index2', [1], [2], INT64),
        tensor('one', [1], [1], INT64),
        tensor('bins', [1], [513], INT64),
        tensor('magnitude', [1, 513, 1], magnitude),
        tensor('cosine', [], [1]),
        tensor('sine', [], [0]),
      ],
    },
    { model_type: 'vocos', n_fft: '1024', hop_length: String(ZIPVOICE_HOP), win_length: '1024' },
  );
  return { encoder, decoder, vocoder };
}

/**
 * A stand-in ZipVoice model folder, in the layout of the official archives (`text_encoder.onnx`,
 * `fm_decoder.onnx`, `vocos_24khz.onnx`, `tokens.txt`, `lexicon.txt`, `espeak-ng-data/`), built once
 * per run. sherpa-onnx loads it as a ZipVoice model and clones with it (see `zipvoiceStandInOnnx`).
 */
export function zipvoiceStandIn(name = 'zipvoice-stand-in'): string {
  const hit = cache.get(name);
  if (hit && existsSync(hit)) return hit;
  const dir = join(runDir(), name);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const { encoder, decoder, vocoder } = zipvoiceStandInOnnx();
  writeFileSync(join(dir, 'text_encoder.onnx'), encoder);
  writeFileSync(join(dir, 'fm_decoder.onnx'), decoder);
  writeFileSync(join(dir, 'vocos_24khz.onnx'), vocoder);
  writeFileSync(join(dir, 'tokens.txt'), standInTokens());
  // Words not in the lexicon are phonemized by eSpeak NG; the phonemizer needs the file all the same.
  writeFileSync(join(dir, 'lexicon.txt'), 'ok o k\n');
  symlinkSync(ensureEspeakData(join(runDir(), 'espeak-ng-data')), join(dir, 'espeak-ng-data'), 'dir');
  cache.set(name, dir);
  return dir;
}

/** This test run's scratch folder under the system temp dir (one per process). */
export function runDir(): string {
  const dir = join(tmpdir(), `voicegate-sherpa-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  return dir;
}

const cache = new Map<string, string>();

/** A stand-in model built once per test run and shared by every test in it. */
export function standInModel(name = 'stand-in', options: StandInOptions = {}): string {
  const key = `${name}:${JSON.stringify(options)}`;
  const hit = cache.get(key);
  if (hit && existsSync(hit)) return hit;
  const dir = writeStandInModel(join(runDir(), name), options);
  cache.set(key, dir);
  return dir;
}

/** Removes this run's scratch folder; call from a test file's `after`. */
export function removeRunDir(): void {
  rmSync(runDir(), { recursive: true, force: true });
  cache.clear();
}

export type BrokenKind = 'corrupt' | 'truncated-tokens' | 'no-metadata';

/**
 * A model folder broken the way real downloads break, each of which ends a process that loads it:
 * `corrupt` — the file's framing and metadata are intact but the graph is garbage (so only loading
 * finds it); `truncated-tokens` — `tokens.txt` cut off mid-line; `no-metadata` — a raw Piper export.
 */
export function brokenModel(kind: BrokenKind): string {
  const dir = standInModel(`broken-${kind}`, kind === 'no-metadata' ? { withoutMetadata: true } : {});
  if (kind === 'corrupt') {
    const garbage = Buffer.alloc(4096);
    for (let i = 0; i < garbage.length; i++) garbage[i] = (i * 2654435761) >>> 24;
    const rest = onnx.ModelProto.encode({ irVersion: 7, opsetImport: [{ domain: '', version: 13 }], metadataProps: onnx.ModelProto.decode(standInOnnx()).metadataProps }).finish();
    // Field 7 (graph), length-delimited: 0x3a, then the length as a varint.
    writeFileSync(join(dir, 'model.onnx'), Buffer.concat([Buffer.from([0x3a, 0x80, 0x20]), garbage, rest]));
  }
  if (kind === 'truncated-tokens') {
    const lines = standInTokens().split('\n');
    writeFileSync(join(dir, 'tokens.txt'), lines.slice(0, 40).join('\n') + '\nɐ');
  }
  return dir;
}

/**
 * A stand-in model packed as the official archives are (`<name>/` at the top, `tar -cjf`), for
 * installing with `models pull --from` or `pull` on start; built once per run.
 */
export function standInArchive(name = 'vits-piper-en_US-lessac-medium'): string {
  const archive = join(runDir(), `${name}.tar.bz2`);
  if (existsSync(archive)) return archive;
  const source = join(runDir(), `archive-${name}`);
  // As the official Piper archives without their espeak-ng-data: the engine then uses the data directory's copy.
  mkdirSync(join(source, name), { recursive: true });
  writeFileSync(join(source, name, 'en_US-lessac-medium.onnx'), standInOnnx());
  writeFileSync(join(source, name, 'tokens.txt'), standInTokens());
  execFileSync('tar', ['-cjf', archive, '-C', source, name]);
  rmSync(source, { recursive: true, force: true });
  return archive;
}

/** Kokoro v1.0's speakers in voices.bin order (sherpa-onnx `scripts/kokoro/v1.0/generate_voices_bin.py`). */
export const KOKORO_V1_SPEAKERS = [
  ...['alloy', 'aoede', 'bella', 'heart', 'jessica', 'kore', 'nicole', 'nova', 'river', 'sarah', 'sky'].map((n) => `af_${n}`),
  ...['adam', 'echo', 'eric', 'fenrir', 'liam', 'michael', 'onyx', 'puck', 'santa'].map((n) => `am_${n}`),
  ...['alice', 'emma', 'isabella', 'lily'].map((n) => `bf_${n}`),
  ...['daniel', 'fable', 'george', 'lewis'].map((n) => `bm_${n}`),
  'ef_dora',
  'em_alex',
  'ff_siwis',
  'hf_alpha',
  'hf_beta',
  'hm_omega',
  'hm_psi',
  'if_sara',
  'im_nicola',
  ...['alpha', 'gongitsune', 'nezumi', 'tebukuro'].map((n) => `jf_${n}`),
  'jm_kumo',
  'pf_dora',
  'pm_alex',
  'pm_santa',
  ...['xiaobei', 'xiaoni', 'xiaoxiao', 'xiaoyi'].map((n) => `zf_${n}`),
  ...['yunjian', 'yunxi', 'yunxia', 'yunyang'].map((n) => `zm_${n}`),
];

export const KOKORO_STAND_IN_RATE = 24000;
/** Kokoro's style table per speaker: a 256-value style vector for each token count up to 510. */
export const KOKORO_STYLE_DIM = [510, 1, 256] as const;
/** Samples per token at speed 1. */
const KOKORO_SAMPLES_PER_TOKEN = 600;

/**
 * The pitch (Hz) the Kokoro stand-in speaks a style vector in: 150 Hz + 1,000 Hz · its first value.
 * Speaker `i`'s first value is `0.1 + 0.01 · i` in every row, so speaker 0 speaks at 250 Hz, speaker
 * 1 at 260 Hz, … and a mix at the weighted mean.
 */
export const kokoroStandInPitch = (styleValue: number): number => 150 + 1000 * styleValue;
export const kokoroSpeakerStyle = (sid: number): number => 0.1 + 0.01 * sid;

/**
 * The graph of a stand-in Kokoro model, with Kokoro's inputs (`tokens` [1, T], `style` [1, 256],
 * `speed` [1]): a steady tone for 600 / speed samples per token, at the pitch of the style vector's
 * first value (`kokoroStandInPitch`), so what speaker or mix reached the model shows in the audio.
 */
export function kokoroStandInOnnx(speakers: readonly string[], options: { quantised?: boolean } = {}): Uint8Array {
  const INT = onnx.AttributeProto.AttributeType.INT;
  const axis0 = [{ name: 'axis', type: INT, i: 0 }];
  const ids = Object.fromEntries(speakers.map((s, i) => [s, i]));
  return encode(
    'stand-in-kokoro',
    {
      node: [
        node('Shape', ['tokens'], ['tokens_shape']),
        node('Gather', ['tokens_shape', 'index1'], ['count'], axis0),
        node('Cast', ['count'], ['countf'], [{ name: 'to', type: INT, i: FLOAT }]),
        node('Gather', ['speed', 'index0'], ['speed0'], axis0),
        node('Mul', ['countf', 'per_token'], ['unscaled']),
        node('Div', ['unscaled', 'speed0'], ['limit']),
        node('Range', ['zero', 'limit', 'delta'], ['t']),
        node('Gather', ['style', 'index0'], ['row'], axis0),
        node('Gather', ['row', 'index0'], ['value'], axis0),
        node('Mul', ['value', 'per_value'], ['lift']),
        node('Add', ['lift', 'base'], ['pitch']),
        node('Mul', ['pitch', 'inv_rate'], ['step']),
        node('Mul', ['t', 'step'], ['phase']),
        node('Sin', ['phase'], ['wave']),
        node('Mul', ['wave', 'gain'], ['audio']),
      ],
      input: [value('tokens', INT64, [1, 'T']), value('style', FLOAT, [1, KOKORO_STYLE_DIM[2]]), value('speed', FLOAT, [1])],
      output: [value('audio', FLOAT, ['S'])],
      initializer: [
        tensor('index0', [], [0], INT64),
        tensor('index1', [], [1], INT64),
        tensor('per_token', [], [KOKORO_SAMPLES_PER_TOKEN]),
        tensor('zero', [], [0]),
        tensor('delta', [], [1]),
        tensor('per_value', [], [1000]),
        tensor('base', [], [150]),
        tensor('inv_rate', [], [(2 * Math.PI) / KOKORO_STAND_IN_RATE]),
        tensor('gain', [], [options.quantised ? 0.25 : 0.3]),
      ],
    },
    // As sherpa-onnx's scripts/kokoro/v1.0/add_meta_data.py writes them.
    {
      model_type: 'kokoro',
      language: 'multi-lang, e.g., English, Chinese',
      has_espeak: '1',
      sample_rate: String(KOKORO_STAND_IN_RATE),
      version: '2',
      voice: 'en-us',
      style_dim: KOKORO_STYLE_DIM.join(','),
      n_speakers: String(speakers.length),
      id2speaker: speakers.map((s, i) => `${i}->${s}`).join(','),
      speaker2id: speakers.map((s) => `${s}->${ids[s]}`).join(','),
      speaker_names: speakers.join(','),
      maintainer: 'k2-fsa',
    },
  );
}

/** A voices file of `count` speakers, speaker `i`'s every value `kokoroSpeakerStyle(i)` (float32, little-endian). */
export function kokoroStandInVoices(count: number): Buffer {
  const per = KOKORO_STYLE_DIM[0] * KOKORO_STYLE_DIM[2];
  const values = new Float32Array(per * count);
  for (let sid = 0; sid < count; sid++) values.fill(kokoroSpeakerStyle(sid), sid * per, (sid + 1) * per);
  return Buffer.from(values.buffer);
}

/**
 * A stand-in `kokoro-multi-lang-v1_0` folder, laid out as the published archive is (see the
 * catalogue's `KOKORO_MULTI_LANG_FILES`): `model.onnx` (or `model.int8.onnx`), `voices.bin` with
 * 53 speakers, `tokens.txt`, the three lexicons, `dict/`, the three rule FSTs, `espeak-ng-data/`,
 * `LICENSE` and `README.md`. Built once per run.
 */
export function kokoroStandIn(name = 'kokoro-multi-lang-v1_0', options: { quantised?: boolean; speakers?: readonly string[] } = {}): string {
  const key = `kokoro:${name}:${options.quantised === true}`;
  const hit = cache.get(key);
  if (hit && existsSync(hit)) return hit;
  const speakers = options.speakers ?? KOKORO_V1_SPEAKERS;
  const dir = join(runDir(), name);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(join(dir, 'dict'), { recursive: true });
  writeFileSync(join(dir, options.quantised ? 'model.int8.onnx' : 'model.onnx'), kokoroStandInOnnx(speakers, options));
  writeFileSync(join(dir, 'voices.bin'), kokoroStandInVoices(speakers.length));
  writeFileSync(join(dir, 'tokens.txt'), standInTokens());
  // Kokoro's lexicons: a word, then its phonemes one by one.
  writeFileSync(join(dir, 'lexicon-us-en.txt'), 'hello h ə l ˈ o ʊ\nworld w ˈ ɜ ɹ l d\n');
  writeFileSync(join(dir, 'lexicon-gb-en.txt'), 'hello h ə l ˈ ə ʊ\nworld w ˈ ɜ ː l d\n');
  writeFileSync(join(dir, 'lexicon-zh.txt'), '你好 n i h a o\n');
  for (const file of ['jieba.dict.utf8', 'hmm_model.utf8', 'user.dict.utf8', 'idf.utf8', 'stop_words.utf8']) writeFileSync(join(dir, 'dict', file), '');
  for (const fst of ['date-zh.fst', 'number-zh.fst', 'phone-zh.fst']) writeFileSync(join(dir, fst), '');
  writeFileSync(join(dir, 'LICENSE'), 'Apache License 2.0 (stand-in)\n');
  writeFileSync(join(dir, 'README.md'), '# stand-in Kokoro v1.0\n');
  symlinkSync(ensureEspeakData(join(runDir(), 'espeak-ng-data')), join(dir, 'espeak-ng-data'), 'dir');
  cache.set(key, dir);
  return dir;
}
