// agenteval: opening a trial's trace in the case table, shared by the one-file report and the
// viewer (agenteval view). Works on whatever rows the page holds; writes no HTML.
(function () {
  "use strict";

  function toggle(body, open) {
    var button = body.querySelector("button.open-trace");
    var trace = body.querySelector("tr.trace");
    if (!button || !trace) return;
    var show = open === undefined ? trace.hidden : open;
    trace.hidden = !show;
    button.setAttribute("aria-expanded", show ? "true" : "false");
  }

  // One listener on the document, so rows a page swaps in later (the viewer's pages of trials)
  // open as the first ones do.
  document.addEventListener("click", function (event) {
    var target = event.target;
    if (!(target instanceof Element) || !target.closest("table.cases")) return;
    var link = target.closest("td.row-number a");
    if (link) {
      // The link also changes the address (hashchange opens it); open it even when the
      // address already names it.
      toggle(link.closest("tbody.trial"), true);
      return;
    }
    var hit = target.closest("button.open-trace") || target.closest("td.case-id");
    if (!hit) return;
    var body = hit.closest("tbody.trial");
    if (body) toggle(body);
  });

  // #trace-N in the address opens the trace of the row numbered N (rows count from 1, as the
  // # column shows them), on load and whenever the address changes.
  function openFromAddress() {
    var match = /^#trace-(\d+)$/.exec(window.location.hash);
    var trace = match && document.getElementById("trace-" + match[1]);
    var body = trace && trace.closest("tbody.trial");
    if (body) {
      toggle(body, true);
      body.scrollIntoView();
    }
  }
  window.addEventListener("hashchange", openFromAddress);
  openFromAddress();
})();
