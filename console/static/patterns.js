// voiceapi console: the shared patterns of every page (docs/dashboard.md, "Shared
// patterns"). Times in the browser's time zone, shown (with a relative form) and typed;
// select-all boxes for groups of checkboxes; durations beside millisecond fields; the
// reason a field's pattern refused it. Every page works without this script; it only
// makes what the server rendered easier to read and to fill in.
(function () {
  "use strict";

  var absolute = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });
  var full = new Intl.DateTimeFormat(undefined, { dateStyle: "full", timeStyle: "long" });
  var utcDay = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeZone: "UTC" });
  var relative = new Intl.RelativeTimeFormat(undefined, { numeric: "auto" });
  var units = [["year", 31536000], ["month", 2592000], ["week", 604800], ["day", 86400],
    ["hour", 3600], ["minute", 60]];

  // ago says how far t is from now in the largest unit that fits: "3 minutes ago",
  // "in 2 days", "now" within a minute.
  function ago(t, now) {
    var s = (t - now) / 1000, a = Math.abs(s);
    for (var i = 0; i < units.length; i++) {
      if (a >= units[i][1]) return relative.format(Math.round(s / units[i][1]), units[i][0]);
    }
    return relative.format(0, "second");
  }

  // showTime rewrites a <time data-when> the server wrote in UTC: recent times (within a
  // week) relative, older ones in the browser's time zone; the full local time is its
  // title. data-when="day" is a date the API means in UTC (an expiry): shown as that day.
  function showTime(el, now) {
    var t = new Date(el.getAttribute("datetime"));
    if (isNaN(t)) return;
    if (el.dataset.when === "day") {
      el.textContent = utcDay.format(t);
      el.title = ago(t, now);
      return;
    }
    el.textContent = Math.abs(now - t) < 7 * 86400 * 1000 ? ago(t, now) : absolute.format(t);
    el.title = full.format(t);
  }
  function showTimes(root) {
    var now = Date.now();
    root.querySelectorAll("time[data-when]").forEach(function (el) { showTime(el, now); });
  }

  // duration reads milliseconds as "3 min 30 s", as the server's duration does.
  function duration(ms) {
    if (!(ms >= 0)) return "";
    if (ms === 0) return "0 s";
    if (ms < 1000) return Math.round(ms) + " ms";
    var total = Math.round(ms / 1000), h = Math.floor(total / 3600), m = Math.floor(total % 3600 / 60), s = total % 60;
    var parts = [];
    if (h) parts.push(h + " h");
    if (m) parts.push(m + " min");
    if (s && !h) parts.push(s + " s");
    return parts.join(" ") || "0 s";
  }
  window.voiceapiDuration = duration;

  // A field with data-unit="ms" shows its value as a duration in the hint beside it.
  function showDuration(input) {
    var hint = input.parentNode.querySelector(".unit-hint");
    if (!hint) return;
    var v = input.value.trim();
    hint.textContent = v === "" || isNaN(Number(v)) ? "" : "= " + duration(Number(v));
  }

  // A fieldset with data-select-all has a box (data-all, hidden until this script runs)
  // that checks or clears every other box in it, and shows whether some are checked.
  function syncAll(group) {
    var all = group.querySelector("input[data-all]");
    if (!all) return;
    var boxes = Array.prototype.filter.call(group.querySelectorAll('input[type="checkbox"]'), function (b) { return b !== all; });
    var on = boxes.filter(function (b) { return b.checked; }).length;
    all.checked = on > 0 && on === boxes.length;
    all.indeterminate = on > 0 && on < boxes.length;
  }

  document.addEventListener("change", function (e) {
    var t = e.target;
    if (t.matches("input[data-all]")) {
      var group = t.closest("[data-select-all]");
      group.querySelectorAll('input[type="checkbox"]').forEach(function (b) {
        if (b !== t && !b.disabled) b.checked = t.checked;
      });
      // The groups inside a larger group follow too.
      group.querySelectorAll("[data-select-all]").forEach(syncAll);
    }
    var outer = t.closest("[data-select-all]");
    while (outer) {
      syncAll(outer);
      outer = outer.parentNode.closest("[data-select-all]");
    }
  });
  // A field refused by its pattern (a bound in characters or a shape, console/bounds.go)
  // says why in the words of its title, with the count of characters for a bound: the
  // browser's own message ("Please match the requested format") names neither. Without
  // this script the browser still refuses the field, and shows the title beside its message.
  function explainPattern(input) {
    input.setCustomValidity("");
    if (!input.validity.patternMismatch) return;
    var why = input.title;
    if (input.hasAttribute("data-chars")) why += ": this has " + Array.from(input.value).length;
    input.setCustomValidity(why + ".");
  }

  document.addEventListener("input", function (e) {
    if (e.target.matches('input[data-unit="ms"]')) showDuration(e.target);
    if (e.target.matches("input[pattern][title]")) explainPattern(e.target);
  });

  // Enter in a picker's search field (layout.html "pick") presses its Find button; in
  // another field of a form with pickers, the form's own button rather than the first
  // button of the form, which may be a picker's (without script the browser presses
  // that one: a Find that keeps every value typed).
  document.addEventListener("keydown", function (e) {
    var t = e.target;
    if (e.key !== "Enter" || e.defaultPrevented || !t.form || t.tagName !== "INPUT" ||
        /^(checkbox|radio|button|submit|reset|file|image)$/.test(t.type)) return;
    var find = t.getAttribute("data-pick-find");
    var b = find ? document.getElementById(find)
      : t.form.querySelector("[data-pick]") && t.form.querySelector('button:not([type]):not([data-pick]), button[type="submit"]:not([data-pick])');
    if (!b) return;
    e.preventDefault();
    b.click();
  });

  // A link to a section inside a closed <details> ("#add-number") opens it.
  // A picker's own address after its Find, Newer or More (layout.html "pick") focuses
  // its choices, to pick from.
  function openTarget() {
    var id = decodeURIComponent(location.hash.slice(1));
    var el = id && document.getElementById(id);
    var d = el && el.closest("details");
    if (d) d.open = true;
    if (el && el.matches(".pick > select")) el.focus();
  }
  window.addEventListener("hashchange", openTarget);

  // A page that answers a refused form shows the refusal beside the form, which may be far
  // down the page: it is brought into view, with the focus, as a screen reader expects.
  function showRefusal() {
    var alert = document.querySelector('main [role="alert"]:not([hidden])');
    if (!alert) return;
    alert.tabIndex = -1;
    alert.focus();
  }

  // A datetime-local field with data-utc holds a UTC time as the server wrote it (the
  // page works so without this script, its label saying "UTC"). It is shown in the
  // browser's time zone instead, and the form's hidden "tz" field tells the server which
  // zone the typed times are in, so that what the user types is read as they meant it.
  function pad(n) { return (n < 10 ? "0" : "") + n; }
  function localValue(d) {
    return d.getFullYear() + "-" + pad(d.getMonth() + 1) + "-" + pad(d.getDate()) + "T" + pad(d.getHours()) + ":" + pad(d.getMinutes());
  }
  function localZones(root) {
    var zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
    if (!zone) return;
    root.querySelectorAll("input[data-utc]").forEach(function (input) {
      var form = input.form, tz = form && form.querySelector('input[type="hidden"][name="tz"]');
      if (!tz || tz.value) return;
      form.querySelectorAll("input[data-utc]").forEach(function (f) {
        var t = new Date(f.value + ":00Z");
        if (f.value && !isNaN(t)) f.value = localValue(t);
      });
      form.querySelectorAll("[data-zone-label]").forEach(function (l) { l.textContent = zone; });
      tz.value = zone;
    });
  }

  // A field's message (layout.html's fielderr, data-for naming the field) describes the
  // field, which reads as invalid: a screen reader says what is wrong on reaching it.
  // A message written beside its field without fielderr (the test editor's) is tied to
  // the one control of its .field.
  var errSeq = 0;
  function fieldOf(p) {
    if (p.dataset.for) return document.getElementById(p.dataset.for);
    var box = p.closest(".field"), controls = box ? box.querySelectorAll("input, select, textarea") : [];
    if (controls.length !== 1) return null;
    p.id = p.id || "field-err-" + (++errSeq);
    return controls[0];
  }
  function tieErrors(root) {
    root.querySelectorAll(".err[data-for], .field .err:not([data-err]):not([role=alert])").forEach(function (p) {
      var field = fieldOf(p);
      if (!field) return;
      var ids = (field.getAttribute("aria-describedby") || "").split(/\s+/).filter(Boolean);
      if (ids.indexOf(p.id) < 0) ids.push(p.id);
      field.setAttribute("aria-describedby", ids.join(" "));
      if (field.matches("input, select, textarea")) field.setAttribute("aria-invalid", "true");
    });
  }

  function init(root) {
    showTimes(root);
    tieErrors(root);
    localZones(root);
    root.querySelectorAll("input[data-all]").forEach(function (b) { b.closest("label").hidden = false; });
    root.querySelectorAll("[data-select-all]").forEach(syncAll);
    root.querySelectorAll('input[data-unit="ms"]').forEach(showDuration);
    root.querySelectorAll("input[pattern][title]").forEach(explainPattern);
  }
  // currentSection scrolls the header's sections, one line on a phone or a tablet, to the
  // one shown.
  function currentSection() {
    var cur = document.querySelector('header.top nav [aria-current="page"]');
    if (!cur) return;
    var nav = cur.closest("nav"), n = nav.getBoundingClientRect(), r = cur.getBoundingClientRect();
    if (r.right > n.right) nav.scrollLeft += r.right - n.right + 16;
  }
  window.addEventListener("resize", currentSection); // a phone turned, a window narrowed
  // A section reached with the Tab key on a phone is scrolled wholly into its line, its
  // focus ring with it: the browser scrolls only one out of view, leaving one cut at the
  // line's edge mostly hidden.
  document.addEventListener("focusin", function (e) {
    if (e.target.matches("header.top nav a")) e.target.scrollIntoView({ block: "nearest", inline: "nearest" });
  });
  document.addEventListener("DOMContentLoaded", function () {
    init(document);
    currentSection();
    openTarget();
    showRefusal();
    setInterval(function () { showTimes(document); }, 30000);
  });
  // unreached says that a request did not reach the server, the same words in every
  // script (the browser's own, "Failed to fetch", tell a reader nothing): what did not
  // reach it ("The save"), what that left ("nothing was saved") and what to do ("Save
  // again."), the last two when there is something to say.
  function unreached(what, outcome, then) {
    return what + " did not reach the server" + (outcome ? ": " + outcome + "." : "") + (then ? " " + then : "");
  }
  window.voiceapiUnreached = unreached;
  // A fragment htmx fetches (a panel its page loads, a progress it follows) whose request
  // fails, answered with an error or not at all, would leave what was there: "Loading…"
  // for good, or figures that stopped moving with nothing to say so. A note says what
  // happened instead, in place of the panel's "Loading…" or above the progress, until a
  // later request succeeds (a progress is still asked for at its interval).
  function fragmentFailed(e) {
    var el = e.detail.elt, xhr = e.detail.xhr;
    if (!el || !el.id) return;
    var why = e.type === "htmx:responseError" ? "the server answered with an error (" + xhr.status + ")" : unreached("the request");
    var following = /\bevery\b/.test(el.getAttribute("hx-trigger") || "");
    var note = document.getElementById(el.id + "-failed");
    if (!note) {
      note = document.createElement("p");
      note.id = el.id + "-failed";
      note.className = "alert";
      note.setAttribute("role", "alert");
      var loading = el.querySelector("[data-loading]");
      if (loading) loading.replaceWith(note);
      else el.parentNode.insertBefore(note, el);
    }
    note.textContent = following ? "Not up to date: " + why + ". Trying again…" :
      "This part of the page did not load: " + why + ". Reload the page to try again.";
  }
  ["htmx:responseError", "htmx:sendError", "htmx:timeout"].forEach(function (t) { document.addEventListener(t, fragmentFailed); });
  // Before the swap: after it, an element swapped out (outerHTML) no longer hears events.
  document.addEventListener("htmx:beforeSwap", function (e) {
    var el = e.detail.elt, note = !e.detail.isError && el && el.id && document.getElementById(el.id + "-failed");
    if (note) note.remove();
  });
  // Fragments htmx swaps in (a knowledge base's sources) get the same treatment.
  document.addEventListener("htmx:afterSwap", function (e) { init(e.target); });
})();
