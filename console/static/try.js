// The agent page's "Try it" panel: a conversation with the agent through the REST API
// (conventions §21), its replies read as a stream of Server-Sent Events from fetch. The
// panel arrives as a fragment (htmx), so every handler is delegated from the document.
(function () {
  "use strict";

  function csrf() {
    var m = document.querySelector('meta[name="csrf-token"]');
    return m ? m.content : "";
  }

  function api(method, path, body, accept, idempotencyKey) {
    var headers = { "X-CSRF-Token": csrf(), "Accept": accept || "application/json" };
    if (body !== undefined) headers["Content-Type"] = "application/json";
    if (idempotencyKey) headers["Idempotency-Key"] = idempotencyKey;
    return fetch(path, { method: method, credentials: "same-origin", headers: headers,
      body: body === undefined ? undefined : JSON.stringify(body) });
  }

  // failure reads an error answer (the API's error shape) into a message.
  function failure(res) {
    return res.json().then(function (j) { return j.message || ("HTTP " + res.status); },
      function () { return "HTTP " + res.status; });
  }

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  // parseFrame reads an answer (a frame, a body) keeping a number a double cannot hold as
  // written (a tool call's argument 12345678901234567890) as its text, in every browser:
  // console.js's parseExact holds it, and showJSON writes it back as written. The API's
  // own numbers (latencies, scores) stay numbers.
  function parseFrame(text) { return window.voiceapiJSON.parseExact(text, true); }
  function showJSON(v) { return window.voiceapiJSON.stringifyExact(v); }

  function panelOf(node) { return node.closest("[data-try]"); }

  function showError(panel, msg) {
    var p = panel.querySelector("[data-try-error]");
    p.textContent = msg || "";
    p.hidden = !msg;
  }

  function log(panel) { return panel.querySelector("[data-try-log]"); }

  // bubble adds a message of role to the log and returns its text element.
  function bubble(panel, role, text) {
    var li = el("li", "try-item try-" + role);
    li.dataset.role = role;
    li.appendChild(el("span", "try-who", role === "user" ? "You" : "Agent"));
    var t = el("span", "try-text", text || "");
    li.appendChild(t);
    log(panel).appendChild(li);
    li.scrollIntoView({ block: "nearest" });
    return t;
  }

  function toolItem(panel, item) {
    var tc = item.tool_call || {};
    var li = el("li", "try-item try-tool" + (tc.error ? " try-tool-error" : ""));
    li.dataset.role = "tool";
    li.appendChild(el("span", "try-who", "Tool"));
    var d = el("details", "try-tool-call");
    d.open = true;
    d.appendChild(el("summary", null, tc.name + (tc.error ? " (error)" : "")));
    d.appendChild(el("pre", "try-args", "arguments: " + showJSON(tc.arguments)));
    d.appendChild(el("pre", "try-result", "result: " + showJSON(tc.result)));
    li.appendChild(d);
    log(panel).appendChild(li);
  }

  // finishAgent completes an agent bubble: its text, the knowledge it retrieved, its latency.
  function finishAgent(panel, text, item) {
    if (!item.content && !(item.knowledge && item.knowledge.length)) {
      var li = text && text.parentNode;
      if (li && !text.textContent) li.remove(); // a reply that only called tools
      return;
    }
    if (!text) text = bubble(panel, "agent", "");
    text.textContent = item.content;
    var li2 = text.parentNode;
    if (item.knowledge && item.knowledge.length) {
      var k = el("details", "try-knowledge");
      k.appendChild(el("summary", null, "Knowledge retrieved (" + item.knowledge.length + ")"));
      var ul = el("ul");
      item.knowledge.forEach(function (c) {
        ul.appendChild(el("li", "try-chunk", "[" + c.score.toFixed(2) + "] " + c.text));
      });
      k.appendChild(ul);
      li2.appendChild(k);
    }
    if (item.latency_ms) {
      li2.appendChild(el("span", "try-latency", item.latency_ms.first_token + " ms to the first token, " + item.latency_ms.total + " ms in all"));
    }
  }

  function render(panel, items) {
    items.forEach(function (it) {
      if (it.role === "user") bubble(panel, "user", it.content);
      else if (it.role === "tool") toolItem(panel, it);
      else finishAgent(panel, null, it);
    });
  }

  function ended(panel, callID, reason) {
    var chat = panel.querySelector("[data-try-chat]");
    chat.querySelector("[data-try-send]").hidden = true;
    var r = panel.querySelector("[data-try-result]");
    var names = JSON.parse(panel.dataset.endReasons || "{}");
    r.textContent = "The conversation ended (" + (names[reason] || reason) + "). ";
    var a = el("a", null, "Open the call");
    a.href = "/calls/" + encodeURIComponent(callID);
    r.appendChild(a);
    r.hidden = false;
  }

  function start(form) {
    var panel = panelOf(form);
    var choice = form.querySelector('input[name="version"]:checked');
    var body = { version: choice ? choice.value : "live", variables: {} };
    form.querySelectorAll("[data-try-var]").forEach(function (i) {
      if (i.value !== "") body.variables[i.dataset.tryVar] = i.value;
    });
    showError(panel, "");
    api("POST", "/api/v1/agents/" + encodeURIComponent(panel.dataset.agentId) + "/conversations", body).then(function (res) {
      if (!res.ok) return failure(res).then(function (m) { showError(panel, m); });
      return res.text().then(parseFrame).then(function (j) { openConversation(panel, j.data); });
    }, function () { showError(panel, window.voiceapiUnreached("The request", "no conversation was started", "Press Start again.")); });
  }

  // openConversation shows conversation c (started, or resumed) in the panel with its
  // messages so far, ready for the next message.
  function openConversation(panel, c) {
    panel.dataset.conversation = c.id;
    panel.querySelector("[data-try-start]").hidden = true;
    panel.querySelector("[data-try-result]").hidden = true;
    log(panel).textContent = "";
    var chat = panel.querySelector("[data-try-chat]");
    chat.hidden = false;
    chat.querySelector("[data-try-send]").hidden = false;
    render(panel, c.messages);
    panel.querySelector("[data-try-input]").focus();
  }

  // resume reads an active conversation (of the list, or named by the page's ?resume=),
  // with its messages, into the panel.
  function resume(panel, id) {
    showError(panel, "");
    api("GET", "/api/v1/conversations/" + encodeURIComponent(id)).then(function (res) {
      if (!res.ok) return failure(res).then(function (m) { showError(panel, m); });
      return res.text().then(parseFrame).then(function (j) {
        if (j.data.agent_id !== panel.dataset.agentId) {
          // A ?resume= edited by hand: the conversation runs another agent's configuration,
          // which this panel (its versions, its variables) does not describe.
          showError(panel, "This conversation is with another agent. ");
          var a = el("a", null, "Resume it on its agent's page");
          a.href = "/agents/" + encodeURIComponent(j.data.agent_id) + "?resume=" + encodeURIComponent(id) + "#try";
          panel.querySelector("[data-try-error]").appendChild(a);
          return;
        }
        if (j.data.status !== "active") { showError(panel, "This conversation has ended: its call is in the call history."); return; }
        // The API answers a message to a draft's conversation only to who may talk to
        // drafts, for whom the panel offers the draft.
        if (j.data.agent_version === null && !panel.querySelector('input[name="version"][value="draft"]')) {
          showError(panel, "This conversation is with the agent's draft, which your role may not talk to.");
          return;
        }
        openConversation(panel, j.data);
      });
    }, function () { showError(panel, window.voiceapiUnreached("The request", "the conversation was not opened", "Press Resume again.")); });
  }

  // readStream calls onFrame(event, data) for each Server-Sent Event of a response body.
  function readStream(res, onFrame) {
    var reader = res.body.getReader();
    var decoder = new TextDecoder();
    var buf = "";
    function pump() {
      return reader.read().then(function (r) {
        if (r.done) return;
        buf += decoder.decode(r.value, { stream: true });
        var i;
        while ((i = buf.indexOf("\n\n")) >= 0) {
          var block = buf.slice(0, i);
          buf = buf.slice(i + 2);
          var ev = "", dataLines = [];
          block.split("\n").forEach(function (line) {
            if (line.indexOf("event: ") === 0) ev = line.slice(7);
            else if (line.indexOf("data: ") === 0) dataLines.push(line.slice(6));
          });
          if (dataLines.length) onFrame(ev, parseFrame(dataLines.join("\n")));
        }
        return pump();
      });
    }
    return pump();
  }

  // messageKey is the Idempotency-Key of the message content: the same while that content
  // is sent again after its reply was cut off, so the server answers the resend with the
  // first reply (when it was stored) instead of making a second turn; a reply read to its
  // end clears it, so the same words sent later are a new message.
  function messageKey(form, content) {
    if (!form.dataset.key || form.dataset.keyFor !== content) {
      var b = new Uint8Array(16);
      crypto.getRandomValues(b); // randomUUID needs a secure context; a LAN console may not be one
      form.dataset.key = Array.prototype.map.call(b, function (x) { return (x + 256).toString(16).slice(1); }).join("");
      form.dataset.keyFor = content;
    }
    return form.dataset.key;
  }

  function send(form) {
    var panel = panelOf(form);
    var input = form.querySelector("[data-try-input]");
    var content = input.value;
    if (!content.trim()) return;
    var button = form.querySelector('button[type="submit"]');
    button.disabled = true;
    showError(panel, "");
    var current = null; // the agent bubble being written
    var shown = log(panel).children.length; // the items before this reply's
    var path = "/api/v1/conversations/" + encodeURIComponent(panel.dataset.conversation) + "/messages";
    api("POST", path, { content: content }, "text/event-stream", messageKey(form, content)).then(function (res) {
      if (!res.ok) return failure(res).then(function (m) { showError(panel, m); });
      input.value = "";
      return readStream(res, function (ev, d) {
        if (ev === "delta") {
          if (!current) current = bubble(panel, "agent", "");
          current.textContent += d.text;
        } else if (ev === "item") {
          if (d.role === "user") bubble(panel, "user", d.content);
          else if (d.role === "tool") toolItem(panel, d);
          else { finishAgent(panel, current, d); current = null; }
        } else if (ev === "done") {
          delete form.dataset.key;
          if (d.data.status === "ended") ended(panel, d.data.call_id, d.data.disconnection_reason);
        } else if (ev === "error") {
          showError(panel, d.message);
        }
      });
    }).catch(function () {
      // What came of the reply goes, and the message comes back under its key: sending it
      // again shows the whole reply once, whether or not the server had stored it.
      var items = log(panel).children;
      while (items.length > shown) items[items.length - 1].remove();
      input.value = content;
      showError(panel, "The reply was cut off. Send the message again to see it.");
    }).then(function () { button.disabled = false; });
  }

  function end(button) {
    var panel = panelOf(button);
    showError(panel, "");
    api("POST", "/api/v1/conversations/" + encodeURIComponent(panel.dataset.conversation) + "/end").then(function (res) {
      if (!res.ok) return failure(res).then(function (m) { showError(panel, m); });
      return res.json().then(function (j) { ended(panel, j.data.id, j.data.disconnection_reason); });
    }, function () { showError(panel, window.voiceapiUnreached("The request", "the conversation is still open", "Press End again.")); });
  }

  document.addEventListener("submit", function (e) {
    var f = e.target;
    if (f.matches("[data-try-start]")) { e.preventDefault(); start(f); }
    else if (f.matches("[data-try-send]")) { e.preventDefault(); send(f); }
  });
  document.addEventListener("click", function (e) {
    var b = e.target.closest("[data-try-end]");
    if (b) { e.preventDefault(); end(b); return; }
    var r = e.target.closest("[data-try-resume]");
    if (r) { e.preventDefault(); resume(panelOf(r), r.dataset.tryResume); }
  });
  // The conversations page links an active conversation to its agent's page with
  // ?resume=ID: once the panel has loaded, that conversation opens in it (once per page
  // load, so a panel loaded again starts afresh).
  var resumeOnLoad = new URLSearchParams(window.location.search).get("resume");
  document.addEventListener("htmx:load", function (e) {
    if (!resumeOnLoad || !e.target.querySelector) return;
    var panel = e.target.matches("[data-try]") ? e.target : e.target.querySelector("[data-try]");
    if (!panel) return;
    var id = resumeOnLoad;
    resumeOnLoad = "";
    resume(panel, id);
  });
})();
