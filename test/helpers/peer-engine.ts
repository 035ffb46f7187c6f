/**
 * @module test/helpers/peer-engine
 * Engines and models for a gateway that speaks every kind of work the
 * observability tests look at: eSpeak in workers, a tone engine for fast
 * jobs (`tone-jobs`), and a second Voicegate at `upstreamUrl` as a remote
 * engine (`peer-model`, its `gepard-1.0` over the Cartesia dialect).
 */
export function enginesWithPeer(upstreamUrl: string): { engines: never; models: Record<string, { extends: string; engine: string }> } {
  return {
    engines: {
      espeak: { type: 'espeak', workers: 1 },
      tone: { type: 'tone', sampleRate: 8000, secondsPerChar: 0.01, chunkSeconds: 0.5 },
      peer: { type: 'cartesia-upstream', upstreams: [{ url: upstreamUrl }], healthPath: '/readyz', format: 'pcm_s16le', model: 'gepard-1.0', sampleRate: 22050, voices: { sarah: 'sarah' } },
    } as never,
    models: { 'tone-jobs': { extends: 'omnivoice', engine: 'tone' }, 'peer-model': { extends: 'gepard-1.0', engine: 'peer' } },
  };
}
