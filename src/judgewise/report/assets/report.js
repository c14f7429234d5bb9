// judgewise report: sortable tables and table-of-contents highlighting (no network, no libraries).
(function () {
  function cellValue(td) {
    var t = td.textContent.trim().replace(/,/g, "");
    var m = t.match(/^-?\d+(\.\d+)?(e[-+]?\d+)?/i);
    return m ? parseFloat(m[0]) : t.toLowerCase();
  }
  document.querySelectorAll("table.sortable").forEach(function (table) {
    table.querySelectorAll("th").forEach(function (th, col) {
      th.addEventListener("click", function () {
        var asc = th.getAttribute("aria-sort") !== "ascending";
        table.querySelectorAll("th").forEach(function (h) { h.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", asc ? "ascending" : "descending");
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (a, b) {
          var x = cellValue(a.cells[col]), y = cellValue(b.cells[col]);
          var c = (typeof x === typeof y) ? (x < y ? -1 : x > y ? 1 : 0) : (typeof x === "number" ? -1 : 1);
          return asc ? c : -c;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  });
  var links = document.querySelectorAll("nav.toc a");
  if ("IntersectionObserver" in window) {
    var obs = new IntersectionObserver(function (entries) {
      entries.forEach(function (e) {
        if (!e.isIntersecting) return;
        links.forEach(function (a) { a.classList.toggle("active", a.getAttribute("href") === "#" + e.target.id); });
      });
    }, { rootMargin: "0px 0px -70% 0px" });
    document.querySelectorAll("section.report").forEach(function (s) { obs.observe(s); });
  }
  document.documentElement.setAttribute("data-report-ready", "1");
})();
