// The pool map, drawn once and then changed in place (labeler/ui/map_component.py).
//
// Each rerun brings a message {base, rev, from, full, figure | delta} (labeler/ui/map_delta.py):
// the whole figure, or the leaves that changed since the whole figure of message `from`. The
// page keeps that figure per map (window.__labelerMap, so a remounted element keeps it too),
// applies the delta to it copy-on-write and calls Plotly.react on the SAME plot div: no new
// plot, no new WebGL context; the zoom is kept by this script, the drag mode by uirevision.
// A delta that does not follow the figure held (lost message, new page) is not applied: the
// page asks for the whole figure (state "need_full") and keeps the old map until it comes.
// Clicks, boxes and lassos are sent as the state "selection", in the shape st.plotly_chart
// gives them ({points, box, lasso}, labeler/ui/selection.py), with a counter "seq".
export default function (component) {
  const { data, parentElement, setStateValue } = component;
  if (!data || !data.message) { return; }
  const called = performance.now();
  const G = window.__labelerMap = window.__labelerMap || { cache: {}, chain: Promise.resolve(), seq: 0, log: [] };
  G.log = G.log || [];
  G.setStateValue = setStateValue;  // the newest one: events of a kept plot use it
  if (!G.plotly) {
    G.plotly = new Promise((resolve, reject) => {
      if (window.Plotly && window.Plotly.react) { resolve(window.Plotly); return; }
      const s = document.createElement("script");
      s.src = data.plotly_url;
      s.onload = () => resolve(window.Plotly);
      s.onerror = () => { G.plotly = null; reject(new Error("could not load " + data.plotly_url)); };
      document.head.appendChild(s);
    });
  }
  let gd = parentElement.querySelector(":scope > .labeler-map");
  if (!gd) {
    gd = document.createElement("div");
    gd.className = "labeler-map";
    gd.style.width = "100%";
    parentElement.appendChild(gd);
  }
  const name = data.name, msg = data.message;

  const isBranch = (v) => v !== null && typeof v === "object" && !Array.isArray(v) && !("bdata" in v);
  function copyPath(root, path) {  // copy on write down to the parent of the last key
    let node = root;
    for (const key of path.slice(0, -1)) {
      const child = node[key] === undefined ? {} : node[key];
      node[key] = Array.isArray(child) ? child.slice() : Object.assign({}, child);
      node = node[key];
    }
    return node;
  }
  function applyDelta(old, delta) {  // mirrors labeler/ui/map_delta.py apply_delta
    const fig = { data: old.data.slice(0, delta.n_traces), layout: old.layout };
    for (const [i, trace] of delta.traces) { fig.data[i] = trace; }
    for (const [path, value] of delta.set) { copyPath(fig, path)[path[path.length - 1]] = value; }
    for (const path of delta.unset) { delete copyPath(fig, path)[path[path.length - 1]]; }
    return fig;
  }
  // the pool's tooltips from compact arrays (labeler/ui/map_delta.py compact_pool_hover):
  // "<class> (<confidence>)" then the point's own text; built again only when they changed
  G.hoverTexts = G.hoverTexts || new WeakMap();
  function decode(spec, Type) {
    const bytes = Uint8Array.from(atob(spec.bdata), (ch) => ch.charCodeAt(0));
    return new Type(bytes.buffer);
  }
  function withTexts(trace) {
    const h = trace.labelerHover;
    if (!h) { return trace; }
    let text = G.hoverTexts.get(h);
    if (!text) {
      const pred = decode(h.pred, Int16Array), conf = decode(h.conf, Uint8Array);
      const last = h.names.length - 1;
      text = new Array(pred.length);
      for (let i = 0; i < pred.length; i++) {
        const head = h.names[pred[i] >= 0 ? pred[i] : last] + " (" + (conf[i] / 100).toFixed(2) + ")";
        text[i] = h.extra ? head + "<br>" + h.extra[i] : head;
      }
      G.hoverTexts.set(h, text);
    }
    const out = Object.assign({}, trace, { text });
    delete out.labelerHover;
    return out;
  }
  function clone(v, arrays) {  // objects copied; arrays too with `arrays` (the layout's ranges
    // are changed in place by a zoom), else shared (the traces' data, never changed in place)
    if (v === null || typeof v !== "object" || ArrayBuffer.isView(v)) { return v; }
    if (Array.isArray(v)) { return arrays ? v.map((x) => clone(x, arrays)) : v; }
    const out = {};
    for (const k of Object.keys(v)) { out[k] = clone(v[k], arrays); }
    return out;
  }
  const point = (p) => ({ curve_number: p.curveNumber, point_number: p.pointNumber,
                          point_index: p.pointIndex, customdata: p.customdata });
  // the drawn point nearest the click itself, within plotly's hover distance: plotly_click
  // reports the last HOVERED point, which lags a pointer that moved and clicked at once (a
  // point under the previous position was chosen); null when none is that near
  function pointAt(ev) {
    const e = ev && ev.event, fl = gd._fullLayout;
    if (!e || !fl || !fl.xaxis || !fl.yaxis || typeof e.clientX !== "number") { return undefined; }
    const r = (gd.querySelector(".nsewdrag") || gd).getBoundingClientRect();
    const px = e.clientX - r.left, py = e.clientY - r.top;
    const reach = Number.isFinite(fl.hoverdistance) && fl.hoverdistance > 0 ? fl.hoverdistance : 20;
    let best = null, bestD = reach * reach;
    (gd._fullData || []).forEach((t, c) => {
      if (!t || t.visible !== true || !t.x || !t.y || t.hoverinfo === "skip") { return; }
      for (let j = 0; j < t.x.length; j++) {
        const dx = fl.xaxis.l2p(t.x[j]) - px, dy = fl.yaxis.l2p(t.y[j]) - py, d = dx * dx + dy * dy;
        if (d <= bestD) {  // ties: the later trace, drawn on top (labelled, query over the pool)
          bestD = d;
          best = { curve_number: c, point_number: j, point_index: j,
                   customdata: t.customdata ? t.customdata[j] : undefined };
        }
      }
    });
    return best;
  }
  function emit(selection) {
    G.seq += 1;
    G.setStateValue("selection", Object.assign({ seq: G.seq, base: String(gd.__labelerBase || "") }, selection));
  }
  function attach(P) {
    if (gd.__labelerEvents) { return; }
    gd.__labelerEvents = true;
    // a click is sent after the double-click time: the first click of a double-click (reset
    // the zoom) must not choose the point under the mouse
    const cancelClick = () => { clearTimeout(gd.__labelerClick); gd.__labelerClick = null; };
    gd.on("plotly_click", (ev) => {
      if (!ev || !ev.points || !ev.points.length) { return; }
      // plotly's order on a double-click: click, doubleclick, deselect, click (at once): neither counts
      if (gd.__labelerClick || performance.now() - (gd.__labelerDouble || -1e9) < 300) { cancelClick(); return; }
      const at = pointAt(ev);
      if (at === null) { return; }  // nothing drawn under the pointer: a stale hover, not a point
      const picked = at || point(ev.points[ev.points.length - 1]);
      gd.__labelerClick = setTimeout(() => {
        gd.__labelerClick = null;
        emit({ points: [picked], box: [], lasso: [] });
      }, 350);
    });
    gd.on("plotly_doubleclick", () => { cancelClick(); gd.__labelerDouble = performance.now(); });
    gd.on("plotly_selected", (ev) => {
      if (!ev || !(ev.range || ev.lassoPoints)) { return; }  // a click: plotly_click has it
      const box = ev.range ? [{ xref: "x", yref: "y", x: ev.range.x, y: ev.range.y }] : [];
      const lasso = ev.lassoPoints ? [{ xref: "x", yref: "y", x: ev.lassoPoints.x, y: ev.lassoPoints.y }] : [];
      emit({ points: [], box, lasso });
    });
    gd.on("plotly_deselect", () => emit({ points: [], box: [], lasso: [] }));
    // a reset (double-click) autoranges over the DRAWN points; the density map draws a few, so
    // go back to the figure's own ranges (the whole pool's extent) where it gives them
    // the user's zoom, kept by this script (not by plotly's uirevision, which loses it when a
    // delta changes the traces) while the map's view key (layout.meta) stays the same
    gd.on("plotly_relayout", (ev) => {
      if (!ev) { return; }
      const fl = gd._fullLayout;
      if (Object.keys(ev).some((k) => /^[xy]axis\.range/.test(k)) && fl && fl.xaxis && fl.yaxis) {
        gd.__labelerZoom = { meta: String(fl.meta || ""), x: fl.xaxis.range.slice(), y: fl.yaxis.range.slice() };
      }
      if (!(ev["xaxis.autorange"] || ev["yaxis.autorange"])) { return; }
      gd.__labelerZoom = null;
      const held = G.cache[name], layout = held && held.fig.layout;
      const xr = layout && layout.xaxis && layout.xaxis.range, yr = layout && layout.yaxis && layout.yaxis.range;
      if (Array.isArray(xr) && Array.isArray(yr)) { P.relayout(gd, { "xaxis.range": xr.slice(), "yaxis.range": yr.slice() }); }
    });
  }
  // a box, lasso or zoom being dragged on the map is not cancelled by a new figure: the update
  // waits for the button's release (at most 10 s: a release the page never saw does not hold it)
  if (!gd.__labelerPointer) {
    gd.__labelerPointer = true;
    gd.addEventListener("pointerdown", () => { G.dragging = true; }, true);
    const release = () => { G.dragging = false; (G.afterDrag || []).splice(0).forEach((f) => f()); };
    window.addEventListener("pointerup", release, true);
    window.addEventListener("pointercancel", release, true);
  }
  function dragDone() {
    if (!G.dragging) { return Promise.resolve(); }
    return Promise.race([new Promise((resolve) => { (G.afterDrag = G.afterDrag || []).push(resolve); }),
                         new Promise((resolve) => setTimeout(resolve, 10000))]);
  }
  async function draw() {
    const P = await G.plotly;
    await dragDone();
    const held = G.cache[name];
    let fig, whole;
    if (msg.full) {
      fig = whole = msg.figure;
    } else if (held && held.base === msg.base && held.rev === msg.rev) {
      fig = held.fig; whole = held.whole;  // the same message again (a remount): as held
    } else if (held && held.base === msg.base && held.wholeRev === msg.from && held.fig === held.whole
               && !msg.delta.traces.length && !msg.delta.set.length && !msg.delta.unset.length
               && msg.delta.n_traces === held.whole.data.length && gd.dataset.drawnRev === String(held.rev)) {
      // nothing changed (a rerun that changed nothing on the map, e.g. the one after the first
      // map of a large pool): no Plotly.react, which would also cancel a zoom box being drawn
      held.rev = msg.rev;
      gd.dataset.rev = gd.dataset.drawnRev = String(msg.rev);
      G.log.push({ rev: msg.rev, full: false, called, reactStart: performance.now(), drawn: performance.now(), skipped: true });
      if (G.log.length > 100) { G.log.shift(); }
      return;
    } else if (held && held.base === msg.base && held.wholeRev === msg.from) {
      fig = applyDelta(held.whole, msg.delta); whole = held.whole;  // deltas apply to the whole figure
    } else {  // nothing to apply the delta to: ask for the whole figure, keep the old map
      G.setStateValue("need_full", { base: msg.base, rev: msg.rev, seq: (G.seq += 1) });
      return;
    }
    G.cache[name] = { base: msg.base, rev: msg.rev, fig, whole, wholeRev: msg.full ? msg.rev : held.wholeRev };
    gd.__labelerBase = msg.base;
    gd.dataset.rev = String(msg.rev);
    gd.dataset.full = msg.full ? "1" : "0";
    // plotly writes the user's zoom, selections... into the objects it is given: give it
    // copies of the objects (arrays shared), so the held figure stays what the server sent
    const layout = clone(fig.layout, true), zoom = gd.__labelerZoom;
    if (zoom && zoom.meta === String(layout.meta || "")) {
      layout.xaxis = Object.assign(layout.xaxis || {}, { range: zoom.x.slice(), autorange: false });
      layout.yaxis = Object.assign(layout.yaxis || {}, { range: zoom.y.slice(), autorange: false });
    }
    const reactStart = performance.now();
    await P.react(gd, fig.data.map(withTexts).map((t) => clone(t, false)), layout, data.config || {});
    attach(P);
    gd.dataset.drawnRev = String(msg.rev);
    // when each message came and was drawn (page clock): benchmarks/ui_latency.py splits the
    // map's time with it; the last 100 kept
    G.log.push({ rev: msg.rev, full: !!msg.full, called, reactStart, drawn: performance.now() });
    if (G.log.length > 100) { G.log.shift(); }
  }
  G.chain = G.chain.then(draw).catch((e) => { console.error("labeler map:", e); });
}
