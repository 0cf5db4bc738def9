// agenteval run report: filtering and sorting the case table (trace.js opens the traces). Data
// comes from the JSON block #trials-data; nothing here writes HTML from data (textContent and
// attributes only).
(function () {
  "use strict";
  var rows = JSON.parse(document.getElementById("trials-data").textContent);
  var table = document.getElementById("case-table");
  var bodies = {};
  Array.prototype.forEach.call(table.querySelectorAll("tbody.trial"), function (body) {
    bodies[body.getAttribute("data-i")] = body;
  });

  function control(id) { return document.getElementById(id); }
  var text = control("f-text"), status = control("f-status"), scorer = control("f-scorer");
  var tag = control("f-tag"), flaky = control("f-flaky"), count = control("f-count");
  var noMatch = control("no-match");

  function matches(row) {
    var q = text.value.trim().toLowerCase();
    if (q && row.text.indexOf(q) === -1 && row.case.toLowerCase().indexOf(q) === -1) return false;
    if (status.value && row.status !== status.value) return false;
    if (scorer.value && row.failing.indexOf(scorer.value) === -1) return false;
    if (tag && tag.value && row.tags.indexOf(tag.value) === -1) return false;
    if (flaky && flaky.checked && !row.flaky) return false;
    return true;
  }

  function applyFilters() {
    var shown = 0;
    rows.forEach(function (row) {
      var visible = matches(row);
      bodies[row.i].hidden = !visible;
      if (visible) shown += 1;
    });
    count.textContent = shown + " of " + rows.length + " trials";
    noMatch.hidden = shown !== 0;
  }

  [text, status, scorer, tag, flaky].forEach(function (el) {
    if (!el) return;
    el.addEventListener(el === text ? "input" : "change", applyFilters);
  });
  control("f-reset").addEventListener("click", function () {
    text.value = ""; status.value = ""; scorer.value = "";
    if (tag) tag.value = "";
    if (flaky) flaky.checked = false;
    applyFilters();
  });

  var STATUS_ORDER = { error: 0, fail: 1, unscored: 2, pass: 3 };
  function key(row, field) {
    switch (field) {
      case "status": return STATUS_ORDER[row.status];
      case "failing": return row.failing.length;
      case "case": return row.case;
      default: return row[field];
    }
  }
  function compare(a, b, field, dir) {
    var x = key(a, field), y = key(b, field);
    // Missing values (no latency, no price) sort last whichever the direction.
    if (x === null || x === undefined) return (y === null || y === undefined) ? a.i - b.i : 1;
    if (y === null || y === undefined) return -1;
    // Strings by code unit, not localeCompare: the same order in every browser and locale,
    // and the viewer's (which sorts on the server).
    var order = typeof x === "string" ? (x < y ? -1 : x > y ? 1 : 0) : x - y;
    return (order || (a.i - b.i) * dir) * dir;
  }
  Array.prototype.forEach.call(table.querySelectorAll("button.sort"), function (button) {
    button.addEventListener("click", function () {
      var field = button.getAttribute("data-sort");
      var dir = button.getAttribute("data-dir") === "asc" ? -1 : 1;
      Array.prototype.forEach.call(table.querySelectorAll("button.sort"), function (other) {
        other.removeAttribute("data-dir");
        other.parentNode.removeAttribute("aria-sort");
      });
      button.setAttribute("data-dir", dir === 1 ? "asc" : "desc");
      button.parentNode.setAttribute("aria-sort", dir === 1 ? "ascending" : "descending");
      var sorted = rows.slice().sort(function (a, b) { return compare(a, b, field, dir); });
      sorted.forEach(function (row) { table.appendChild(bodies[row.i]); });
    });
  });

  Array.prototype.forEach.call(document.querySelectorAll("[data-case-filter]"), function (button) {
    button.addEventListener("click", function () {
      text.value = button.getAttribute("data-case-filter");
      applyFilters();
      control("cases").scrollIntoView();
    });
  });

  applyFilters();
})();
