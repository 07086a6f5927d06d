// The bt observer's live page: draws the supervision tree from /runtime/events (server-sent
// events carrying {tree, idents, diff}), highlights what the diff says changed since the last
// update, filters by class name and shows a panel for the selected process (status fetched
// lazily from /runtime/status). No external asset, no framework.
'use strict';
(function () {
  const $ = (id) => document.getElementById(id);
  // State, exposed for tests and the curious: `btObserver.listeners` are called (once) after
  // the next update.
  const st = { tree: null, idents: [], diff: null, selected: null, byIdent: new Map(), updates: 0, listeners: [] };
  window.btObserver = st;

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text != null) e.textContent = String(text);
    return e;
  }
  const label = (n) => n.class || n.registeredName || n.kind;
  const isSup = (n) => n.kind === 'beamtalkSupervisor' || n.kind === 'otpSupervisor' || !!n.supervision;
  const time = (ms) => (ms == null ? '–' : new Date(ms).toISOString().replace('T', ' ').replace('Z', ''));
  const bare = (pid) => (pid || '').replace(/[<>]/g, '');
  const KIND = { beamtalkSupervisor: 'SUP', otpSupervisor: 'SYS', beamtalkActor: 'ACT', otpProcess: 'PROC', restarting: 'ACT' };

  // A node ended abnormally: a tombstone whose last exit was not normal or a shutdown.
  function dead(n) {
    if (n.state !== 'exited') return false;
    const h = n.restartHistory || [];
    const last = h[h.length - 1];
    return !!last && last.reason !== 'normal' && last.reason !== 'shutdown';
  }

  function changes() {
    const m = new Map();
    const d = st.diff;
    if (!d) return m;
    for (const e of d.stateChanged) m.set(e.path, 'changed');
    for (const e of d.restarted) m.set(e.path, 'restarted');
    for (const e of d.added) m.set(e.path, 'added');
    return m;
  }

  function render() {
    const t = st.tree;
    const chg = changes();
    st.byIdent = new Map();
    let i = 0;
    const build = (n) => {
      const ident = st.idents[i++] || '';
      st.byIdent.set(ident, n);
      const li = el('li', 'node state-' + n.state + (isSup(n) ? ' supervisor' : ' worker'));
      if (dead(n)) li.classList.add('dead');
      Object.assign(li.dataset, {
        ident, class: n.class || '', state: n.state, kind: n.kind,
        restarts: String(n.restartCount), pid: n.pid || '',
      });
      const c = chg.get(ident);
      if (c) li.classList.add('chg-' + c, 'flash');
      if (ident === st.selected) li.classList.add('selected');
      const row = el('div', 'row');
      row.append(el('span', 'dot'), el('span', 'kind', KIND[n.kind] || n.kind), el('span', 'label', label(n)));
      if (n.registeredName && n.registeredName !== label(n)) row.append(el('span', 'name', '#' + n.registeredName));
      row.append(el('span', 'pid', n.pid || 'restarting'));
      if (n.supervision) {
        row.append(el('span', 'strategy', n.supervision.strategy + ' · ' + n.childCount + ' children'));
      }
      const r = el('span', 'restarts' + (n.restartCount ? '' : ' zero'), '↻ ' + n.restartCount);
      r.title = 'restarts';
      row.append(r, el('span', 'state', n.state + (n.truncated ? ' (truncated)' : '')));
      row.addEventListener('click', () => select(ident));
      li.append(row);
      if (n.children && n.children.length) {
        const ul = el('ul', 'tree');
        for (const ch of n.children) ul.append(build(ch));
        li.append(ul);
      }
      return li;
    };
    const root = el('ul', 'tree');
    for (const r of t.roots) root.append(build(r));
    if (!t.roots.length) root.append(el('li', 'muted', 'no processes'));
    $('tree').replaceChildren(root);
    const tt = t.totals;
    $('node').textContent = t.node + ' · ' + time(t.capturedAt);
    $('summary').textContent = tt.supervisors + ' supervisors, ' + tt.workers + ' workers, ' +
      tt.running + ' running, ' + tt.exited + ' exited, ' + tt.restarts + ' restarts' +
      (t.page ? ' (showing ' + t.roots.length + ' of ' + t.page.totalRoots + ' roots)' : '');
    const d = st.diff;
    if (d) {
      const c = d.counts;
      let s = 'since the last update: +' + c.added + ' −' + c.removed + ' ↻' + c.restarts + ' Δ' + c.stateChanged;
      if (d.removed.length) s += ' · removed: ' + d.removed.map((e) => e.path).join(', ');
      $('changes').textContent = s;
    }
    applyFilter();
    renderPanel(false);
  }

  function applyFilter() {
    const q = $('filter').value.trim().toLowerCase();
    const walk = (li) => {
      let show = !q || (li.dataset.class || '').toLowerCase().includes(q);
      const ul = li.querySelector(':scope > ul');
      if (ul) for (const c of ul.children) if (walk(c)) show = true;
      li.classList.toggle('hidden', !show);
      return show;
    };
    const root = $('tree').querySelector(':scope > ul');
    if (root) for (const li of root.children) if (li.dataset.ident !== undefined) walk(li);
  }

  function select(ident) {
    st.selected = ident;
    for (const li of document.querySelectorAll('li.node.selected')) li.classList.remove('selected');
    const li = [...document.querySelectorAll('li.node')].find((x) => x.dataset.ident === ident);
    if (li) li.classList.add('selected');
    renderPanel(true);
  }

  function renderPanel(fetchStatus) {
    const p = $('panel');
    const n = st.selected != null ? st.byIdent.get(st.selected) : null;
    if (!n) {
      if (st.selected != null) p.replaceChildren(el('p', 'muted', st.selected + ' is no longer in the tree.'));
      return;
    }
    const dl = el('dl');
    const row = (k, v) => dl.append(el('dt', '', k), el('dd', '', v == null ? '–' : v));
    row('identity', st.selected);
    row('pid', n.pid || 'restarting');
    row('kind', n.kind);
    row('state', n.state);
    row('registered', n.registeredName);
    row('restarts', n.restartCount);
    row('started', time(n.startedAt));
    if (n.exitedAt != null) row('exited', time(n.exitedAt));
    if (n.uptimeMs != null) row('uptime', (n.uptimeMs / 1000).toFixed(1) + ' s');
    if (n.supervision) {
      const s = n.supervision;
      row('strategy', s.strategy);
      row('intensity', s.maxRestarts + ' in ' + s.window + ' s');
      row('generation', s.generation);
      row('restarts performed', s.restartsPerformed);
    }
    const status = el('dl', 'status');
    status.id = 'status';
    const keep = p.querySelector('#status');
    if (keep && !fetchStatus && keep.dataset.pid === (n.pid || '')) status.replaceChildren(...keep.childNodes);
    status.dataset.pid = n.pid || '';
    const h = n.restartHistory || [];
    const hist = el('table', 'history');
    hist.id = 'history';
    const head = el('tr');
    for (const c of ['time', 'reason', 'kind', 'gen', 'pid']) head.append(el('th', '', c));
    hist.append(head);
    for (const e of [...h].reverse()) {
      const tr = el('tr');
      for (const v of [time(e.at), e.reason, e.kind, e.generation, e.pid || '–']) tr.append(el('td', '', v));
      hist.append(tr);
    }
    p.replaceChildren(el('h2', '', label(n)), dl, el('h3', '', 'status'), status,
      el('h3', '', 'restart history (' + h.length + ')'), h.length ? hist : el('p', 'muted', 'no restarts recorded'));
    if (fetchStatus || !keep) loadStatus(n, status);
  }

  function loadStatus(n, box) {
    if (!n.pid || n.state !== 'running') {
      box.replaceChildren(el('dt', '', 'status'), el('dd', '', 'not running'));
      return;
    }
    const ctl = new AbortController();
    const timer = setTimeout(() => ctl.abort(), 1500);
    fetch('/runtime/status?pid=' + encodeURIComponent(bare(n.pid)), { signal: ctl.signal })
      .then((r) => r.json())
      .then((s) => {
        if (box.dataset.pid !== n.pid) return;
        if (!s) return box.replaceChildren(el('dt', '', 'status'), el('dd', '', 'not alive'));
        box.replaceChildren(el('dt', '', 'module'), el('dd', '', s.module), el('dt', '', 'queue length'),
          el('dd', 'queue', s.queueLength), el('dt', '', 'sys state'), el('dd', '', s.sysState));
      })
      .catch(() => box.replaceChildren(el('dt', '', 'status'), el('dd', '', 'no answer')))
      .finally(() => clearTimeout(timer));
  }

  $('filter').addEventListener('input', applyFilter);

  const live = $('live');
  const es = new EventSource('/runtime/events');
  es.onopen = () => { live.textContent = 'live'; live.classList.remove('off'); };
  es.onerror = () => { live.textContent = 'reconnecting…'; live.classList.add('off'); };
  // The program ended: its last tree, then no reconnecting.
  es.addEventListener('end', (ev) => {
    es.close();
    const d = JSON.parse(ev.data);
    st.tree = d.tree;
    st.idents = d.idents;
    st.diff = d.diff;
    render();
    live.textContent = 'program ended';
    live.classList.add('off');
  });
  es.addEventListener('tree', (ev) => {
    const d = JSON.parse(ev.data);
    st.tree = d.tree;
    st.idents = d.idents;
    st.diff = d.diff;
    st.updates += 1;
    document.body.dataset.updates = String(st.updates);
    render();
    for (const f of st.listeners.splice(0)) {
      try { f(); } catch (e) { /* a test's probe */ }
    }
  });
})();
