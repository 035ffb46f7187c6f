/**
 * @module test/helpers/fake-upstream
 * A scriptable inference server for the remote-engine tests. It speaks both
 * dialects — OpenAI `/v1/audio/speech` (streamed s16 PCM or WAV) and
 * Cartesia `/tts/sse` / `/tts/bytes` — producing a tone whose length follows
 * the text and speed, and misbehaves on request: slow first byte, hang,
 * connection reset before or during the body, an error status, the wrong
 * content type, tiny chunks, or a 200 without any audio.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Behaviour = 'normal' | 'slow-first-byte' | 'hang' | 'reset' | 'reset-mid-body' | 'status-500' | 'json' | 'tiny-chunks' | 'empty';

export interface FakeUpstream {
  url: string;
  /** Requests received per path. */
  requests: { path: string; body: Record<string, any> }[];
  /** Generation requests whose connection closed before the response finished. */
  aborted: number;
  healthy: boolean;
  /** Behaviours for the next generation requests, in order; then `normal`. */
  script: Behaviour[];
  close(): Promise<void>;
}

const RATE = 24000;
const SECONDS_PER_CHAR = 0.05;

function tone(samples: number, encoding: string): Buffer {
  const width = encoding === 'pcm_f32le' ? 4 : 2;
  const out = Buffer.alloc(samples * width);
  for (let i = 0; i < samples; i++) {
    const v = 0.5 * Math.sin((2 * Math.PI * 220 * i) / RATE);
    if (width === 4) out.writeFloatLE(v, i * 4);
    else out.writeInt16LE(Math.round(v * 32767), i * 2);
  }
  return out;
}

function wavHeader(dataBytes: number): Buffer {
  const h = Buffer.alloc(44);
  h.write('RIFF', 0, 'latin1');
  h.writeUInt32LE(36 + dataBytes, 4);
  h.write('WAVEfmt ', 8, 'latin1');
  h.writeUInt32LE(16, 16);
  h.writeUInt16LE(1, 20);
  h.writeUInt16LE(1, 22);
  h.writeUInt32LE(RATE, 24);
  h.writeUInt32LE(RATE * 2, 28);
  h.writeUInt16LE(2, 32);
  h.writeUInt16LE(16, 34);
  h.write('data', 36, 'latin1');
  h.writeUInt32LE(dataBytes, 40);
  return h;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function writeSlowly(res: ServerResponse, data: Buffer, piece: number, gapMs = 2): Promise<boolean> {
  for (let offset = 0; offset < data.length; offset += piece) {
    if (res.destroyed) return false;
    res.write(data.subarray(offset, offset + piece));
    await (gapMs > 0 ? pause(gapMs) : new Promise((resolve) => setImmediate(resolve)));
  }
  return true;
}

export async function startFakeUpstream(): Promise<FakeUpstream> {
  const state = { requests: [] as FakeUpstream['requests'], aborted: 0, healthy: true, script: [] as Behaviour[] };

  async function generate(req: IncomingMessage, res: ServerResponse, path: string, body: Record<string, any>): Promise<void> {
    const behaviour = state.script.shift() ?? 'normal';
    res.on('close', () => {
      if (!res.writableFinished) state.aborted++;
    });
    const openai = path === '/v1/audio/speech';
    const text: string = openai ? body.input : body.transcript;
    const speed = Number(openai ? (body.speed ?? 1) : (body.generation_config?.speed ?? 1));
    const encoding = openai ? 'pcm_s16le' : body.output_format?.encoding;
    // 'empty': a 200 with no audio at all (a WAV is then its bare header).
    const samples = behaviour === 'empty' ? 0 : Math.round(([...text].length * SECONDS_PER_CHAR * RATE) / speed);
    const audio = tone(samples, encoding);
    switch (behaviour) {
      case 'hang':
        return;
      case 'reset':
        req.socket.destroy();
        return;
      case 'status-500':
        res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":"boom","detail":"secret-internal-host:9000"}');
        return;
      case 'json':
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"audio":"not here"}');
        return;
      case 'slow-first-byte':
        await pause(300);
        break;
    }
    if (path === '/tts/sse') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const step = RATE / 10;
      const width = encoding === 'pcm_f32le' ? 4 : 2;
      const words = text.split(/\s+/).filter(Boolean);
      for (let offset = 0, n = 0; offset < samples; offset += step, n++) {
        if (res.destroyed) return;
        const part = audio.subarray(offset * width, Math.min(samples, offset + step) * width);
        res.write(`data: ${JSON.stringify({ type: 'chunk', data: part.toString('base64'), done: false, status_code: 206, context_id: 'x' })}\n\n`);
        if (body.add_timestamps && words[n]) {
          const start = n * 0.1;
          res.write(`data: ${JSON.stringify({ type: 'timestamps', context_id: 'x', word_timestamps: { words: [words[n]], start: [start], end: [start + 0.1] } })}\n\n`);
        }
        if (behaviour === 'reset-mid-body' && n === 1) {
          req.socket.destroy();
          return;
        }
        await pause(1);
      }
      res.end(`data: ${JSON.stringify({ type: 'done', done: true, status_code: 200, context_id: 'x' })}\n\n`);
      return;
    }
    const wav = openai && body.response_format === 'wav';
    res.writeHead(200, { 'content-type': wav ? 'audio/wav' : openai ? 'audio/pcm' : 'application/octet-stream' });
    const data = wav ? Buffer.concat([wavHeader(audio.length), audio]) : audio;
    if (behaviour === 'reset-mid-body') {
      res.write(data.subarray(0, Math.min(data.length, 9600)));
      await pause(20);
      req.socket.destroy();
      return;
    }
    if (!(await writeSlowly(res, data, behaviour === 'tiny-chunks' ? 7 : 4800, behaviour === 'tiny-chunks' ? 0 : 2))) return;
    res.end();
  }

  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (req.method === 'GET' && path === '/health') {
      res.writeHead(state.healthy ? 200 : 503).end(state.healthy ? 'ok' : 'down');
      return;
    }
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      let body: Record<string, any> = {};
      try {
        body = JSON.parse(raw || '{}');
      } catch {
        res.writeHead(400).end();
        return;
      }
      state.requests.push({ path, body });
      if (path === '/v1/audio/speech' || path === '/tts/sse' || path === '/tts/bytes') void generate(req, res, path, body);
      else res.writeHead(404).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    get requests() {
      return state.requests;
    },
    get aborted() {
      return state.aborted;
    },
    get healthy() {
      return state.healthy;
    },
    set healthy(value: boolean) {
      state.healthy = value;
    },
    get script() {
      return state.script;
    },
    set script(value: Behaviour[]) {
      state.script = value;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
