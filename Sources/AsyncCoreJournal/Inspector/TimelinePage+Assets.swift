// The timeline page's fixed parts: its policy, style sheet and script.
extension TimelinePage {
  /// Nothing may be loaded: no address, not even the page's own folder.
  /// Inline script and style only.
  static let policy =
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'"

  /// The page's style sheet: system fonts only, light and dark.
  static let style = """
    :root { color-scheme: light dark; --accent: #2563eb; --muted: #6b7280; --line: #d1d5db; }
    * { box-sizing: border-box; }
    body { margin: 0; display: flex; flex-direction: column; height: 100vh;
      font: 14px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
    header { padding: 12px 16px 4px; }
    h1 { font-size: 18px; margin: 0 0 4px; overflow-wrap: anywhere; }
    h2 { font-size: 15px; margin: 0 0 8px; overflow-wrap: anywhere; }
    h3 { font-size: 12px; margin: 12px 0 4px; text-transform: uppercase; color: var(--muted); }
    header p { margin: 0; color: var(--muted); }
    #omitted { color: #b45309; }
    #chart { padding: 0 16px; overflow-x: auto; }
    #rate { max-width: 100%; height: auto; }
    #rate .bar { fill: var(--accent); cursor: pointer; }
    #rate .bar:hover { fill: #1e40af; }
    #rate .axis { stroke: var(--muted); }
    #rate text { font-size: 11px; fill: var(--muted); }
    #rate text.none { font-size: 14px; }
    main { display: flex; gap: 16px; padding: 8px 16px 16px; flex: 1; min-height: 320px; }
    nav { flex: 0 0 45%; display: flex; flex-direction: column; min-width: 0; }
    #filter { font: inherit; padding: 4px 8px; margin-bottom: 4px; }
    #shown { margin: 0 0 4px; color: var(--muted); font-size: 12px; }
    #timeline { list-style: none; margin: 0; padding: 0; overflow-y: auto; flex: 1; border: 1px solid var(--line);
      outline: none; }
    .step { display: flex; gap: 8px; padding: 2px 8px; cursor: pointer; white-space: nowrap;
      border-bottom: 1px solid var(--line); content-visibility: auto; contain-intrinsic-size: auto 22px; }
    .step[hidden] { display: none; }
    .step:hover { background: rgba(37, 99, 235, 0.08); }
    .step[aria-selected="true"] { background: var(--accent); color: #fff; }
    .step .index { flex: 0 0 4em; text-align: right; color: inherit; opacity: 0.7; }
    .step .time { flex: 0 0 7.5em; text-align: right; font-variant-numeric: tabular-nums; opacity: 0.7; }
    .step .name { flex: 0 0 9em; font-weight: 600; overflow: hidden; text-overflow: ellipsis; }
    .step .line { overflow: hidden; text-overflow: ellipsis; }
    code, pre { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace;
      font-size: 12px; }
    article { flex: 1; min-width: 0; overflow-y: auto; }
    pre { margin: 0; padding: 8px; border: 1px solid var(--line); white-space: pre-wrap; overflow-wrap: anywhere; }
    """

  /// Reads the steps' JSON, selects from the fragment, and wires the list,
  /// the search box and the chart's bars. The list's entries are in the
  /// markup, in the JSON's order.
  static let script = """
    "use strict";
    (function () {
      var data = JSON.parse(document.getElementById("steps").textContent);
      var list = document.getElementById("timeline");
      var items = list.getElementsByClassName("step");
      var diff = document.getElementById("diff");
      var state = document.getElementById("state");
      var heading = document.getElementById("selected");
      var filter = document.getElementById("filter");
      var shown = document.getElementById("shown");
      var positions = new Map();
      var names = [];
      for (var p = 0; p < items.length; p++) {
        positions.set(items[p].dataset.index, p);
        names.push(items[p].dataset.name.toLowerCase());
      }
      var selected = -1;

      function updateFragment() {
        var parts = [];
        if (selected >= 0) parts.push("step=" + items[selected].dataset.index);
        if (filter.value) parts.push("filter=" + encodeURIComponent(filter.value));
        try { history.replaceState(null, "", "#" + parts.join("&")); } catch (error) {}
      }

      function select(position, scroll) {
        if (position < 0 || position >= items.length) return;
        if (selected >= 0) items[selected].removeAttribute("aria-selected");
        selected = position;
        var item = items[position];
        var step = data[position];
        item.setAttribute("aria-selected", "true");
        heading.textContent = "Step " + step.i + ": " + item.dataset.name;
        diff.textContent = step.d.length ? step.d.join("\\n") : "(no difference)";
        state.textContent = step.s;
        if (scroll) item.scrollIntoView({ block: "nearest" });
      }

      function applyFilter() {
        var text = filter.value.trim().toLowerCase();
        var count = 0;
        for (var p = 0; p < items.length; p++) {
          var match = text === "" || names[p].indexOf(text) >= 0;
          if (items[p].hidden === match) items[p].hidden = !match;
          if (match) count++;
        }
        shown.textContent = text === "" ? "" : count + " of " + items.length + " steps match";
      }

      function fromFragment() {
        var params = new URLSearchParams(location.hash.slice(1));
        if (params.has("filter")) {
          filter.value = params.get("filter");
          applyFilter();
        }
        var position = positions.get(params.get("step"));
        if (position !== undefined) select(position, true);
      }

      function move(by) {
        for (var p = selected + by; p >= 0 && p < items.length; p += by) {
          if (!items[p].hidden) { select(p, true); updateFragment(); return; }
        }
      }

      list.addEventListener("click", function (event) {
        var item = event.target.closest("li.step");
        if (!item) return;
        select(positions.get(item.dataset.index), false);
        updateFragment();
      });
      list.addEventListener("keydown", function (event) {
        if (event.key === "ArrowDown") { move(1); event.preventDefault(); }
        if (event.key === "ArrowUp") { move(-1); event.preventDefault(); }
      });
      filter.addEventListener("input", function () { applyFilter(); updateFragment(); });
      document.getElementById("rate").addEventListener("click", function (event) {
        var bar = event.target.closest("rect.bar");
        if (!bar) return;
        var position = positions.get(bar.getAttribute("data-step"));
        if (position !== undefined) { select(position, true); updateFragment(); }
      });
      window.addEventListener("hashchange", fromFragment);
      fromFragment();
    })();
    """
}
