// agenteval view: the live parts of the viewer's pages. A page names what it polls in
// <body data-poll>; fragments it refreshes carry data-src. Only our own server's HTML (rendered
// and escaped there, as the report's) is placed in the page; data is written with textContent.
(function () {
  "use strict";
  var POLL_MS = 1500;

  function openAll(root) {
    Array.prototype.forEach.call(root.querySelectorAll("[data-open-traces] tr.trace"), function (row) {
      row.hidden = false;
      var button = row.closest("tbody.trial").querySelector("button.open-trace");
      if (button) button.setAttribute("aria-expanded", "true");
    });
  }
  openAll(document);

  // A flaky case named in a summary opens the run's table searched for it (the one-file
  // report filters its table in place; here the server filters).
  document.addEventListener("click", function (event) {
    var target = event.target;
    var button = target instanceof Element && target.closest("[data-case-filter]");
    if (!button) return;
    var query = "?q=" + encodeURIComponent(button.getAttribute("data-case-filter"));
    window.location.assign(window.location.pathname + query + "#cases");
  });

  var url = document.body.getAttribute("data-poll");
  if (!url) return;

  function get(address) {
    return fetch(address, { headers: { "Accept": "application/json, text/html" }, cache: "no-store" });
  }

  // The runs list: each row's live cells, and the page again when runs come or go.
  function pollRuns() {
    get(url).then(function (response) { return response.json(); }).then(function (runs) {
      var rows = {};
      Array.prototype.forEach.call(document.querySelectorAll("tr[data-run]"), function (row) {
        rows[row.getAttribute("data-run")] = row;
      });
      var busy = false;
      runs.forEach(function (run) {
        busy = busy || run.live || run.pending;
        var row = rows[run.run_id];
        if (!row) return;
        row.querySelector(".c-status .badge").textContent = run.status;
        row.querySelector(".c-done").textContent = run.done;
        row.querySelector(".c-rate").textContent = run.rate;
        row.querySelector(".c-cost").textContent = run.cost;
        row.querySelector(".c-duration").textContent = run.duration;
        row.classList.toggle("live", run.live);
      });
      var known = runs.filter(function (run) { return !rows[run.run_id]; }).length;
      if (known && !window.location.search) { window.location.reload(); return; }
      if (busy) window.setTimeout(pollRuns, POLL_MS);
    }).catch(function () { window.setTimeout(pollRuns, POLL_MS * 4); });
  }

  // A run page: its summary and case table again whenever the stored run changes.
  // The stamp the page was drawn at: a trial stored before the first poll still refreshes it.
  var lastStamp = document.body.getAttribute("data-stamp");
  function refresh(part) {
    var opened = Array.prototype.map.call(
      part.querySelectorAll("tr.trace:not([hidden])"), function (row) { return row.id; });
    return get(part.getAttribute("data-src")).then(function (response) {
      return response.text().then(function (text) {
        part.innerHTML = text;
        if (response.status === 202) part.setAttribute("data-pending", "1");
        else part.removeAttribute("data-pending");
        opened.forEach(function (id) {
          var row = document.getElementById(id);
          if (!row) return;
          row.hidden = false;
          var button = row.closest("tbody.trial").querySelector("button.open-trace");
          if (button) button.setAttribute("aria-expanded", "true");
        });
      });
    });
  }
  function pollRun() {
    get(url).then(function (response) {
      if (!response.ok) throw new Error(String(response.status));
      return response.json();
    }).then(function (progress) {
      var parts = document.querySelectorAll("[data-src]");
      var pending = document.querySelectorAll("[data-src][data-pending]").length > 0;
      var changed = lastStamp !== null && progress.stamp !== lastStamp;
      lastStamp = progress.stamp;
      var work = [];
      if (changed || (pending && (progress.summarized || progress.error))) {
        Array.prototype.forEach.call(parts, function (part) { work.push(refresh(part)); });
      }
      return Promise.all(work).then(function () {
        var live = progress.status === "running" || (!progress.summarized && !progress.error) ||
          document.querySelectorAll("[data-src][data-pending]").length > 0;
        document.body.classList.toggle("live", progress.status === "running");
        if (live) window.setTimeout(pollRun, POLL_MS);
      });
    }).catch(function () { window.setTimeout(pollRun, POLL_MS * 4); });
  }

  // A comparison being made: the page again when it is.
  function pollComparison() {
    get(url).then(function (response) { return response.json(); }).then(function (state) {
      if (state.ready) window.location.reload();
      else window.setTimeout(pollComparison, POLL_MS);
    }).catch(function () { window.setTimeout(pollComparison, POLL_MS * 4); });
  }

  if (url === "/api/runs") pollRuns();
  else if (url.indexOf("/api/compare/") === 0) pollComparison();
  else pollRun();
})();
