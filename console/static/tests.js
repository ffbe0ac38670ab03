// The agent test editor: rows of criteria and mocks added and removed, each criterion
// showing the fields of its type, and the caller's fields those of its kind. Without
// this script every field shows and the form still posts.
(function () {
  "use strict";

  // showFor shows, within a criterion row, the fields its type takes.
  function showFor(row) {
    var sel = row.querySelector("[data-criterion-type]");
    if (!sel) return;
    row.querySelectorAll("[data-for]").forEach(function (f) {
      f.hidden = f.dataset.for.split(" ").indexOf(sel.value) < 0;
    });
  }

  function showCaller(form) {
    var sel = form.querySelector("[data-caller]");
    if (!sel) return;
    form.querySelectorAll("[data-caller-is]").forEach(function (f) {
      f.hidden = f.dataset.callerIs !== sel.value;
    });
  }

  document.addEventListener("click", function (e) {
    var add = e.target.closest("[data-add-row]");
    if (add) {
      var name = add.dataset.addRow;
      var tpl = document.querySelector('template[data-row-template="' + name + '"]');
      var list = document.querySelector('[data-rows="' + name + '"]');
      var row = tpl.content.firstElementChild.cloneNode(true);
      list.appendChild(row);
      showFor(row);
      var first = row.querySelector("input, select, textarea");
      if (first) first.focus();
      return;
    }
    var remove = e.target.closest("[data-remove-row]");
    if (remove) remove.closest("[data-row]").remove();
  });

  document.addEventListener("change", function (e) {
    if (e.target.matches("[data-criterion-type]")) showFor(e.target.closest("[data-row]"));
    if (e.target.matches("[data-caller]")) showCaller(e.target.form);
  });

  function init() {
    document.querySelectorAll("[data-criterion]").forEach(showFor);
    var form = document.getElementById("test-form");
    if (form) showCaller(form);
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
