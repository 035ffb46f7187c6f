/**
 * @module playground/page
 * The browser playground served at `/playground`: one static HTML page with
 * its script inline, kept in a module so `tsc` builds it with everything
 * else (no copy step, no bundler). The page exchanges a pasted API key (kept
 * only in its memory) for an access token, speaks over the WebSocket with
 * Web Audio as chunks arrive, highlights words from the timestamps, and
 * shows time to first audio, cost, balance and a WAV download.
 */

export const PLAYGROUND_HTML = String.raw`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Voicegate playground</title>
<style>
  body { font: 15px/1.5 system-ui, sans-serif; max-width: 760px; margin: 2rem auto; padding: 0 1rem; color: #1d2330; }
  h1 { font-size: 1.4rem; }
  fieldset { border: 1px solid #d5d9e0; border-radius: 8px; margin: 0 0 1rem; }
  label { display: inline-block; margin: 0.25rem 1rem 0.25rem 0; }
  textarea { width: 100%; min-height: 6rem; font: inherit; box-sizing: border-box; }
  button { font: inherit; padding: 0.35rem 1rem; }
  #words span { padding: 0 2px; border-radius: 3px; }
  #words span.spoken { background: #ffe28a; }
  #error { color: #b00020; white-space: pre-wrap; }
  .stats span { margin-right: 1.5rem; }
</style>
</head>
<body>
<h1>Voicegate playground</h1>
<fieldset>
  <legend>API key</legend>
  <label>Key <input id="key" type="password" size="50" autocomplete="off" placeholder="sk_…"></label>
  <button id="connect">Connect</button>
  <span id="auth-status">not connected</span>
</fieldset>
<fieldset>
  <legend>Voice and output</legend>
  <label>Model <select id="model"></select></label>
  <label>Voice <input id="voice" list="voices" value="sarah" size="14"></label>
  <datalist id="voices"></datalist>
  <label>Language <input id="language" list="languages" placeholder="the voice's" size="8"></label>
  <datalist id="languages"><option value="en"><option value="de"><option value="fr"><option value="es"><option value="it"><option value="pt"><option value="nl"><option value="pt-BR"><option value="es-MX"><option value="fr-CA"><option value="de-CH"></datalist>
  <label>Sample rate <select id="rate"><option>16000</option><option>22050</option><option selected>24000</option><option>44100</option><option>48000</option></select></label>
  <label>Speed <input id="speed" type="number" min="0.6" max="1.5" step="0.1" value="1"></label>
</fieldset>
<textarea id="text">Hello from Voicegate! Every word lights up as it is spoken.</textarea>
<p><button id="speak">Speak</button> <a id="download" download="voicegate.wav" hidden>Download WAV</a></p>
<p class="stats"><span>First audio: <b id="ttfa">–</b></span><span>Cost: <b id="cost">–</b></span><span>Balance: <b id="balance">–</b></span></p>
<p id="words"></p>
<p id="error" role="alert"></p>
<script>
(() => {
  const $ = (id) => document.getElementById(id);
  const state = { key: null, token: null, tokenExpires: 0, accounts: true };
  const vg = (window.voicegate = { scheduledSamples: 0, peak: 0, spokenWords: 0, chunks: 0, status: 'idle' });
  let audio = null;

  function showError(message) { $('error').textContent = message; vg.status = 'error'; }
  function authHeaders(credential) { return credential ? { authorization: 'Bearer ' + credential } : {}; }
  async function failure(response) {
    try { const body = await response.json(); return (body.error_code || response.status) + ': ' + (body.message || ''); }
    catch { return 'HTTP ' + response.status; }
  }

  async function token() {
    if (!state.accounts) return null;
    if (state.token && Date.now() < state.tokenExpires - 30000) return state.token;
    const response = await fetch('/access-token', {
      method: 'POST', headers: { 'content-type': 'application/json', ...authHeaders(state.key) },
      body: JSON.stringify({ grants: { tts: true }, expires_in: 600 }),
    });
    if (response.status === 404) { state.accounts = false; return null; }
    if (!response.ok) throw new Error(await failure(response));
    state.token = (await response.json()).token;
    state.tokenExpires = Date.now() + 600000;
    return state.token;
  }

  async function balance() {
    if (!state.accounts || !state.key) return null;
    const response = await fetch('/usage?limit=1', { headers: authHeaders(state.key) });
    if (!response.ok) return null;
    return (await response.json()).org.balance;
  }

  async function connect() {
    $('error').textContent = '';
    state.key = $('key').value.trim() || null;
    state.token = null;
    try {
      const t = await token();
      $('auth-status').textContent = state.accounts ? 'connected (access token)' : 'connected (server without accounts)';
      const models = await (await fetch('/models')).json();
      $('model').innerHTML = models.data.filter((m) => m.streaming).map((m) => '<option value="' + m.id + '">' + m.name + '</option>').join('');
      const voices = await fetch('/voices?limit=100', { headers: authHeaders(t) });
      if (voices.ok) $('voices').innerHTML = (await voices.json()).data.map((v) => '<option value="' + v.id + '">' + v.name + ' (' + v.language + ')</option>').join('');
      const b = await balance();
      if (b) $('balance').textContent = b.credits.toLocaleString() + ' credits ($' + b.usd + ')';
      vg.status = 'connected';
    } catch (err) { showError(String(err.message || err)); }
  }

  function wavBlob(pcm, rate) {
    const header = new DataView(new ArrayBuffer(44));
    const text = (offset, s) => { for (let i = 0; i < 4; i++) header.setUint8(offset + i, s.charCodeAt(i)); };
    text(0, 'RIFF'); header.setUint32(4, 36 + pcm.byteLength, true); text(8, 'WAVE'); text(12, 'fmt ');
    header.setUint32(16, 16, true); header.setUint16(20, 1, true); header.setUint16(22, 1, true);
    header.setUint32(24, rate, true); header.setUint32(28, rate * 2, true); header.setUint16(32, 2, true);
    header.setUint16(34, 16, true); text(36, 'data'); header.setUint32(40, pcm.byteLength, true);
    return new Blob([header, pcm], { type: 'audio/wav' });
  }

  async function speak() {
    $('error').textContent = ''; $('words').innerHTML = ''; $('ttfa').textContent = '…'; $('cost').textContent = '…';
    $('download').hidden = true;
    vg.status = 'speaking'; vg.scheduledSamples = 0; vg.peak = 0; vg.spokenWords = 0; vg.chunks = 0;
    const rate = Number($('rate').value);
    const before = await balance().catch(() => null);
    let credential;
    try { credential = await token(); } catch (err) { return showError(String(err.message || err)); }
    if (audio) audio.close();
    audio = new AudioContext({ sampleRate: rate });
    await audio.resume();
    const analyser = audio.createAnalyser();
    analyser.connect(audio.destination);
    vg.analyser = analyser;
    const pieces = [];
    const words = [];
    let playAt = 0, startedAt = null;
    const t0 = performance.now();
    const url = new URL('/tts/websocket', location.href);
    url.protocol = location.protocol === 'https:' ? 'wss:' : 'ws:';
    url.searchParams.set('cartesia_version', '2025-04-16');
    if (credential) url.searchParams.set('access_token', credential);
    const ws = new WebSocket(url);
    const contextId = 'pg-' + Math.random().toString(36).slice(2);
    ws.onopen = () => ws.send(JSON.stringify({
      model_id: $('model').value, transcript: $('text').value, context_id: contextId,
      voice: { mode: 'id', id: $('voice').value.trim() },
      output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: rate },
      generation_config: { speed: Number($('speed').value) }, add_timestamps: true,
      ...($('language').value.trim() ? { language: $('language').value.trim() } : {}),
    }));
    ws.onerror = () => showError('the WebSocket could not connect');
    ws.onmessage = async (message) => {
      const event = JSON.parse(message.data);
      if (event.type === 'chunk') {
        if (!vg.chunks++) $('ttfa').textContent = Math.round(performance.now() - t0) + ' ms';
        const bytes = Uint8Array.from(atob(event.data), (c) => c.charCodeAt(0));
        pieces.push(bytes);
        const int16 = new Int16Array(bytes.buffer, 0, bytes.byteLength >> 1);
        const buffer = audio.createBuffer(1, int16.length, rate);
        const channel = buffer.getChannelData(0);
        for (let i = 0; i < int16.length; i++) { channel[i] = int16[i] / 32768; vg.peak = Math.max(vg.peak, Math.abs(channel[i])); }
        const source = audio.createBufferSource();
        source.buffer = buffer;
        source.connect(analyser);
        playAt = Math.max(playAt, audio.currentTime + 0.05);
        if (startedAt === null) { startedAt = playAt; requestAnimationFrame(highlight); }
        source.start(playAt);
        playAt += buffer.duration;
        vg.scheduledSamples += int16.length;
      } else if (event.type === 'timestamps') {
        const t = event.word_timestamps;
        t.words.forEach((word, i) => {
          const span = document.createElement('span');
          span.textContent = word;
          $('words').append(span, ' ');
          words.push({ span, start: t.start[i] });
        });
      } else if (event.type === 'error') {
        showError(event.error_code + ': ' + (event.message || event.detail || ''));
        ws.close();
      } else if (event.type === 'done') {
        ws.close();
        const total = pieces.reduce((n, p) => n + p.byteLength, 0);
        const pcm = new Uint8Array(total);
        let offset = 0;
        for (const p of pieces) { pcm.set(p, offset); offset += p.byteLength; }
        $('download').href = URL.createObjectURL(wavBlob(pcm, rate));
        $('download').hidden = false;
        const after = await balance().catch(() => null);
        if (before && after) {
          const usd = Math.round((Number(before.usd) - Number(after.usd)) * 1e8) / 1e8;
          $('cost').textContent = (before.credits - after.credits).toLocaleString() + ' credits ($' + usd + ')';
          $('balance').textContent = after.credits.toLocaleString() + ' credits ($' + after.usd + ')';
        } else $('cost').textContent = 'not billed';
        vg.status = 'done';
      }
    };
    function highlight() {
      const elapsed = audio.currentTime - startedAt;
      let spoken = 0;
      for (const w of words) if (w.start <= elapsed) { w.span.classList.add('spoken'); spoken++; }
      vg.spokenWords = spoken;
      if (audio.state !== 'closed' && (vg.status === 'speaking' || audio.currentTime < playAt)) requestAnimationFrame(highlight);
    }
  }

  $('connect').onclick = connect;
  $('speak').onclick = () => speak().catch((err) => showError(String(err.message || err)));
  connect();
})();
</script>
</body>
</html>
`;
