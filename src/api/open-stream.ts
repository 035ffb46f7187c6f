/**
 * @module api/open-stream
 * The start of every streamed response (progressive /tts/bytes, SSE, OpenAI
 * streaming): run the pipeline until the first audio exists — so a failure
 * before it is an ordinary HTTP error, neither charged nor a broken stream —
 * then charge (streams are charged at their first audio) and hand back the
 * cost headers and the pieces, first one included.
 */
import type { Admission } from '../http/gate.js';
import { synthesizeAudio, type AudioPiece } from '../synthesis/pipeline.js';
import type { SynthesisRequest } from '../synthesis/request.js';

export interface OpenedStream {
  costHeaders: Record<string, string>;
  pieces: AsyncGenerator<AudioPiece>;
}

export async function openStream(synthesis: SynthesisRequest, admission: Admission, signal: AbortSignal): Promise<OpenedStream> {
  const source = synthesizeAudio(synthesis, signal);
  const first = await source.next();
  const costHeaders = await admission.charge();
  async function* pieces(): AsyncGenerator<AudioPiece> {
    try {
      if (!first.done) yield first.value;
      yield* source;
    } finally {
      await source.return(undefined);
    }
  }
  return { costHeaders, pieces: pieces() };
}
