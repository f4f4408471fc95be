/* site.js - what every page shares (docs/web.md): the layout (header with
 * the navigation, footer), calls to the JSON API, DOM building that never
 * parses data as HTML, and number and time formats. A page's own script
 * (static/NAME.js) calls locus.page(async (main) => {...}). */
'use strict';
const locus = (() => {
  /* The navigation, in order. group: 'volunteer' pages for everyone,
     'science' pages for submitters and operators. A page is listed here
     once it exists; `only` hides it unless the session's user matches. */
  const nav = [
    { href: './', label: 'Home', group: 'volunteer' },
    { href: 'leaderboards.html', label: 'Leaderboards', group: 'volunteer' },
    { href: 'teams.html', label: 'Teams', group: 'volunteer' },
    { href: 'news.html', label: 'News', group: 'volunteer' },
    { href: 'batches.html', label: 'Batches', group: 'science' },
    { href: 'app_versions.html', label: 'App versions', group: 'science' },
    { href: 'hosts.html', label: 'Hosts', group: 'science' },
    { href: 'campaigns.html', label: 'Campaigns', group: 'science' },
  ];

  /* el('a', {href: 'x', class: 'y'}, 'text', child...): an element whose
     text children become text nodes (data is never parsed as HTML). */
  function el(tag, props, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(props || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k === 'class') e.className = v;
      else if (k === 'dataset') Object.assign(e.dataset, v);
      else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v === true ? '' : v);
    }
    for (const c of children.flat()) {
      if (c === undefined || c === null || c === false) continue;
      e.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return e;
  }

  class ApiError extends Error {
    constructor(status, message) { super(message); this.status = status; }
  }

  /* The JSON of /api/v1/PATH (GET), or of a POST with body (an object):
     rejects with an ApiError holding the server's "error" text. */
  async function api(path, body) {
    const opts = { credentials: 'same-origin', headers: { Accept: 'application/json' } };
    if (body !== undefined) {
      opts.method = 'POST';
      opts.headers['Content-Type'] = 'application/json';
      if (api.csrf) opts.headers['X-CSRF-Token'] = api.csrf;
      opts.body = JSON.stringify(body);
    }
    const r = await fetch('/api/v1/' + path, opts);
    let data = null;
    try { data = await r.json(); } catch (e) { /* not JSON: said below */ }
    if (!r.ok) throw new ApiError(r.status, (data && data.error) || ('HTTP ' + r.status));
    return data;
  }
  api.csrf = null;

  const numberFormat = new Intl.NumberFormat('en', { maximumFractionDigits: 0 });
  const fmt = {
    number: (x) => (x === null || x === undefined) ? '' : numberFormat.format(x),
    decimal: (x, d = 2) => (x === null || x === undefined) ? '' : Number(x).toFixed(d),
    /* a Unix time as "2026-11-28 06:40 UTC"; 0 or none: "never" */
    time: (t) => t ? new Date(t * 1000).toISOString().slice(0, 16).replace('T', ' ') + ' UTC' : 'never',
    /* seconds ago as "3 h ago" */
    ago: (t, now) => {
      if (!t) return 'never';
      const s = Math.max(0, (now || Date.now() / 1000) - t);
      if (s < 120) return Math.round(s) + ' s ago';
      if (s < 7200) return Math.round(s / 60) + ' min ago';
      if (s < 172800) return Math.round(s / 3600) + ' h ago';
      return Math.round(s / 86400) + ' days ago';
    },
  };

  /* A table: columns [{label, value: row => text or Node, num: bool}]. */
  function table(columns, rows, empty) {
    if (!rows.length) return el('p', { class: 'muted' }, empty || 'None yet.');
    return el('table', { class: 'list' },
      el('thead', {}, el('tr', {}, columns.map((c) => el('th', { class: c.num ? 'num' : null }, c.label)))),
      el('tbody', {}, rows.map((r) => el('tr', {},
        columns.map((c) => el('td', { class: c.num ? 'num' : null }, c.value(r)))))));
  }

  /* A button running fn on a click; fn's failure is shown beside it. */
  function button(id, label, fn, cls) {
    const b = el('button', { id, class: cls });
    b.textContent = label;
    b.addEventListener('click', async () => {
      b.parentNode.querySelectorAll('.error').forEach((e) => e.remove());
      try { await fn(); } catch (err) { b.after(el('span', { class: 'error', role: 'alert' }, err.message)); }
    });
    return b;
  }

  /* Calls fn(data) with a form's fields when it is sent, showing its
     failure (or fn's result text, if any) in the form's .result. */
  function onSubmit(form, fn) {
    form.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      const result = form.querySelector('.result');
      result.replaceChildren();
      const data = Object.fromEntries(new FormData(form).entries());
      try {
        const text = await fn(data);
        if (text) result.append(el('p', { class: 'notice', role: 'status' }, text));
      } catch (err) { showError(result, err); }
    });
  }

  /* Text with blank lines as paragraphs (never HTML). */
  const paragraphs = (text) => text.split(/\n\s*\n/).filter((p) => p.trim()).map((p) => el('p', {}, p.trim()));

  /* The query string's parameter name, or null. */
  const param = (name) => new URLSearchParams(location.search).get(name);

  /* The header's right side: who is logged in, or the ways in. */
  function who(session) {
    const box = document.getElementById('who');
    if (!session.user) {
      box.append(el('a', { href: 'login.html', id: 'login-link' }, 'Log in'),
                 el('a', { href: 'signup.html', id: 'signup-link' }, 'Sign up'));
      return;
    }
    box.append(el('a', { href: 'account.html', id: 'account-link' }, session.user.name),
      button('logout', 'Log out', async () => {
        await api('session/logout', {});
        location.href = './';
      }, 'plain'));
  }

  function layout() {
    const project = document.querySelector('meta[name="locus-project"]');
    const name = project ? project.content : 'locus';
    const here = location.pathname.split('/').pop() || './';
    const links = nav.map((n) => el('a', { href: n.href, class: n.href === here ? 'current' : null,
                                          dataset: { group: n.group } }, n.label));
    const who = el('span', { class: 'who', id: 'who' });
    document.body.prepend(el('header', { class: 'site' },
      el('a', { class: 'brand', href: './' }, name), el('nav', { id: 'nav' }, links), who));
    document.body.append(el('footer', { class: 'site' }, name, ' runs on locus. Every figure here is also in ',
      'its JSON API, under ', el('code', {}, '/api/v1/'), '.'));
  }

  /* Shows an error in place of what failed. */
  function showError(where, err) {
    where.append(el('p', { class: 'error', role: 'alert' }, err.message || String(err)));
  }

  /* Runs fn(main, session) once the layout and the session are there
     (session: {user: {id, name, role, team_id} or null, csrf}); its failure
     is shown. The page is marked data-ready once fn ended (tests wait). */
  function page(fn) {
    const run = async () => {
      layout();
      const main = document.getElementById('main');
      try {
        const session = await api('session');
        api.csrf = session.csrf;
        who(session);
        await fn(main, session);
      } catch (err) { showError(main, err); }
      locus.readyAt = performance.now();   /* ms since the navigation began: bench/site.sh reads it */
      document.body.dataset.ready = '1';
    };
    if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', run);
    else run();
  }

  return { nav, el, api, ApiError, fmt, table, param, page, showError, onSubmit, paragraphs, button };
})();
