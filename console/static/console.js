// voiceapi console: the agent editor (JSON to the REST API), provider and tool-type
// switches, repeatable lists, copy buttons. No inline script: the page's CSP forbids it.
(function () {
  "use strict";

  function csrf() {
    var m = document.querySelector('meta[name="csrf-token"]');
    return m ? m.content : "";
  }

  // Sections that belong to another provider or tool type are hidden, and left out of
  // the JSON the editor sends. When the user switches provider, the fields of the new
  // provider's sections start empty: a field two providers share (a voice id) must not
  // carry the old provider's value over, which the API would take as given. Switching
  // back to the stored provider brings its stored values back.
  function applySwitch(sel, byUser) {
    var scope = sel.closest("[data-scope]");
    if (!scope) return;
    scope.querySelectorAll('[data-case="' + sel.dataset.switch + '"]').forEach(function (sec) {
      if (sec.closest("[data-scope]") !== scope) return;
      sec.hidden = sec.dataset.is.split(" ").indexOf(sel.value) < 0;
      if (!byUser || sec.hidden || sel.dataset.stored === undefined) return;
      var back = sel.value === sel.dataset.stored;
      sec.querySelectorAll("input[data-key], select[data-key]").forEach(function (f) {
        if (f.closest("[data-case]") !== sec || f.dataset.kind === "secret") return;
        if (f.type === "checkbox") return;
        f.value = back ? (f.dataset.initial || "") : (f.tagName === "SELECT" ? f.options[0].value : "");
        f.dispatchEvent(new Event("input", { bubbles: true }));
      });
    });
  }
  function applySwitches(root) {
    root.querySelectorAll("select[data-switch]").forEach(applySwitch);
  }

  // Numbers in the JSON a form holds (a textarea's object, a tool's stored members) keep
  // their text: JSON.parse makes 12345678901234567890 a double, and a save would send
  // 12345678901234567000 back. parseExact reads each number as a marker string holding
  // its place, and stringifyExact writes the number's text where its marker is. With
  // inexactOnly, only a number a double would not give back as written
  // (12345678901234567890, 0.10) is held so; the others stay numbers to compute with (the
  // Try it panel's answers: a tool call's arguments beside latencies and scores).
  var numberMark = "\u0000number" + Math.random().toString(36).slice(2) + ":";
  var heldNumbers = [];
  var jsonNumber = /-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?/y;
  function parseExact(text, inexactOnly) {
    var out = "", i = 0;
    while (i < text.length) {
      var c = text[i];
      jsonNumber.lastIndex = i;
      var m = (c === "-" || (c >= "0" && c <= "9")) && jsonNumber.exec(text);
      if (c === '"') {
        var j = i + 1;
        while (j < text.length && text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
        out += text.slice(i, j + 1);
        i = j + 1;
      } else if (m && inexactOnly && String(Number(m[0])) === m[0]) {
        out += m[0];
        i += m[0].length;
      } else if (m) {
        heldNumbers.push(m[0]);
        out += JSON.stringify(numberMark + (heldNumbers.length - 1));
        i += m[0].length;
      } else {
        out += c;
        i++;
      }
    }
    return JSON.parse(out);
  }
  function stringifyExact(v) {
    var mark = JSON.stringify(numberMark).slice(1, -1).replace(/[\\^$.*+?()[\]{}|]/g, "\\$&");
    var text = JSON.stringify(v);
    if (text === undefined) return text; // undefined, a function: nothing to write
    return text.replace(new RegExp('"' + mark + '([0-9]+)"', "g"), function (_, k) {
      return heldNumbers[+k];
    });
  }
  window.voiceapiJSON = { parseExact: parseExact, stringifyExact: stringifyExact };

  // value reads one input by its kind; undefined leaves the field out (the stored value
  // stays).
  function value(el) {
    var v = el.value, k = el.dataset.kind;
    switch (k) {
      case "checks": // a fieldset of checkboxes: the values checked
        return Array.prototype.map.call(el.querySelectorAll('input[type="checkbox"]:checked'), function (b) { return b.value; });
      case "bool": return el.checked;
      case "int": return v.trim() === "" ? undefined : Number(v);
      case "float": return v.trim() === "" ? undefined : Number(v);
      case "nfloat": return v.trim() === "" ? null : Number(v);
      case "nint": return v.trim() === "" ? null : Number(v);
      // A JSON object; text that is not JSON goes as it is, and the API names the field.
      case "json":
        if (v.trim() === "") return {};
        try { return parseExact(v); } catch (e) { return v; }
      case "nstr": return v === "" ? null : v;
      case "list": return v.split(",").map(function (s) { return s.trim(); }).filter(Boolean);
      case "secret":
        if (v === el.dataset.orig) return undefined; // untouched: the masked value is kept
        return v === "" ? null : v;
      default: return v;
    }
  }

  // walk builds the JSON of el's descendants into target, naming each input's dot path
  // (data-path) on the way so that a 422's messages find their fields.
  function walk(el, target, path) {
    Array.prototype.forEach.call(el.children, function (c) {
      if (c.tagName === "TEMPLATE") return;
      if (c.hidden && c.dataset.case) {
        clear(c, target);
        return;
      }
      if (c.hidden) return;
      if (c.dataset.obj) {
        var o = target[c.dataset.obj] || (target[c.dataset.obj] = {});
        c.dataset.path = path + c.dataset.obj;
        walk(c, o, path + c.dataset.obj + ".");
      } else if (c.dataset.list) {
        var key = c.dataset.list, arr = [];
        c.dataset.path = path + key;
        target[key] = arr;
        items(c).forEach(function (it, i) {
          var base = it.dataset.base ? parseExact(it.dataset.base) : {};
          dropHidden(it, base);
          arr.push(base);
          it.dataset.path = path + key + "." + i;
          walk(it, base, path + key + "." + i + ".");
        });
      } else if (c.dataset.key) {
        c.dataset.path = path + c.dataset.key;
        var v = value(c);
        if (v !== undefined) target[c.dataset.key] = v;
      } else {
        walk(c, target, path);
      }
    });
  }
  // clear empties the fields of another provider's section, so that what the stored
  // group holds for the old provider does not outlive the switch (a PUT merges the given
  // fields into the stored group): nullable fields become null, plain strings "", unless
  // the chosen provider's section gives the same field. Numbers that take no null are
  // left for the API to judge.
  function clear(sec, target) {
    sec.querySelectorAll("[data-key]").forEach(function (c) {
      // Only the section's own fields: not those of a list or section inside it.
      var list = c.closest("[data-list]");
      if (c.closest("[data-case]") !== sec || (list && sec.contains(list))) return;
      var k = c.dataset.key, kind = c.dataset.kind;
      if (kind === "nstr" || kind === "nfloat") {
        if (!(k in target)) target[k] = null;
      } else if (kind === "str") {
        if (!(k in target)) target[k] = "";
      }
    });
  }

  // dropHidden removes from an item's stored base the fields of its hidden sections (a
  // tool's former type): an item is sent whole, so what the old type held would outlive
  // the change. The visible sections then write their own fields.
  function dropHidden(item, base) {
    item.querySelectorAll("[data-case]").forEach(function (sec) {
      if (!sec.hidden || sec.closest("[data-item]") !== item) return;
      sec.querySelectorAll("[data-key],[data-list]").forEach(function (c) {
        if (c.closest("[data-item]") !== item) return; // a field of a nested item
        delete base[c.dataset.key || c.dataset.list];
      });
    });
  }

  function items(list) {
    return Array.prototype.filter.call(list.querySelectorAll("[data-item]"), function (it) {
      return it.closest("[data-list]") === list;
    });
  }

  function clearErrors(form) {
    form.querySelectorAll("[data-err]").forEach(function (p) { p.hidden = true; p.textContent = ""; });
    form.querySelectorAll("[aria-invalid], button[aria-describedby]").forEach(function (i) { i.removeAttribute("aria-invalid"); i.removeAttribute("aria-describedby"); });
  }

  // labelOf is the words of a field's label, without its hints.
  function labelOf(el) {
    var l = el.closest("label") || (el.matches("fieldset") && el.querySelector("legend"));
    if (!l) return "";
    var t = "";
    l.childNodes.forEach(function (n) { if (n.nodeType === 3) t += n.textContent; });
    return t.trim();
  }

  // named finds the field or list a dot path names on the form, with its words: a
  // field's label, a list's title.
  function named(form, path) {
    var el = form.querySelector('[data-path="' + CSS.escape(path) + '"]');
    if (!el) return null;
    var title = el.matches("[data-list]") && el.querySelector(".list-title");
    var l = el.matches("[data-key]") ? labelOf(el) : title ? title.textContent.trim() : "";
    return l ? { el: el, label: l } : null;
  }

  // relabel writes the form's words into the API's message about a field: "The
  // call_config.max_call_duration_ms field must be…" becomes "Max call duration (ms) must
  // be…", and a path it names besides, with a choice's value, reads as the form shows
  // them: "… required when llm_config.tools.0.type is transfer_call" becomes "… required
  // when “Type” is “Transfer call”".
  function relabel(form, path, msg) {
    var own = named(form, path);
    if (own) msg = msg.split("The " + path + " field").join(own.label);
    return msg.replace(/\b([a-z_]+(?:\.[a-z0-9_]+)+)( is ([a-z0-9_]+))?/g, function (m, p, is, v) {
      var other = named(form, p);
      if (!other) return m;
      var opt = v && other.el.matches("select") && Array.prototype.find.call(other.el.options, function (o) { return o.value === v; });
      return "“" + other.label + "”" + (opt ? " is “" + opt.textContent.trim() + "”" : is || "");
    });
  }

  var errSeq = 0;
  // showErrors puts each message beside the field its dot path names (or the nearest
  // enclosing item or group), all at once, and lists them all in the summary too. It
  // returns the first field in error, for the focus.
  function showErrors(form, errors, summary) {
    var ul = document.createElement("ul"), first = null;
    Object.keys(errors).sort().forEach(function (path) {
      var msgs = errors[path].map(function (m) { return relabel(form, path, m); });
      msgs.forEach(function (m) {
        var li = document.createElement("li");
        li.textContent = m;
        ul.appendChild(li);
      });
      var p = path, el = null;
      while (p && !el) {
        el = form.querySelector('[data-path="' + CSS.escape(p) + '"]');
        if (!el) p = p.indexOf(".") < 0 ? "" : p.slice(0, p.lastIndexOf("."));
      }
      if (!el) return;
      var slot = el.matches("[data-key]") ? el.closest(".field").querySelector("[data-err]") :
        Array.prototype.find.call(el.querySelectorAll("[data-err]"), function (e) {
          return e.closest(".field, [data-item], [data-list], [data-obj]") === el;
        });
      if (!slot) return;
      slot.id = slot.id || "err-" + (++errSeq);
      slot.textContent = (slot.textContent ? slot.textContent + " " : "") + msgs.join(" ");
      slot.hidden = false;
      if (el.matches("[data-key]")) {
        el.setAttribute("aria-invalid", "true");
        el.setAttribute("aria-describedby", slot.id);
      } else {
        // A list's or a group's message describes the control that adds to it, if any.
        var add = Array.prototype.find.call(el.querySelectorAll('button[data-action="add"]'), function (b) {
          return b.closest("[data-list], [data-item], [data-obj]") === el;
        });
        if (add) add.setAttribute("aria-describedby", slot.id);
      }
      if (!first || (first.compareDocumentPosition(el) & Node.DOCUMENT_POSITION_PRECEDING)) first = el;
    });
    summary.textContent = "";
    var h = document.createElement("p");
    h.textContent = "The agent was not saved:";
    summary.appendChild(h);
    summary.appendChild(ul);
    summary.hidden = false;
    return first;
  }

  // saved shows what the last save did beside the Save button, which stays in view.
  function saved(status, text, good) {
    status.textContent = text;
    status.className = "save-state" + (good === true ? " good" : good === false ? " bad" : "");
  }

  // showStatus updates the badge from the agent the API answered with: a save makes a
  // published agent a draft, and the badge must say so.
  function showStatus(agent) {
    var badge = document.getElementById("agent-status");
    if (!badge || !agent || !agent.status) return;
    badge.className = "badge " + agent.status;
    badge.textContent = agent.status === "published" ? "Published" : "Draft";
  }

  function saveAgent(form) {
    var status = document.getElementById("save-status");
    var summary = document.getElementById("save-errors");
    var body = {};
    walk(form, body, "");
    clearErrors(form);
    summary.hidden = true;
    saved(status, "Saving…");
    fetch("/api/v1/agents/" + encodeURIComponent(form.dataset.agentId), {
      method: "PUT",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "If-Match": form.dataset.etag, "X-CSRF-Token": csrf() },
      body: stringifyExact(body)
    }).then(function (res) {
      // An answer that is not the API's JSON (a proxy's error page) is told by its status.
      return res.json().then(function (j) { return { res: res, j: j }; }, function () { return { res: res, j: {} }; });
    }, function () {
      // Not sent, or no answer came: the browser's "Failed to fetch" told nothing.
      saved(status, "Not saved: the save did not reach the server.", false);
      summary.textContent = window.voiceapiUnreached("The save", "nothing was saved", "Check the connection and save again.");
      summary.hidden = false;
      summary.focus();
    }).then(function (x) {
      if (!x) return;
      if (x.res.ok) {
        form.dataset.etag = x.res.headers.get("ETag") || form.dataset.etag;
        var key = form.querySelector('[data-kind="secret"]');
        if (key && x.j.data && x.j.data.llm_config) {
          key.value = key.dataset.orig = x.j.data.llm_config.api_key || "";
        }
        showStatus(x.j.data);
        saved(status, "Saved.", true);
        return;
      }
      if (x.res.status === 412) {
        saved(status, "Not saved: someone else saved first.", false);
        summary.textContent = "";
        var p = document.createElement("p");
        p.textContent = "Someone else saved this agent after you opened it. Reload to see their changes (yours are not saved).";
        var b = document.createElement("button");
        b.type = "button";
        b.textContent = "Reload";
        b.addEventListener("click", function () { location.reload(); });
        summary.appendChild(p);
        summary.appendChild(b);
        summary.hidden = false;
        summary.focus();
        return;
      }
      if (x.res.status === 422 && x.j.errors) {
        var n = Object.keys(x.j.errors).length;
        saved(status, "Not saved: " + n + (n === 1 ? " field needs" : " fields need") + " a change.", false);
        var first = showErrors(form, x.j.errors, summary);
        if (first) {
          first.scrollIntoView({ block: "center" });
          (first.matches("[data-key]") ? first : first.querySelector("input, select, textarea") || first).focus({ preventScroll: true });
        }
        return;
      }
      saved(status, "Not saved: " + (x.j.message || ("error " + x.res.status)), false);
      summary.textContent = x.j.message || ("Error " + x.res.status);
      summary.hidden = false;
      summary.focus();
    });
  }

  document.addEventListener("change", function (e) {
    if (e.target.matches("select[data-switch]")) applySwitch(e.target, true);
  });

  document.addEventListener("click", function (e) {
    var b = e.target.closest("button[data-action], button[data-copy]");
    if (!b) return;
    if (b.dataset.copy) {
      var src = document.getElementById(b.dataset.copy);
      src.select();
      (navigator.clipboard ? navigator.clipboard.writeText(src.value) : Promise.reject()).then(
        function () { b.textContent = "Copied"; },
        function () { document.execCommand("copy"); b.textContent = "Copied"; });
      return;
    }
    var list = b.closest("[data-list]"), item = b.closest("[data-item]");
    switch (b.dataset.action) {
      case "add":
        var tpl = Array.prototype.find.call(list.children, function (c) { return c.tagName === "TEMPLATE"; });
        var node = tpl.content.firstElementChild.cloneNode(true);
        list.querySelector(".items").appendChild(node);
        applySwitches(node);
        var first = node.querySelector("input, select, textarea");
        if (first) first.focus();
        break;
      case "remove":
        item.remove();
        break;
      case "up":
        if (item.previousElementSibling) item.parentNode.insertBefore(item, item.previousElementSibling);
        b.focus();
        break;
      case "down":
        if (item.nextElementSibling) item.parentNode.insertBefore(item.nextElementSibling, item);
        b.focus();
        break;
    }
  });

  document.addEventListener("submit", function (e) {
    if (e.target.id === "agent-form") {
      e.preventDefault();
      saveAgent(e.target);
    }
  });

  document.addEventListener("DOMContentLoaded", function () { applySwitches(document); });
})();

// Knowledge base uploads: each file is its own multipart request to the REST API, so that
// each has its own progress bar and its own answer.
(function () {
  "use strict";
  function csrf() {
    var m = document.querySelector('meta[name="csrf-token"]');
    return m ? m.content : "";
  }
  function upload(zone, file) {
    var li = document.createElement("li");
    var name = document.createElement("span");
    name.textContent = file.name;
    var bar = document.createElement("progress");
    bar.max = 100;
    bar.value = 0;
    bar.setAttribute("aria-label", "Upload of " + file.name);
    var state = document.createElement("span");
    state.className = "upload-state";
    state.textContent = "uploading";
    li.appendChild(name);
    li.appendChild(bar);
    li.appendChild(state);
    zone.querySelector(".uploads").appendChild(li);
    var fd = new FormData();
    fd.append("files", file, file.name);
    var xhr = new XMLHttpRequest();
    xhr.open("POST", zone.dataset.upload);
    xhr.setRequestHeader("X-CSRF-Token", csrf());
    xhr.upload.addEventListener("progress", function (e) {
      if (e.lengthComputable) bar.value = Math.round(100 * e.loaded / e.total);
    });
    xhr.addEventListener("load", function () {
      bar.value = 100;
      if (xhr.status >= 200 && xhr.status < 300) {
        state.textContent = "uploaded";
      } else {
        var msg = "failed";
        try { msg = JSON.parse(xhr.responseText).message || msg; } catch (e) { /* not JSON */ }
        state.textContent = msg;
        state.className = "upload-state err-text";
      }
      if (window.htmx) window.htmx.ajax("GET", zone.dataset.refresh, { target: "#sources", swap: "outerHTML" });
    });
    xhr.addEventListener("error", function () {
      state.textContent = window.voiceapiUnreached("The file", "it was not added", "Drop it again.");
      state.className = "upload-state err-text";
    });
    xhr.send(fd);
  }
  function files(zone, list) {
    Array.prototype.forEach.call(list, function (f) { upload(zone, f); });
  }
  document.addEventListener("change", function (e) {
    var zone = e.target.closest(".drop[data-upload]");
    if (zone && e.target.type === "file") {
      files(zone, e.target.files);
      e.target.value = "";
    }
  });
  ["dragenter", "dragover"].forEach(function (t) {
    document.addEventListener(t, function (e) {
      var zone = e.target.closest && e.target.closest(".drop[data-upload]");
      if (!zone) return;
      e.preventDefault();
      zone.classList.add("over");
    });
  });
  document.addEventListener("dragleave", function (e) {
    var zone = e.target.closest && e.target.closest(".drop[data-upload]");
    if (zone) zone.classList.remove("over");
  });
  // The knowledge base picker's More (agent.html "kbpick") reads the next page of the
  // list as the signed-in user and adds its knowledge bases, unchecked, to the picker.
  document.addEventListener("click", function (e) {
    var more = e.target.closest && e.target.closest("button[data-kb-more]");
    if (!more) return;
    var set = more.closest("fieldset"), line = more.closest("p");
    more.disabled = true;
    fetch("/api/v1/knowledge-bases?per_page=100&cursor=" + encodeURIComponent(more.dataset.kbMore), { credentials: "same-origin" })
      .then(function (res) { if (!res.ok) throw new Error(res.status); return res.json(); })
      .then(function (body) {
        var first = null;
        body.data.forEach(function (kb) {
          if (set.querySelector('input[type="checkbox"][value="' + CSS.escape(kb.id) + '"]')) return; // chosen, shown already
          var label = document.createElement("label"), box = document.createElement("input");
          label.className = "check";
          box.type = "checkbox";
          box.value = kb.id;
          label.append(box, " " + kb.name);
          set.insertBefore(label, line);
          first = first || box;
        });
        if (body.meta && body.meta.next_cursor) {
          more.dataset.kbMore = body.meta.next_cursor;
          more.disabled = false;
        } else {
          line.remove();
        }
        if (first) first.focus(); // the keyboard goes on among the ones added
      }, function (err) {
        more.disabled = false;
        line.append(" " + (err instanceof TypeError ? window.voiceapiUnreached("The request", "no more knowledge bases were shown", "Press More again.")
          : "More knowledge bases could not be read (" + err.message + "): reload the page."));
      });
  });
  document.addEventListener("drop", function (e) {
    var zone = e.target.closest && e.target.closest(".drop[data-upload]");
    if (!zone) return;
    e.preventDefault();
    zone.classList.remove("over");
    files(zone, e.dataTransfer.files);
  });
})();
