// Voicegate operator console. Plain script, no framework, no inline code (the page's CSP allows
// only this file). The token lives in session storage and is sent as Authorization; a 401 from the
// API (a tampered, revoked or expired token) returns to sign-in.
'use strict';
(() => {
  const STORE = 'voicegate.console.token';
  const REFRESH_MS = 10000;
  const COLOURS = ['#2553c7', '#e0803a', '#1d7a3a', '#9b3fb5', '#c23b4b', '#2a9aa6', '#7a6b1d', '#555e6e'];
  const SCOPES = ['tts', 'voices:read', 'voices:write', 'dictionaries:read', 'dictionaries:write', 'jobs:read', 'usage:read'];
  const $ = (id) => document.getElementById(id);
  const state = { token: null, role: null, org: null, timer: null, streams: [], route: '' };
  // What the browser test reads: the current page, whether it has finished loading, and the address it loaded.
  const vg = (window.voicegate = { page: null, loaded: false, refreshes: 0, jobs: {} });

  class ApiFailure extends Error {
    constructor(status, code, message) { super(code ? `${status} ${code}: ${message}` : `${status}: ${message}`); this.status = status; this.code = code; }
  }

  /** An element: h('button', {type: 'button', onclick}, 'Text', child…). */
  function h(tag, attrs, ...children) {
    const el = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (name.startsWith('on')) el.addEventListener(name.slice(2), value);
      else if (name === 'text') el.textContent = value;
      else el.setAttribute(name, value === true ? '' : String(value));
    }
    for (const child of children.flat(Infinity)) if (child !== null && child !== undefined && child !== false) el.append(child instanceof Node ? child : String(child));
    return el;
  }
  const svg = (tag, attrs, ...children) => {
    const el = document.createElementNS('http://www.w3.org/2000/svg', tag);
    for (const [name, value] of Object.entries(attrs || {})) el.setAttribute(name, String(value));
    for (const child of children.flat(Infinity)) if (child) el.append(child instanceof Node ? child : String(child));
    return el;
  };
  const fmt = (n) => (typeof n === 'number' ? n.toLocaleString('en-US') : n ?? '–');
  const usd = (n) => (typeof n === 'number' ? '$' + n.toLocaleString('en-US', { maximumFractionDigits: 6 }) : '–');
  const when = (iso) => (iso ? new Date(iso).toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC') : '–');
  const errorBox = (err) => h('p', { class: 'error', role: 'alert' }, err instanceof Error ? err.message : String(err));
  const empty = (text) => h('p', { class: 'empty' }, text);

  // ---- the API -------------------------------------------------------------------------------
  async function failureOf(response) {
    let code = '', message = response.statusText || 'request failed';
    try {
      const body = await response.json();
      const e = body.error && typeof body.error === 'object' ? body.error : body;
      code = e.error_code || e.code || (typeof body.error === 'string' ? body.error : '') || '';
      message = e.message || e.detail?.message || message;
    } catch { /* not JSON */ }
    return new ApiFailure(response.status, code, message);
  }
  async function call(path, options = {}) {
    const headers = { authorization: 'Bearer ' + state.token, ...(options.headers || {}) };
    let body = options.body;
    if (body !== undefined && !(body instanceof FormData) && typeof body !== 'string') { body = JSON.stringify(body); headers['content-type'] = 'application/json'; }
    const response = await fetch(path, { method: options.method || 'GET', headers, body, signal: options.signal });
    if (response.status === 401 && !options.keep401) { signOut('The token was refused (401). Sign in again.', await failureOf(response)); throw new ApiFailure(401, 'signed_out', 'signed out'); }
    if (!response.ok) throw await failureOf(response);
    return response;
  }
  const json = async (path, options) => { const r = await call(path, options); return r.status === 204 ? null : r.json(); };
  const blob = async (path, options) => (await call(path, options)).blob();

  // ---- sign-in -------------------------------------------------------------------------------
  async function whoIs(token) {
    const headers = { authorization: 'Bearer ' + token };
    // An API key (sk_…) is only ever an organisation's, so it is tried as nothing else and a refusal
    // names the key's error. Anything else is tried as the admin token first, then as an
    // organisation's credential; a refusal then names the admin token's error.
    const order = /^sk_/.test(token) ? ['org'] : ['admin', 'org'];
    let first = null;
    for (const role of order) {
      const response = await fetch(role === 'admin' ? '/admin/orgs' : '/usage?limit=1', { headers });
      if (response.ok) return role === 'admin' ? { role } : { role, org: (await response.json()).org };
      const failure = await failureOf(response);
      first = first || failure;
      if (response.status !== 401 && response.status !== 403) throw failure;
    }
    throw first;
  }
  async function signIn(token) {
    const who = await whoIs(token);
    state.token = token; state.role = who.role; state.org = who.org || null;
    sessionStorage.setItem(STORE, token);
    $('who').textContent = who.role === 'admin' ? 'Admin: the whole service' : `Organisation ${who.org.name} (${who.org.id})`;
    $('sign-in-view').hidden = true; $('app').hidden = false; $('sign-out').hidden = false;
    if (!location.hash || location.hash === '#/' || location.hash === '#') location.hash = '#/overview';
    else route();
  }
  function signOut(message, failure) {
    state.token = null; state.role = null; state.org = null;
    sessionStorage.removeItem(STORE);
    stopLive();
    $('main').replaceChildren();
    $('app').hidden = true; $('sign-out').hidden = true; $('who').textContent = '';
    $('sign-in-view').hidden = false;
    $('token').value = '';
    $('sign-in-error').textContent = message ? message + (failure ? ` (${failure.message})` : '') : '';
    vg.page = 'sign-in'; vg.loaded = true;
    $('token').focus();
  }
  $('sign-in').addEventListener('submit', async (event) => {
    event.preventDefault();
    const token = $('token').value.trim();
    $('sign-in-error').textContent = '';
    try { await signIn(token); } catch (err) { $('sign-in-error').textContent = err.message; }
  });
  $('sign-out').addEventListener('click', () => { signOut(''); location.hash = ''; });

  // ---- routing -------------------------------------------------------------------------------
  const PAGES = { overview, orgs, keys, usage, voices, dictionaries, jobs, engines, cache };
  function stopLive() {
    clearInterval(state.timer); state.timer = null;
    for (const c of state.streams) c.abort();
    state.streams = [];
  }
  /** Runs `refresh` every 10 s while the page is shown, unless the person is typing in it. */
  function live(refresh) {
    state.timer = setInterval(async () => {
      if ($('main').contains(document.activeElement) && /INPUT|SELECT|TEXTAREA/.test(document.activeElement.tagName)) return;
      try { await refresh(); vg.refreshes++; } catch { /* shown by the refresh itself */ }
    }, REFRESH_MS);
  }
  async function route() {
    if (!state.token) return;
    stopLive();
    const [name, ...rest] = location.hash.replace(/^#\/?/, '').split('/');
    const page = PAGES[name] ? name : 'overview';
    for (const a of document.querySelectorAll('nav a')) {
      if (a.getAttribute('href') === '#/' + page) a.setAttribute('aria-current', 'page');
      else a.removeAttribute('aria-current');
    }
    const main = $('main');
    main.replaceChildren(h('p', { class: 'muted', role: 'status' }, 'Loading…'));
    main.setAttribute('aria-busy', 'true');
    vg.page = page; vg.loaded = false; vg.hash = null;
    const routeAt = location.hash; state.route = routeAt;
    try {
      const content = await PAGES[page](rest.map(decodeURIComponent));
      if (state.route !== routeAt) return;
      main.replaceChildren(...[content].flat());
    } catch (err) {
      if (err.code === 'signed_out') return;
      main.replaceChildren(h('h1', {}, page[0].toUpperCase() + page.slice(1)), errorBox(err));
    }
    main.setAttribute('aria-busy', 'false');
    vg.loaded = true; vg.hash = routeAt;
    const heading = main.querySelector('h1');
    if (heading && document.activeElement === document.body) main.focus({ preventScroll: true });
  }
  window.addEventListener('hashchange', route);

  /**
   * With the admin token, a page of one organisation's things starts by choosing it: the
   * organisation named in the address (`#/<page>/<org id>`) or the first. Null when there is none.
   */
  async function pickOrg(page, orgId) {
    const { data: all } = await json('/admin/orgs');
    if (!all.length) return null;
    const chosen = all.find((o) => o.id === orgId) || all[0];
    const picker = h('select', { id: `${page}-org`, 'aria-label': 'Organisation', onchange: () => { location.hash = `#/${page}/${encodeURIComponent(picker.value)}`; } },
      all.map((o) => h('option', { value: o.id, selected: o.id === chosen.id }, `${o.name} (${o.id})`)));
    return { org: chosen, picker: h('div', { class: 'toolbar' }, h('label', { for: `${page}-org` }, 'Organisation'), picker) };
  }
  const noOrgs = (title) => [h('h1', {}, title), empty('No organisations yet: create one under Organisations first.')];
  const adminBase = (org) => `/admin/orgs/${encodeURIComponent(org.id)}`;

  // ---- charts (SVG drawn here: stacked bars by day) -----------------------------------------
  /**
   * A stacked bar chart. `name` is its accessible name ("Usage …", "Requests …"); `buckets` the
   * x labels; `series` [{label, values}] stacked in order.
   */
  function chart(name, buckets, series, unit, W = 480) {
    const H = Math.round(W * 0.42), L = 48, B = 24, T = 8;
    const totals = buckets.map((_, i) => series.reduce((s, x) => s + (x.values[i] || 0), 0));
    const max = Math.max(1, ...totals);
    const step = (W - L - 4) / Math.max(1, buckets.length);
    const bars = [];
    buckets.forEach((label, i) => {
      let y = H - B;
      series.forEach((s, k) => {
        const v = s.values[i] || 0;
        if (!v) return;
        const height = ((H - B - T) * v) / max;
        y -= height;
        bars.push(svg('rect', { x: L + i * step + step * 0.12, y, width: Math.max(1, step * 0.76), height, fill: COLOURS[k % COLOURS.length] }, svg('title', {}, `${label} ${s.label}: ${fmt(v)} ${unit}`)));
      });
    });
    const ticks = (max >= 2 ? [0, 0.5, 1] : [0, 1]).map((f) => {
      const y = H - B - (H - B - T) * f;
      return [svg('line', { x1: L, x2: W, y1: y, y2: y, stroke: '#e3e6ec' }), svg('text', { x: L - 6, y: y + 4, 'text-anchor': 'end', 'font-size': 11, fill: '#5b6474' }, fmt(Math.round(max * f)))];
    });
    const every = Math.ceil(buckets.length / 8);
    const labels = buckets.map((label, i) => (i % every ? null : svg('text', { x: L + i * step + step / 2, y: H - 6, 'text-anchor': 'middle', 'font-size': 11, fill: '#5b6474' }, label)));
    const total = totals.reduce((a, b) => a + b, 0);
    const label = `${name}: ${fmt(total)} ${unit} in all` + (series.length > 1 || series[0]?.label ? `; ${series.map((s) => `${s.label} ${fmt(s.values.reduce((a, b) => a + (b || 0), 0))}`).join(', ')}` : '');
    return h('figure', { class: 'chart' },
      h('h3', { 'aria-hidden': 'true' }, name),
      h('div', { role: 'img', 'aria-label': label }, svg('svg', { viewBox: `0 0 ${W} ${H}`, 'aria-hidden': 'true', focusable: 'false' }, ticks, bars, labels)),
      series.length > 1 || series[0]?.label ? h('ul', { class: 'legend' }, series.map((s, k) => h('li', {}, h('i', { class: 'sw', 'data-colour': k }), s.label))) : null,
      total === 0 ? h('p', { class: 'empty' }, 'Nothing in this range yet.') : null);
  }
  // The legend's swatches take their colour from a style property, not an inline style attribute (CSP).
  function paintLegends(root) { for (const i of root.querySelectorAll('i.sw')) i.style.background = COLOURS[Number(i.dataset.colour) % COLOURS.length]; return root; }

  // ---- usage data ----------------------------------------------------------------------------
  function rangeOf(days) { const to = new Date(); return { from: new Date(to.getTime() - days * 86400000).toISOString(), to: to.toISOString() }; }
  async function summary(params) {
    const q = new URLSearchParams(params);
    return json((state.role === 'admin' ? '/admin/usage/summary?' : '/usage/summary?') + q);
  }
  /** Buckets (days or hours) from `from` to `to`, as the summary names them. */
  function buckets(from, to, unit) {
    const out = []; const step = unit === 'hour' ? 3600000 : 86400000;
    let t = Date.parse(from); t -= t % step;
    for (; t < Date.parse(to); t += step) out.push(new Date(t).toISOString().slice(0, unit === 'hour' ? 13 : 10));
    return out;
  }
  const bucketOf = (value, unit) => String(value).slice(0, unit === 'hour' ? 13 : 10);
  function split(rows, xs, unit, group, metric) {
    const names = [...new Set(rows.map((r) => (group ? String(r[group] ?? 'none') : '')))].sort();
    return names.map((label) => ({ label, values: xs.map((x) => rows.filter((r) => bucketOf(r[unit], unit) === x && (group ? String(r[group] ?? 'none') : '') === label).reduce((s, r) => s + (r[metric] || 0), 0)) }));
  }

  // ---- Overview ------------------------------------------------------------------------------
  async function overview() {
    const root = h('div', {});
    let days = 7;
    const periods = [['24 h', 1], ['7 d', 7], ['30 d', 30]];
    const toolbar = h('div', { class: 'toolbar', role: 'group', 'aria-label': 'Period' });
    const body = h('div', {});
    const notice = h('div', { id: 'store-notice' });
    async function draw() {
      await drawStore(notice);
      const unit = days === 1 ? 'hour' : 'day';
      const range = rangeOf(days);
      const [data, balance, ttfa] = await Promise.all([
        summary({ ...range, group_by: unit }),
        balanceNow(),
        state.role === 'admin' ? firstAudio().catch(() => null) : null,
      ]);
      const rows = data.data;
      const sum = (m) => rows.reduce((s, r) => s + (r[m] || 0), 0);
      const xs = buckets(range.from, range.to, unit);
      const label = periods.find((p) => p[1] === days)[0];
      const charts = [['Requests', 'requests', 'requests'], ['Characters', 'characters', 'characters'], ['Credits', 'credits', 'credits'], ['Errors', 'failed_requests', 'failed requests']].map(([title, metric, unitName]) =>
        chart(`${title}, last ${label}`, xs.map((x) => (unit === 'hour' ? x.slice(11) + 'h' : x.slice(5))), split(rows, xs, unit, null, metric), unitName));
      body.replaceChildren(
        h('div', { class: 'stats' },
          stat('Requests', fmt(sum('requests'))), stat('Characters', fmt(sum('characters'))), stat('Credits', fmt(sum('credits'))),
          stat('Errors', fmt(sum('failed_requests'))), stat(balance.label, balance.value, 'balance'),
          ttfa ? stat('First audio p50 / p99', ttfa) : null),
        h('div', { class: 'charts' }, charts));
      paintLegends(body);
    }
    for (const [label, d] of periods) {
      const b = h('button', { type: 'button', class: 'quiet', 'aria-pressed': String(d === days), onclick: async () => { days = d; for (const x of toolbar.children) x.setAttribute('aria-pressed', String(x === b)); await draw().catch((e) => body.replaceChildren(errorBox(e))); } }, label);
      toolbar.append(b);
    }
    // While the store is away the usage and balances cannot be read: the notice still says why.
    await draw().catch((e) => { if (e.code === 'signed_out') throw e; body.replaceChildren(errorBox(e)); });
    live(draw);
    root.append(h('h1', {}, 'Overview'), notice, toolbar, body);
    return root;
  }
  /** A notice while the store (PostgreSQL) does not answer, as /readyz reports it; nothing while it does. */
  async function drawStore(notice) {
    const ready = await fetch('/readyz').then((r) => r.json()).catch(() => null);
    const store = ready && ready.store;
    vg.store = store || null;
    if (store !== 'degraded' && store !== 'unavailable') { notice.replaceChildren(); return; }
    const text = store === 'degraded'
      ? 'The database does not answer. Keys this gateway knows are served on the credit it holds for their organisation; charges are kept in its journal and written when the database is back. New keys, admin changes, voice clones and job submissions are refused (503 store_unavailable) until then.'
      : 'The database has not answered for longer than accounts.outageMaxSeconds. Requests are refused (503 store_unavailable) until it is back; journaled charges are written then.';
    notice.replaceChildren(h('div', { class: 'notice ' + store, role: 'alert' },
      h('b', {}, store === 'degraded' ? 'Database unavailable: serving on held credit' : 'Database unavailable: requests refused'), h('p', {}, text)));
  }
  function stat(label, value, id) { return h('div', { class: 'stat' }, h('b', { id: id ? 'stat-' + id : null }, value), h('span', {}, label)); }
  async function balanceNow() {
    if (state.role === 'admin') {
      const { data } = await json('/admin/orgs');
      return { label: `Balance of ${data.length} organisation${data.length === 1 ? '' : 's'}`, value: fmt(data.reduce((s, o) => s + o.balance.credits, 0)) + ' credits' };
    }
    const { org } = await json('/usage?limit=1');
    return { label: 'Balance', value: `${fmt(org.balance.credits)} credits (${usd(org.balance.usd)})` };
  }
  // ---- Prometheus text, read in the page (the admin token's /metrics) -------------------------
  async function metrics() {
    const text = await (await call('/metrics')).text();
    const out = [];
    for (const line of text.split('\n')) {
      const m = /^([a-z_:]+)(?:\{(.*)\})?\s+(\S+)$/.exec(line);
      if (!m) continue;
      const labels = {};
      for (const [, k, v] of (m[2] || '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[k] = v;
      out.push({ name: m[1], labels, value: Number(m[3]) });
    }
    return out;
  }
  async function firstAudio() {
    const buckets = (await metrics()).filter((s) => s.name === 'voicegate_time_to_first_audio_seconds_bucket');
    const byLe = new Map();
    for (const s of buckets) byLe.set(s.labels.le, (byLe.get(s.labels.le) || 0) + s.value);
    const les = [...byLe.keys()].sort((a, b) => (a === '+Inf' ? 1 : b === '+Inf' ? -1 : Number(a) - Number(b)));
    const count = byLe.get('+Inf') || 0;
    if (!count) return 'no requests yet';
    const q = (p) => { const le = les.find((l) => byLe.get(l) >= p * count); return le === '+Inf' ? 'over ' + les[les.length - 2] + ' s' : '≤ ' + Math.round(Number(le) * 1000) + ' ms'; };
    return `${q(0.5)} / ${q(0.99)}`;
  }

  // ---- Organisations -------------------------------------------------------------------------
  async function orgs([id]) {
    if (id) return orgPage(id);
    if (state.role !== 'admin') return orgPage(state.org.id);
    const { data } = await json('/admin/orgs');
    const search = h('input', { type: 'search', id: 'org-search', 'aria-label': 'Search organisations', placeholder: 'Search by name or id' });
    const tbody = h('tbody', {});
    const fill = () => {
      const q = search.value.trim().toLowerCase();
      const shown = data.filter((o) => !q || o.name.toLowerCase().includes(q) || o.id.toLowerCase().includes(q));
      tbody.replaceChildren(...(shown.length ? shown.map((o) => h('tr', {},
        h('td', {}, h('a', { href: `#/orgs/${encodeURIComponent(o.id)}` }, o.name)), h('td', {}, h('code', {}, o.id)),
        h('td', { class: 'num' }, fmt(o.balance.credits)), h('td', { class: 'num' }, usd(o.balance.usd)), h('td', {}, limitsText(o.limits)))) :
        [h('tr', {}, h('td', { colspan: 5, class: 'empty' }, data.length ? 'No organisation matches.' : 'No organisations yet: create one below.'))]));
    };
    search.addEventListener('input', fill);
    fill();
    const error = h('p', { class: 'error', role: 'alert' });
    const form = h('form', { class: 'row card', 'aria-label': 'Create organisation' },
      h('label', {}, 'Name', h('input', { name: 'name', required: true })),
      h('label', {}, 'Credits', h('input', { name: 'credits', type: 'number', min: 0, step: 1, value: 0 })),
      h('button', { type: 'submit' }, 'Create organisation'));
    form.addEventListener('submit', async (event) => {
      event.preventDefault(); error.textContent = '';
      try {
        const org = await json('/admin/orgs', { method: 'POST', body: { name: form.name.value, credits: Number(form.credits.value || 0) } });
        location.hash = `#/orgs/${encodeURIComponent(org.id)}`;
      } catch (err) { error.textContent = err.message; }
    });
    return [h('h1', {}, 'Organisations'), h('div', { class: 'toolbar' }, search),
      h('div', { class: 'table-wrap' }, h('table', {}, h('caption', { class: 'muted' }, `${data.length} organisation${data.length === 1 ? '' : 's'}`),
        h('thead', {}, h('tr', {}, h('th', {}, 'Name'), h('th', {}, 'Id'), h('th', { class: 'num' }, 'Balance (credits)'), h('th', { class: 'num' }, 'USD'), h('th', {}, 'Limits'))), tbody)),
      h('h2', {}, 'Create an organisation'), form, error];
  }
  const limitsText = (l) => `${l.max_concurrent === null ? 'no concurrency limit' : l.max_concurrent + ' at once'}; ${l.rate_limit ? `${l.rate_limit.requests} per ${l.rate_limit.per_seconds} s` : 'no rate limit'}`;
  async function getOrg(id) {
    if (state.role === 'admin') return json(`/admin/orgs/${encodeURIComponent(id)}`);
    // An organisation's key sees its own organisation only; any other is not found, as in the API.
    if (id !== state.org.id) throw new ApiFailure(404, 'org_not_found', `organisation ${id} does not exist`);
    return (await json('/usage?limit=1')).org;
  }
  async function orgPage(id) {
    const org = await getOrg(id);
    const balance = h('b', { id: 'org-balance' }, fmt(org.balance.credits) + ' credits');
    const balanceUsd = h('span', {}, usd(org.balance.usd));
    const limitsText_ = h('b', { id: 'org-limits' }, limitsText(org.limits));
    const parts = [h('h1', {}, org.name), h('p', {}, h('code', {}, org.id), ' · created ', when(org.created_at)),
      h('div', { class: 'stats' }, h('div', { class: 'stat' }, balance, h('span', {}, 'Balance · ', balanceUsd)), h('div', { class: 'stat' }, limitsText_, h('span', {}, 'Limits'))),
      h('p', {}, h('a', { href: `#/keys/${encodeURIComponent(org.id)}` }, 'Keys of this organisation'), ' · ', h('a', { href: `#/usage/${encodeURIComponent(org.id)}` }, 'Usage of this organisation'))];
    const show = (o) => { balance.textContent = fmt(o.balance.credits) + ' credits'; balanceUsd.textContent = usd(o.balance.usd); limitsText_.textContent = limitsText(o.limits); };
    if (state.role === 'admin') {
      const status = h('p', { role: 'status' });
      const form = h('form', { class: 'row card', 'aria-label': 'Add credits' },
        h('label', {}, 'Amount', h('input', { name: 'amount', type: 'number', step: 1, required: true })),
        h('label', {}, 'Reason', h('input', { name: 'reason', required: true })),
        h('button', { type: 'submit' }, 'Add credits'));
      form.addEventListener('submit', async (event) => {
        event.preventDefault(); status.className = ''; status.textContent = 'Adding…';
        try {
          const answer = await json(`/admin/orgs/${encodeURIComponent(id)}/credits`, { method: 'POST', body: { amount: Number(form.amount.value), reason: form.reason.value } });
          show(answer.org); status.className = 'ok'; status.textContent = `Added ${fmt(answer.entry.credits)} credits.`; form.reset();
        } catch (err) { status.className = 'error'; status.textContent = err.message; }
      });
      parts.push(h('h2', {}, 'Add credits'), form, status);
      const l = org.limits;
      const limitsStatus = h('p', { role: 'status' });
      const limits = h('form', { class: 'row card', 'aria-label': 'Limits' },
        h('label', {}, 'Requests at once (empty: no limit)', h('input', { name: 'max', type: 'number', min: 1, step: 1, value: l.max_concurrent ?? '' })),
        h('label', {}, 'Rate: requests (empty: no limit)', h('input', { name: 'requests', type: 'number', min: 1, step: 1, value: l.rate_limit?.requests ?? '' })),
        h('label', {}, 'per seconds', h('input', { name: 'per', type: 'number', min: 1, step: 1, value: l.rate_limit?.per_seconds ?? 60 })),
        h('button', { type: 'submit' }, 'Save limits'));
      limits.addEventListener('submit', async (event) => {
        event.preventDefault();
        const body = { max_concurrent: limits.max.value ? Number(limits.max.value) : null, rate_limit: limits.requests.value ? { requests: Number(limits.requests.value), per_seconds: Number(limits.per.value || 60) } : null };
        try {
          const o = await json(`/admin/orgs/${encodeURIComponent(id)}`, { method: 'PATCH', body: { limits: body } });
          limitsText_.textContent = limitsText(o.limits); limitsStatus.className = 'ok'; limitsStatus.textContent = 'Limits saved.';
        } catch (err) { limitsStatus.className = 'error'; limitsStatus.textContent = err.message; }
      });
      parts.push(h('h2', {}, 'Limits'), limits, limitsStatus);
    }
    live(async () => show(await getOrg(id)));
    return parts;
  }

  // ---- Keys ----------------------------------------------------------------------------------
  async function keys([orgId]) {
    if (state.role !== 'admin') return [h('h1', {}, 'Keys'), empty('Keys are issued and revoked with the admin token.')];
    const picked = await pickOrg('keys', orgId);
    if (!picked) return noOrgs('Keys');
    const { org: chosen, picker } = picked;
    const list = h('div', {});
    const status = h('div', { role: 'status' });
    async function fill() {
      const { data } = await json(`/admin/orgs/${encodeURIComponent(chosen.id)}/keys`);
      list.replaceChildren(h('div', { class: 'table-wrap' }, h('table', {},
        h('thead', {}, h('tr', {}, ['Name', 'Status', 'Budget', 'Scopes', 'Expires', 'Last used', ''].map((t) => h('th', {}, t)))),
        h('tbody', {}, data.length ? data.map((k) => h('tr', {},
          h('td', {}, k.name || h('span', { class: 'muted' }, '(no name)'), h('br', {}), h('code', { class: 'muted' }, k.id)),
          h('td', {}, h('span', { class: 'badge ' + (k.status === 'active' ? 'good' : 'bad') }, k.status)),
          h('td', {}, k.budget ? `${fmt(k.budget.spent)} of ${fmt(k.budget.credits)} (${k.budget.period})` : 'none'),
          h('td', {}, k.scopes ? k.scopes.join(', ') : 'all'),
          h('td', {}, when(k.expires_at)), h('td', {}, when(k.last_used_at)),
          h('td', {}, k.status === 'revoked' ? '' : h('button', { type: 'button', class: 'danger', 'aria-label': `Revoke ${k.name || k.id}`, onclick: async () => {
            try { await json(`/admin/keys/${encodeURIComponent(k.id)}`, { method: 'DELETE' }); status.replaceChildren(h('p', { class: 'ok' }, `Revoked ${k.name || k.id}.`)); await fill(); }
            catch (err) { status.replaceChildren(errorBox(err)); }
          } }, 'Revoke')))) :
          [h('tr', {}, h('td', { colspan: 7, class: 'empty' }, 'No keys yet: issue one below.'))]))));
    }
    await fill();
    const form = h('form', { class: 'card', 'aria-label': 'Issue key' },
      h('div', { class: 'row' },
        h('label', { class: 'field' }, 'Name', h('input', { name: 'name' })),
        h('label', { class: 'field' }, 'Budget (credits)', h('input', { name: 'budget', type: 'number', min: 1, step: 1 })),
        h('label', { class: 'field' }, 'Budget period', h('select', { name: 'period', 'aria-label': 'Budget period' }, ['day', 'month', 'total'].map((p) => h('option', { value: p }, p)))),
        h('label', { class: 'field' }, 'Expires', h('input', { name: 'expires', type: 'date' }))),
      h('fieldset', { class: 'scopes' }, h('legend', {}, 'Scopes (none ticked: every scope)'), SCOPES.map((s) => h('label', {}, h('input', { type: 'checkbox', name: 'scope', value: s }), ' ', s))),
      h('p', {}, h('button', { type: 'submit' }, 'Issue key')));
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      const body = {};
      if (form.name.value) body.name = form.name.value;
      if (form.budget.value) body.budget = { credits: Number(form.budget.value), period: form.period.value };
      if (form.expires.value) body.expires_at = new Date(form.expires.value + 'T00:00:00Z').toISOString();
      const scopes = [...form.querySelectorAll('input[name=scope]:checked')].map((i) => i.value);
      if (scopes.length) body.scopes = scopes;
      try {
        const issued = await json(`/admin/orgs/${encodeURIComponent(chosen.id)}/keys`, { method: 'POST', body });
        const copied = h('span', { role: 'status' });
        status.replaceChildren(h('div', { class: 'secret', id: 'issued-key' },
          h('span', {}, 'New key, shown once — copy it now:'), h('code', { id: 'issued-key-value' }, issued.key),
          h('button', { type: 'button', class: 'quiet', onclick: async () => { try { await navigator.clipboard.writeText(issued.key); copied.textContent = 'Copied.'; } catch { copied.textContent = 'Select the key and copy it.'; } } }, 'Copy key'), copied));
        form.reset();
        await fill();
      } catch (err) { status.replaceChildren(errorBox(err)); }
    });
    return [h('h1', {}, 'Keys'), picker, status, list, h('h2', {}, 'Issue a key'), form];
  }

  // ---- Usage ---------------------------------------------------------------------------------
  async function usage([orgId]) {
    const to = new Date(); const from = new Date(to.getTime() - 29 * 86400000);
    const form = h('form', { class: 'row card', 'aria-label': 'Usage range' },
      h('label', {}, 'From', h('input', { name: 'from', type: 'date', value: from.toISOString().slice(0, 10) })),
      h('label', {}, 'To (inclusive)', h('input', { name: 'to', type: 'date', value: to.toISOString().slice(0, 10) })),
      h('label', {}, 'Split by', h('select', { name: 'split', 'aria-label': 'Split by' }, [['model', 'Model'], ['endpoint', 'Endpoint'], ['key_id', 'Key']].map(([v, t]) => h('option', { value: v }, t)))),
      h('label', {}, 'Measure', h('select', { name: 'metric', 'aria-label': 'Measure' }, [['characters', 'Characters'], ['credits', 'Credits'], ['requests', 'Requests']].map(([v, t]) => h('option', { value: v }, t)))));
    if (state.role === 'admin') {
      const { data: all } = await json('/admin/orgs');
      form.prepend(h('label', {}, 'Organisation', h('select', { name: 'org', 'aria-label': 'Organisation' }, h('option', { value: '' }, 'All organisations'), all.map((o) => h('option', { value: o.id, selected: o.id === orgId }, o.name)))));
    }
    const out = h('div', {});
    const status = h('p', { role: 'status' });
    const params = () => {
      const f = form.from.value, t = form.to.value;
      const p = { from: f + 'T00:00:00Z', to: new Date(Date.parse(t + 'T00:00:00Z') + 86400000).toISOString() };
      if (form.org && form.org.value) p.org = form.org.value;
      return p;
    };
    async function draw() {
      const p = params();
      const group = form.split.value === 'key_id' ? 'key' : form.split.value;
      const data = await summary({ ...p, group_by: `day,${group}` });
      const rows = data.data;
      const field = group === 'key' ? (rows[0] && 'key_id' in rows[0] ? 'key_id' : 'key') : group;
      const xs = buckets(data.from, data.to, 'day');
      const metric = form.metric.value;
      const splitName = form.split.selectedOptions[0].textContent.toLowerCase();
      out.replaceChildren(
        chart(`Usage by day, ${metric}, split by ${splitName}`, xs.map((x) => x.slice(5)), split(rows, xs, 'day', field, metric), metric, 760),
        rows.length ? h('div', { class: 'table-wrap' }, h('table', { id: 'usage-table' },
          h('caption', { class: 'muted' }, `Usage from ${data.from.slice(0, 10)} to ${data.to.slice(0, 10)} (UTC)`),
          h('thead', {}, h('tr', {}, h('th', {}, 'Day'), h('th', {}, splitName[0].toUpperCase() + splitName.slice(1)), ['Requests', 'Failed', 'Characters', 'Credits', 'USD'].map((t) => h('th', { class: 'num' }, t)))),
          h('tbody', {}, rows.map((r) => h('tr', {}, h('td', {}, bucketOf(r.day, 'day')), h('td', {}, String(r[field] ?? 'none')),
            h('td', { class: 'num' }, fmt(r.requests)), h('td', { class: 'num' }, fmt(r.failed_requests)), h('td', { class: 'num' }, fmt(r.characters)),
            h('td', { class: 'num' }, fmt(r.credits)), h('td', { class: 'num' }, usd(r.usd))))))) : empty('No usage in this range.'));
      paintLegends(out);
    }
    form.addEventListener('change', () => draw().catch((e) => out.replaceChildren(errorBox(e))));
    const download = h('button', { type: 'button', onclick: async () => {
      status.className = ''; status.textContent = 'Preparing…';
      try {
        const p = params();
        const file = state.role === 'admin'
          ? await blob('/admin/usage/export?' + new URLSearchParams({ ...p, format: 'csv' }))
          : await summaryCsv(p);
        const a = h('a', { href: URL.createObjectURL(file), download: `voicegate-usage-${p.from.slice(0, 10)}-${form.to.value}.csv` });
        document.body.append(a); a.click(); a.remove();
        status.className = 'ok'; status.textContent = 'Downloaded.';
      } catch (err) { status.className = 'error'; status.textContent = err.message; }
    } }, 'Download CSV');
    await draw();
    live(draw);
    return [h('h1', {}, 'Usage'), form, out, h('p', { class: 'toolbar' }, download, status)];
  }
  /** An organisation's key reads the summary only (the ledger export is the operator's): its rows as CSV. */
  async function summaryCsv(p) {
    const data = await summary({ ...p, group_by: 'day,model,endpoint' });
    const cols = ['day', 'model', 'endpoint', 'requests', 'failed_requests', 'characters', 'credits', 'usd'];
    const cell = (v) => (/[",\r\n]/.test(String(v ?? '')) ? `"${String(v).replace(/"/g, '""')}"` : String(v ?? ''));
    return new Blob([[cols.join(','), ...data.data.map((r) => cols.map((c) => cell(r[c])).join(','))].join('\r\n') + '\r\n'], { type: 'text/csv' });
  }

  // ---- Voices --------------------------------------------------------------------------------
  async function models() { return (await json('/models')).data ?? (await json('/models')); }
  async function speak(body, player, status) {
    status.className = ''; status.textContent = 'Speaking…';
    try {
      const audio = await blob('/tts/bytes', { method: 'POST', body: { output_format: { container: 'wav', encoding: 'pcm_s16le', sample_rate: 24000 }, ...body } });
      if (player.src) URL.revokeObjectURL(player.src);
      player.src = URL.createObjectURL(audio); player.hidden = false;
      await player.play().catch(() => {});
      status.className = 'ok'; status.textContent = `Playing ${Math.round(audio.size / 1024)} KiB of audio.`;
    } catch (err) { status.className = 'error'; status.textContent = err.message; }
  }
  async function modelPicker(id) {
    const list = await models().catch(() => []);
    const ids = (Array.isArray(list) ? list : []).map((m) => m.id || m.model_id).filter(Boolean);
    return h('select', { id, 'aria-label': 'Model' }, (ids.length ? ids : ['gepard-1.0']).map((m) => h('option', { value: m }, m)));
  }
  async function voices([orgId]) {
    if (state.role === 'admin') return orgVoices(orgId);
    const [page, model] = await Promise.all([json('/voices?limit=100'), modelPicker('voice-model')]);
    const player = h('audio', { controls: true, hidden: true, id: 'voice-player', 'aria-label': 'Voice preview' });
    const status = h('p', { role: 'status' });
    const rows = page.data.map((v) => h('tr', {},
      h('td', {}, v.name, v.is_owner ? h('span', { class: 'badge' }, ' cloned') : null), h('td', {}, h('code', {}, v.id)), h('td', {}, v.language || ''),
      h('td', {}, h('button', { type: 'button', class: 'quiet', 'aria-label': `Play ${v.name}`, onclick: () => speak({ model_id: model.value, voice: { mode: 'id', id: v.id }, transcript: `Hello, this is ${v.name}.` }, player, status) }, 'Play'),
        ' ', v.is_owner ? h('button', { type: 'button', class: 'danger', 'aria-label': `Delete ${v.name}`, onclick: async () => {
          try { await json(`/voices/${encodeURIComponent(v.id)}`, { method: 'DELETE' }); route(); } catch (err) { status.className = 'error'; status.textContent = err.message; }
        } }, 'Delete') : null)));
    const form = h('form', { class: 'card', 'aria-label': 'Clone a voice' },
      h('div', { class: 'row' },
        h('label', { class: 'field' }, 'Clip (WAV or MP3, 1–120 s)', h('input', { name: 'clip', type: 'file', accept: 'audio/wav,audio/mpeg,.wav,.mp3', required: true })),
        h('label', { class: 'field' }, 'Name', h('input', { name: 'name', required: true })),
        h('label', { class: 'field' }, 'Language', h('input', { name: 'language', value: 'en', required: true, size: 6 }))),
      h('label', { class: 'field' }, 'Transcript (what the clip says)', h('textarea', { name: 'transcript' })),
      h('p', {}, h('button', { type: 'submit' }, 'Clone voice')));
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      const body = new FormData();
      body.append('clip', form.clip.files[0]); body.append('name', form.name.value); body.append('language', form.language.value);
      if (form.transcript.value) body.append('transcript', form.transcript.value);
      status.className = ''; status.textContent = 'Cloning…';
      try { const v = await json('/voices/clone', { method: 'POST', body }); await route(); $('main').querySelector('[role=status]').textContent = `Cloned ${v.name} (${v.id}).`; }
      catch (err) { status.className = 'error'; status.textContent = err.message; }
    });
    return [h('h1', {}, 'Voices'), h('div', { class: 'toolbar' }, h('label', { for: 'voice-model' }, 'Preview with'), model), status, player,
      h('div', { class: 'table-wrap' }, h('table', {}, h('thead', {}, h('tr', {}, ['Name', 'Id', 'Language', ''].map((t) => h('th', {}, t)))),
        h('tbody', {}, rows.length ? rows : h('tr', {}, h('td', { colspan: 4, class: 'empty' }, 'No voices.'))))),
      h('h2', {}, 'Clone a voice'), form];
  }

  /**
   * The admin token's Voices page: one organisation's cloned voices (listed and deleted), and the
   * built-in voices every organisation has, each previewed through `/admin/voices/{id}/preview`,
   * which charges no organisation.
   */
  async function orgVoices(orgId) {
    const [builtIn, own] = await Promise.all([builtInVoices(), orgClonedVoices(orgId)]);
    return [...own, builtIn];
  }
  async function builtInVoices() {
    const everyVoice = async () => {
      const all = [];
      for (let page = { has_more: true }; page.has_more;) {
        page = await json('/admin/voices?limit=100' + (all.length ? '&starting_after=' + encodeURIComponent(all[all.length - 1].id) : ''));
        all.push(...page.data);
        if (!page.data.length) break;
      }
      return all;
    };
    const [data, model] = await Promise.all([everyVoice(), modelPicker('builtin-voice-model')]);
    const player = h('audio', { controls: true, hidden: true, id: 'builtin-voice-player', 'aria-label': 'Built-in voice preview' });
    const status = h('p', { role: 'status' });
    const play = async (v) => {
      status.className = ''; status.textContent = 'Speaking…';
      try {
        const audio = await blob(`/admin/voices/${encodeURIComponent(v.id)}/preview`, { method: 'POST', body: { model_id: model.value } });
        if (player.src) URL.revokeObjectURL(player.src);
        player.src = URL.createObjectURL(audio); player.hidden = false;
        await player.play().catch(() => {});
        status.className = 'ok'; status.textContent = `Playing ${Math.round(audio.size / 1024)} KiB of audio.`;
      } catch (err) { status.className = 'error'; status.textContent = err.message; }
    };
    const rows = data.map((v) => h('tr', {}, h('td', {}, v.name), h('td', {}, h('code', {}, v.id)), h('td', {}, v.language || ''),
      h('td', {}, h('button', { type: 'button', class: 'quiet', 'aria-label': `Play ${v.name}`, onclick: () => play(v) }, 'Play'))));
    return h('section', { 'aria-labelledby': 'builtin-voices' }, h('h2', { id: 'builtin-voices' }, 'Built-in voices'),
      h('p', { class: 'muted' }, 'Every organisation has these. A preview is spoken for the operator and charged to no organisation.'),
      h('div', { class: 'toolbar' }, h('label', { for: 'builtin-voice-model' }, 'Preview with'), model), status, player,
      h('div', { class: 'table-wrap' }, h('table', {}, h('thead', {}, h('tr', {}, ['Name', 'Id', 'Language', ''].map((t) => h('th', {}, t)))),
        h('tbody', {}, rows.length ? rows : h('tr', {}, h('td', { colspan: 4, class: 'empty' }, 'No built-in voices.'))))));
  }
  async function orgClonedVoices(orgId) {
    const picked = await pickOrg('voices', orgId);
    if (!picked) return noOrgs('Voices');
    const { data } = await json(`${adminBase(picked.org)}/voices?limit=100`);
    const status = h('p', { role: 'status' });
    const rows = data.map((v) => h('tr', {},
      h('td', {}, v.name), h('td', {}, h('code', {}, v.id)), h('td', {}, v.language || ''), h('td', {}, when(v.created_at)),
      h('td', {}, h('button', { type: 'button', class: 'danger', 'aria-label': `Delete ${v.name}`, onclick: async () => {
        try { await json(`${adminBase(picked.org)}/voices/${encodeURIComponent(v.id)}`, { method: 'DELETE' }); await route(); }
        catch (err) { status.className = 'error'; status.textContent = err.message; }
      } }, 'Delete'))));
    return [h('h1', {}, 'Voices'), picked.picker, status,
      h('div', { class: 'table-wrap' }, h('table', {}, h('thead', {}, h('tr', {}, ['Name', 'Id', 'Language', 'Created', ''].map((t) => h('th', {}, t)))),
        h('tbody', {}, rows.length ? rows : h('tr', {}, h('td', { colspan: 5, class: 'empty' }, `${picked.org.name} has cloned no voices.`))))),
      h('p', { class: 'muted' }, 'Cloning is done with the organisation\'s API key.')];
  }

  // ---- Dictionaries --------------------------------------------------------------------------
  async function dictionaries([id]) {
    if (state.role === 'admin') return orgDictionaries(id);
    if (id) return dictionaryPage(id);
    const { data } = await json('/pronunciation-dicts?limit=100');
    const error = h('p', { class: 'error', role: 'alert' });
    const form = h('form', { class: 'row card', 'aria-label': 'Create dictionary' }, h('label', {}, 'Name', h('input', { name: 'name', required: true })), h('button', { type: 'submit' }, 'Create dictionary'));
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      try { const d = await json('/pronunciation-dicts', { method: 'POST', body: { name: form.name.value, items: [] } }); location.hash = `#/dictionaries/${d.id}`; } catch (err) { error.textContent = err.message; }
    });
    return [h('h1', {}, 'Dictionaries'), data.length ? h('ul', {}, data.map((d) => h('li', {}, h('a', { href: `#/dictionaries/${encodeURIComponent(d.id)}` }, d.name), ` — ${d.items.length} entr${d.items.length === 1 ? 'y' : 'ies'}`))) : empty('No dictionaries yet.'), form, error];
  }
  async function dictionaryPage(id) {
    const [dict, model] = await Promise.all([json(`/pronunciation-dicts/${encodeURIComponent(id)}`), modelPicker('dict-model')]);
    const tbody = h('tbody', {});
    const row = (item = { text: '', alias: '' }) => {
      const tr = h('tr', {},
        h('td', {}, h('input', { 'aria-label': 'Text', name: 'text', value: item.text })),
        h('td', {}, h('input', { 'aria-label': 'Spoken as', name: 'alias', value: item.alias })),
        h('td', {}, h('input', { type: 'checkbox', 'aria-label': 'Case sensitive', name: 'case', checked: !!item.case_sensitive })),
        h('td', {}, h('button', { type: 'button', class: 'danger', 'aria-label': 'Remove entry', onclick: () => tr.remove() }, 'Remove')));
      tbody.append(tr);
    };
    dict.items.forEach(row);
    const status = h('p', { role: 'status' });
    const save = async () => {
      const items = [...tbody.children].map((tr) => ({ text: tr.querySelector('[name=text]').value, alias: tr.querySelector('[name=alias]').value, case_sensitive: tr.querySelector('[name=case]').checked })).filter((i) => i.text.trim());
      try { await json(`/pronunciation-dicts/${encodeURIComponent(id)}`, { method: 'PATCH', body: { items } }); status.className = 'ok'; status.textContent = `Saved ${items.length} entr${items.length === 1 ? 'y' : 'ies'}.`; }
      catch (err) { status.className = 'error'; status.textContent = err.message; }
    };
    const player = h('audio', { controls: true, hidden: true, 'aria-label': 'Try it audio' });
    const tryStatus = h('p', { role: 'status' });
    const sentence = h('input', { id: 'try-text', value: dict.items[0] ? `Say ${dict.items[0].text} for me.` : 'Type a sentence here.', size: 40 });
    const language = h('input', { id: 'try-language', placeholder: 'the voice’s', size: 8, list: 'try-languages' });
    const languages = h('datalist', { id: 'try-languages' }, ['en', 'de', 'fr', 'es', 'it', 'pt', 'nl', 'pt-BR', 'es-MX', 'fr-CA', 'de-CH'].map((l) => h('option', { value: l })));
    const readAs = h('p', { 'aria-label': 'Read as', class: 'muted' });
    /** What the sentence is read as (POST /tts/normalize), then the audio. */
    const tryIt = async () => {
      const body = { model_id: model.value, voice: { mode: 'id', id: 'sarah' }, transcript: sentence.value, pronunciation_dict_id: id, ...(language.value.trim() ? { language: language.value.trim() } : {}) };
      try { const n = await json('/tts/normalize', { method: 'POST', body }); readAs.textContent = `Read as (${n.language}): ${n.text}`; } catch (err) { readAs.textContent = ''; }
      await speak(body, player, tryStatus);
    };
    return [h('h1', {}, dict.name), h('p', {}, h('a', { href: '#/dictionaries' }, 'All dictionaries'), ' · ', h('code', {}, dict.id)),
      h('div', { class: 'table-wrap' }, h('table', {}, h('thead', {}, h('tr', {}, ['Text', 'Spoken as', 'Case sensitive', ''].map((t) => h('th', {}, t)))), tbody)),
      h('p', { class: 'toolbar' }, h('button', { type: 'button', class: 'quiet', onclick: () => row() }, 'Add entry'), h('button', { type: 'button', onclick: save }, 'Save entries')), status,
      h('h2', {}, 'Try it'), h('div', { class: 'toolbar' }, h('label', { for: 'try-text' }, 'Sentence'), sentence, h('label', { for: 'dict-model' }, 'Model'), model,
        h('label', { for: 'try-language' }, 'Language'), language, languages,
        h('button', { type: 'button', onclick: tryIt }, 'Speak')), readAs, tryStatus, player];
  }

  /** The admin token's view of one organisation's dictionaries and their entries (edited with the organisation's key). */
  async function orgDictionaries(orgId) {
    const picked = await pickOrg('dictionaries', orgId);
    if (!picked) return noOrgs('Dictionaries');
    const { data } = await json(`${adminBase(picked.org)}/pronunciation-dicts?limit=100`);
    const one = (d) => h('section', { class: 'card', 'aria-label': `Dictionary ${d.name}` }, h('h2', {}, d.name, ' ', h('code', { class: 'muted' }, d.id)),
      d.items.length
        ? h('div', { class: 'table-wrap' }, h('table', {}, h('thead', {}, h('tr', {}, ['Text', 'Spoken as', 'Case sensitive'].map((t) => h('th', {}, t)))),
          h('tbody', {}, d.items.map((i) => h('tr', {}, h('td', {}, i.text), h('td', {}, i.alias), h('td', {}, i.case_sensitive ? 'yes' : 'no'))))))
        : empty('No entries.'));
    return [h('h1', {}, 'Dictionaries'), picked.picker, ...(data.length ? data.map(one) : [empty(`${picked.org.name} has no dictionaries.`)])];
  }

  // ---- Jobs ----------------------------------------------------------------------------------
  const FINAL = new Set(['succeeded', 'failed', 'cancelled']);
  async function jobs([id]) {
    // With the admin token the page lists one organisation's jobs (`#/jobs/<org id>`), refreshed by reading the list again.
    const picked = state.role === 'admin' ? await pickOrg('jobs', id) : null;
    if (state.role === 'admin' && !picked) return noOrgs('Jobs');
    const base = picked ? `${adminBase(picked.org)}/jobs` : '/tts/jobs';
    const one = picked ? null : id;
    const list = one ? { data: [await json(`/tts/jobs/${encodeURIComponent(one)}`)] } : await json(`${base}?limit=50`);
    const status = h('p', { role: 'status' });
    const rows = list.data.map((job) => jobRow(job, status, picked ? base : null));
    const tbody = h('tbody', {}, rows);
    const table = h('div', { class: 'table-wrap', hidden: !rows.length }, h('table', {}, h('thead', {}, h('tr', {}, ['Job', 'Status', 'Progress', 'Characters', 'Created', ''].map((t) => h('th', {}, t)))), tbody));
    const none = rows.length ? null : empty(picked ? `${picked.org.name} has no jobs.` : 'No jobs yet. Submit one with POST /tts/jobs or voicegate say --job.');
    // New jobs appear without a reload: the list is read again every 10 s and new ones are added on top
    // (the admin token follows no job's events, so its rows are brought up to date from the same read).
    if (!one) live(async () => {
      const { data } = await json(`${base}?limit=50`);
      const shown = new Map([...tbody.children].map((tr) => [tr.dataset.job, tr]));
      if (picked) for (const j of data) shown.get(j.id)?.show(j);
      const fresh = data.filter((j) => !shown.has(j.id));
      if (!fresh.length) return;
      tbody.prepend(...fresh.map((j) => jobRow(j, status, picked ? base : null)));
      table.hidden = false; none?.remove();
    });
    return [h('h1', {}, one ? `Job ${one}` : 'Jobs'), picked ? picked.picker : null, one ? h('p', {}, h('a', { href: '#/jobs' }, 'All jobs')) : null, status, table, none];
  }
  /** A job's row; `adminJobs` is the admin token's list of the job's organisation (cancel there, no events, no download). */
  function jobRow(job, status, adminJobs = null) {
    const bar = h('progress', { max: 1, value: 0, 'aria-label': `Progress of ${job.id}` });
    const text = h('span', {});
    const state_ = h('span', { class: 'badge' });
    const actions = h('td', {});
    const tr = h('tr', { 'data-job': job.id }, h('td', {}, h('a', { href: `#/jobs/${encodeURIComponent(job.id)}` }, h('code', {}, job.id))), h('td', {}, state_), h('td', {}, bar, ' ', text), h('td', { class: 'num' }, fmt(job.characters)), h('td', {}, when(job.created_at)), actions);
    const show = (j) => {
      (vg.jobs[j.id] ??= []).push(j.status);
      const p = j.progress || {};
      const done = j.status === 'succeeded' ? 1 : p.segments_total ? p.segments_done / p.segments_total : 0;
      bar.value = done; text.textContent = `${Math.round(done * 100)}%`;
      state_.textContent = j.status; state_.className = 'badge ' + (j.status === 'succeeded' ? 'good' : j.status === 'failed' || j.status === 'cancelled' ? 'bad' : '');
      tr.dataset.status = j.status;
      // The buttons follow the status only: made again on every progress event, a button moves under the pointer.
      if (actions.dataset.status === j.status) return;
      actions.dataset.status = j.status;
      actions.replaceChildren(
        FINAL.has(j.status) ? null : h('button', { type: 'button', class: 'danger', 'aria-label': `Cancel ${j.id}`, onclick: async () => { try { const left = await json(`${adminJobs ?? '/tts/jobs'}/${encodeURIComponent(j.id)}`, { method: 'DELETE' }); if (left) show(left); else tr.remove(); } catch (err) { status.className = 'error'; status.textContent = err.message; } } }, 'Cancel'),
        j.status === 'succeeded' && !adminJobs ? h('button', { type: 'button', 'aria-label': `Download ${j.id}`, onclick: async () => {
          try {
            const file = await blob(`/tts/jobs/${encodeURIComponent(j.id)}/audio`);
            const ext = { 'audio/mpeg': 'mp3', 'audio/wav': 'wav', 'audio/ogg': 'opus' }[file.type] || 'raw';
            const a = h('a', { href: URL.createObjectURL(file), download: `${j.id}.${ext}` }); document.body.append(a); a.click(); a.remove();
          } catch (err) { status.className = 'error'; status.textContent = err.message; }
        } }, 'Download') : null,
        j.status === 'succeeded' && !adminJobs ? h('button', { type: 'button', 'aria-label': `Captions ${j.id}`, onclick: () => captions(j.id, tr, status) }, 'Captions') : null,
        j.status === 'failed' && j.error ? h('span', { class: 'error' }, `${j.error.error_code}: ${j.error.message}`) : null);
    };
    show(job);
    tr.show = show;
    if (!FINAL.has(job.status) && !adminJobs) follow(job.id, show);
    return tr;
  }
  /** A finished job's captions (WebVTT) shown in a row under its own, with both formats to download; a second click hides them. */
  async function captions(id, tr, status) {
    const open = tr.nextElementSibling?.dataset.captionsOf === id ? tr.nextElementSibling : null;
    if (open) return open.remove();
    const path = `/tts/jobs/${encodeURIComponent(id)}/captions`;
    try {
      const text = await (await call(`${path}?format=vtt`)).text();
      const save = (format) => async () => {
        try {
          const file = await blob(`${path}?format=${format}`);
          const a = h('a', { href: URL.createObjectURL(file), download: `${id}.${format}` }); document.body.append(a); a.click(); a.remove();
        } catch (err) { status.className = 'error'; status.textContent = err.message; }
      };
      const row = h('tr', { 'data-captions-of': id }, h('td', { colspan: '6' },
        h('pre', { class: 'captions', 'aria-label': `Captions of ${id}` }, text),
        h('p', { class: 'toolbar' },
          h('button', { type: 'button', onclick: save('vtt') }, 'Download WebVTT'),
          h('button', { type: 'button', onclick: save('srt') }, 'Download SRT'))));
      tr.after(row);
    } catch (err) { status.className = 'error'; status.textContent = err.message; }
  }
  /** The job's events (SSE over fetch, so the token goes in Authorization, not the URL). */
  async function follow(id, show) {
    const controller = new AbortController();
    state.streams.push(controller);
    try {
      const response = await call(`/tts/jobs/${encodeURIComponent(id)}/events`, { signal: controller.signal });
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        let end;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const frame = buffer.slice(0, end); buffer = buffer.slice(end + 2);
          const data = frame.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trim()).join('\n');
          if (data) show(JSON.parse(data));
        }
      }
    } catch (err) { if (err.name !== 'AbortError' && err.code !== 'signed_out') show({ id, status: 'unknown', progress: {} }); }
  }

  // ---- Engines -------------------------------------------------------------------------------
  /** One gateway's engines (workers busy and idle, queue depth) and its upstream pools' members. */
  function engineTables(list, id = null, heading = 'h2') {
    const num = (v) => (typeof v === 'number' ? fmt(v) : '–');
    const where = (url) => { try { const u = new URL(url); return u.host + (u.pathname === '/' ? '' : u.pathname); } catch { return 'unknown'; } };
    const parts = [h('div', { class: 'table-wrap' }, h('table', { id },
      h('thead', {}, h('tr', {}, ['Engine', 'Type', 'Ready', 'Workers busy', 'Workers idle', 'Queue depth', ''].map((t, i) => h('th', { class: i > 2 && i < 6 ? 'num' : null }, t)))),
      h('tbody', {}, list.length ? list.map((e) => h('tr', {}, h('td', {}, e.id), h('td', {}, e.type || ''),
        h('td', {}, e.ready === false ? h('span', { class: 'badge bad' }, e.error || 'no') : h('span', { class: 'badge good' }, 'yes'),
          // An engine with idle unload: whether its workers hold the model now.
          typeof e.loaded === 'boolean' ? [' ', h('span', { class: 'badge ' + (e.loaded ? 'good' : 'muted'), title: `loads: ${e.loads}` }, e.loaded ? 'loaded' : 'idle')] : null),
        h('td', { class: 'num' }, num(e.busy)), h('td', { class: 'num' }, typeof e.workers === 'number' && typeof e.busy === 'number' ? fmt(Math.max(0, e.workers - e.busy)) : '–'), h('td', { class: 'num' }, num(e.queued)),
        h('td', {}, e.imported && id ? h('button', { type: 'button', class: 'danger', 'aria-label': `Delete model ${e.id}`, onclick: async (event) => {
          try { await json(`/admin/models/${encodeURIComponent(e.id)}`, { method: 'DELETE' }); route(); } catch (err) { event.target.replaceWith(errorBox(err)); }
        } }, 'Delete') : ''))) :
        h('tr', {}, h('td', { colspan: 7, class: 'empty' }, 'No engines.')))))];
    const pools = list.filter((e) => e.upstreams && Array.isArray(e.upstreams.servers));
    // Engines with a circuit breaker: closed, open (requests skip it) or half-open (one probes it).
    const breakers = list.filter((e) => e.breaker && e.breaker.state);
    if (breakers.length) parts.push(h(heading, {}, 'Circuit breakers'), h('ul', {}, breakers.map((e) => h('li', {}, `${e.id}: `,
      h('span', { class: 'badge ' + (e.breaker.state === 'closed' ? 'good' : 'bad') }, e.breaker.state), e.breaker.openUntil ? ` until ${new Date(e.breaker.openUntil).toLocaleTimeString()}` : ''))));
    if (pools.length) parts.push(h(heading, {}, 'Upstream pools'), h('ul', {}, pools.flatMap((e) => e.upstreams.servers.map((u) => h('li', {}, `${e.id}: ${where(u.url)} `, h('span', { class: 'badge ' + (u.healthy ? 'good' : 'bad') }, u.healthy ? 'healthy' : 'unhealthy'))))));
    return parts;
  }
  async function engines() {
    const body = h('div', {});
    async function draw() {
      // The admin token reads /admin/engines (workers, queue, upstream members, every gateway alive); a key reads /readyz.
      const here = state.role === 'admin' ? await json('/admin/engines') : await fetch('/readyz').then((r) => r.json());
      const parts = [h('p', {}, 'This gateway', here.instance ? [' ', h('code', {}, here.instance)] : null, here.version ? ` (version ${here.version})` : '', ': ',
        h('span', { class: 'badge ' + (here.status === 'ready' ? 'good' : 'bad') }, here.status || here.error_code || 'unknown')), ...engineTables(here.engines || [], 'engines-table')];
      if (state.role === 'admin') {
        parts.push(h('h2', {}, 'Gateways alive'));
        if (Array.isArray(here.gateways)) {
          parts.push(h('ul', { id: 'gateways' }, here.gateways.map((id) => h('li', {}, h('code', {}, id), id === here.gateway_id ? ' (this one)' : ''))));
          // Every other gateway as its card in Redis last said (each writes its own every 5 s).
          for (const peer of here.peers || []) {
            const label = `Gateway ${peer.gateway_id}`;
            parts.push(h('section', { 'aria-label': label, 'data-gateway': peer.gateway_id }, h('h3', {}, label, peer.version ? ` (version ${peer.version})` : '', ': ',
              peer.status ? h('span', { class: 'badge ' + (peer.status === 'ready' ? 'good' : 'bad') }, peer.status) : h('span', { class: 'muted' }, 'no card yet')),
              ...(peer.engines ? engineTables(peer.engines, null, 'h4') : [])));
          }
        }
        else if (here.gateways_error) parts.push(h('p', { class: 'error' }, here.gateways_error));
        else parts.push(h('p', { class: 'muted' }, 'Only this gateway: the limit counters are not shared in Redis, so other gateways are not known here.'));
      } else {
        const c = await json('/concurrency');
        parts.push(h('p', { class: 'muted' }, 'Workers and queues need the admin token.'),
          h('h2', {}, 'Your organisation now'), h('div', { class: 'stats' }, stat('Requests running', `${c.tts_requests.active}${c.tts_requests.limit === null ? '' : ' of ' + c.tts_requests.limit}`), stat('WebSockets open', fmt(c.tts_websockets.active)), stat('Job segments running', fmt(c.tts_jobs.active))));
      }
      body.replaceChildren(...parts);
    }
    await draw();
    live(draw);
    if (state.role !== 'admin') return [h('h1', {}, 'Engines'), body];
    return [h('h1', {}, 'Engines'), body, h('h2', {}, 'Import model'), importForm(draw)];
  }
  /**
   * The admin token's "Import model" form (`POST /admin/models`): a Piper voice's `.onnx` with its
   * `.onnx.json`, or a sherpa-onnx `.tar.bz2`, told apart by their names; an optional id.
   */
  function importForm(redraw) {
    const status = h('p', { role: 'status', id: 'import-status' });
    const form = h('form', { class: 'card', 'aria-label': 'Import model' },
      h('div', { class: 'row' },
        h('label', { class: 'field' }, 'Files (a Piper .onnx with its .onnx.json, a sherpa-onnx .tar.bz2, or a Kokoro voices .bin)', h('input', { name: 'files', type: 'file', multiple: true, accept: '.onnx,.json,.bz2,.bin', required: true })),
        h('label', { class: 'field' }, 'Model id (optional: from the file name)', h('input', { name: 'id', size: 24 })),
        h('label', { class: 'field' }, 'Kokoro model (for a voices .bin)', h('input', { name: 'voicesTarget', size: 20 }))),
      h('p', {}, h('button', { type: 'submit' }, 'Import model')), status);
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      const body = new FormData();
      if (form.id.value.trim()) body.append('id', form.id.value.trim());
      if (form.voicesTarget.value.trim()) body.append('target', form.voicesTarget.value.trim());
      for (const file of form.files.files) {
        const part = /\.(tar\.bz2|tbz2?)$/i.test(file.name) ? 'archive' : /\.json$/i.test(file.name) ? 'config' : /\.bin$/i.test(file.name) ? 'voices' : 'model';
        body.append(part, file, file.name);
      }
      status.className = ''; status.textContent = 'Importing… (checked and loaded before it is installed)';
      try {
        const m = await json('/admin/models', { method: 'POST', body });
        status.className = 'ok'; status.textContent = `Imported ${m.id}: ${fmt(m.sample_rate)} Hz, voices ${m.voices.join(', ')}.`;
        form.reset(); await redraw();
      } catch (err) { status.className = 'error'; status.textContent = err.message; }
    });
    return form;
  }

  // ---- Cache ---------------------------------------------------------------------------------
  async function cache() {
    if (state.role !== 'admin') return [h('h1', {}, 'Cache'), empty('The audio cache is the operator\'s: sign in with the admin token to see and purge it.')];
    const body = h('div', {});
    async function draw() {
      const m = await metrics().catch(() => null);
      if (!m) { body.replaceChildren(empty('Cache numbers come from /metrics, which is not served on this port.')); return; }
      const tiers = new Set(m.filter((s) => s.name.startsWith('voicegate_cache_') && s.labels.tier).map((s) => s.labels.tier));
      const sum = (name, tier) => m.filter((s) => s.name === name && (!tier || s.labels.tier === tier)).reduce((a, s) => a + s.value, 0);
      const hits = sum('voicegate_cache_hits_total'), misses = sum('voicegate_cache_misses_total');
      body.replaceChildren(h('div', { class: 'stats' }, stat('Hit rate', hits + misses ? `${Math.round((hits / (hits + misses)) * 100)}%` : 'no lookups yet', 'hit-rate'), stat('Hits', fmt(hits)), stat('Misses', fmt(misses))),
        tiers.size ? h('div', { class: 'table-wrap' }, h('table', {}, h('thead', {}, h('tr', {}, ['Tier', 'Hits', 'Entries', 'Bytes'].map((t, i) => h('th', { class: i ? 'num' : null }, t)))),
          h('tbody', {}, [...tiers].map((t) => h('tr', {}, h('td', {}, t), h('td', { class: 'num' }, fmt(sum('voicegate_cache_tier_hits_total', t))), h('td', { class: 'num' }, fmt(sum('voicegate_cache_entries', t))), h('td', { class: 'num' }, fmt(sum('voicegate_cache_bytes', t)))))))) : empty('The audio cache is off on this gateway, or has no tiers yet.'),
        ...peerCaches((await json('/admin/engines').catch(() => ({}))).peers || []));
    }
    /** The other gateways' caches, as their cards in Redis last said (`/admin/engines` peers). */
    function peerCaches(peers) {
      const known = peers.filter((p) => p.cache);
      if (!known.length) return [];
      const rate = (c) => (c.hits + c.misses ? `${Math.round((c.hits / (c.hits + c.misses)) * 100)}%` : '–');
      const local = (c) => c.memory.entries + (c.disk ? c.disk.entries : 0);
      const bytes = (c) => c.memory.bytes + (c.disk ? c.disk.bytes : 0);
      return [h('h2', {}, 'Other gateways'), h('div', { class: 'table-wrap' }, h('table', { id: 'peer-caches' },
        h('thead', {}, h('tr', {}, ['Gateway', 'Hit rate', 'Hits', 'Misses', 'Entries (memory and disk)', 'Bytes'].map((t, i) => h('th', { class: i ? 'num' : null }, t)))),
        h('tbody', {}, known.map((p) => h('tr', { 'data-gateway': p.gateway_id }, h('td', {}, h('code', {}, p.gateway_id)), h('td', { class: 'num' }, rate(p.cache)),
          h('td', { class: 'num' }, fmt(p.cache.hits)), h('td', { class: 'num' }, fmt(p.cache.misses)), h('td', { class: 'num' }, fmt(local(p.cache))), h('td', { class: 'num' }, fmt(bytes(p.cache)))))))),
      h('p', { class: 'muted' }, 'The shared tier in Redis is one for all gateways; each gateway purges its own memory and disk tiers.')];
    }
    await draw();
    live(draw);
    const status = h('p', { role: 'status', id: 'purge-status' });
    const form = h('form', { class: 'row card', 'aria-label': 'Purge the cache' },
      h('label', {}, 'Organisation id (empty: everything)', h('input', { name: 'org' })),
      h('label', {}, 'Voice id (optional)', h('input', { name: 'voice' })),
      h('button', { type: 'submit', class: 'danger' }, 'Purge'));
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      const what = {};
      if (form.org.value.trim()) what.organisation_id = form.org.value.trim();
      if (form.voice.value.trim()) what.voice_id = form.voice.value.trim();
      if (!Object.keys(what).length) what.all = true;
      try { const r = await json('/admin/cache/purge', { method: 'POST', body: what }); status.className = 'ok'; status.textContent = `Purged ${fmt(r.purged)} entr${r.purged === 1 ? 'y' : 'ies'}.`; await draw(); }
      catch (err) { status.className = 'error'; status.textContent = err.message; }
    });
    return [h('h1', {}, 'Cache'), body, h('h2', {}, 'Purge'), form, status];
  }

  // ---- start ---------------------------------------------------------------------------------
  const saved = sessionStorage.getItem(STORE);
  if (saved) signIn(saved).catch((err) => signOut('Sign in again.', err));
  else signOut('');
})();
