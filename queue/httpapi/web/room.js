// The waiting room page: join (or resume the ticket kept in localStorage),
// follow the status live over server-sent events (polling when they are not
// available), and go to the protected site when admitted. Every word it
// writes comes from i18n.js in the page's language.
(function () {
  "use strict";
  var room = document.getElementById("room");
  var q = room.dataset.queue;
  var title = room.dataset.title || q;
  var I = window.waitroomI18n;
  var t = I.t;
  var base = "/v1/queues/" + encodeURIComponent(q);
  var KEY = "waitroom:" + q + ":ticket";
  var START = "waitroom:" + q + ":start"; // people ahead when we first looked, for the progress bar
  var $ = function (id) { return document.getElementById(id); };

  var ticket = load(KEY);
  // joinKey is the Idempotency-Key of the join being tried: the same on every
  // retry, so a join whose answer was lost gives back its ticket, not a second one
  var joinKey = null;
  var source = null;
  var timer = null;
  var failures = 0;
  var done = false;

  function load(k) { try { return localStorage.getItem(k); } catch (e) { return null; } }
  function save(k, v) {
    try { if (v == null) localStorage.removeItem(k); else localStorage.setItem(k, v); } catch (e) { /* private mode */ }
  }
  function forget() { ticket = null; save(KEY, null); save(START, null); }
  // newKey is 32 random hex digits (a Math.random fallback where there is no crypto)
  function newKey() {
    var b = new Uint8Array(16);
    if (window.crypto && window.crypto.getRandomValues) window.crypto.getRandomValues(b);
    else for (var i = 0; i < b.length; i++) b[i] = Math.floor(Math.random() * 256);
    return Array.prototype.map.call(b, function (x) { return (x < 16 ? "0" : "") + x.toString(16); }).join("");
  }

  function setState(s) { room.dataset.state = s; }
  function setLive(mode, text) { room.dataset.live = mode; $("live").textContent = text; }
  function trouble(on, key) {
    $("trouble").hidden = !on;
    if (on) {
      $("trouble").textContent = t(key || "trouble");
      setLive("trouble", t("live_reconnecting"));
    }
  }
  function troubleKey(r) {
    if (r && r.status === 429) return "trouble_limited";
    if (r && r.status === 400) return "trouble_check";
    return "trouble";
  }

  // call returns {status, data, retryAfter}; status 0 means the network failed.
  function call(method, path, body) {
    var headers = { "Accept": "application/json" };
    if (ticket && path !== "/join") headers["Authorization"] = "Bearer " + ticket;
    if (path === "/join") headers["Idempotency-Key"] = joinKey;
    var init = { method: method, headers: headers, cache: "no-store" };
    if (body !== undefined) {
      headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    return fetch(base + path, init).then(function (res) {
      var ra = parseInt(res.headers.get("Retry-After") || "0", 10) || 0;
      return res.json().catch(function () { return {}; }).then(function (data) {
        return { status: res.status, data: data, retryAfter: ra };
      });
    }, function () { return { status: 0, data: {}, retryAfter: 0 }; });
  }

  function later(fn, r) {
    failures++;
    trouble(true, troubleKey(r));
    var ms = r && r.retryAfter ? r.retryAfter * 1000 : Math.min(1000 * failures, 10000);
    clearTimeout(timer);
    timer = setTimeout(fn, ms);
  }

  function start() {
    done = false;
    setState("joining");
    setLive("off", t("live_joining"));
    if (ticket) {
      call("GET", "/status").then(function (r) {
        if (r.status === 200) { failures = 0; trouble(false); show(r.data); follow(); return; }
        if (r.status === 401 || r.status === 410) { forget(); start(); return; }
        later(start, r);
      });
      return;
    }
    if (!joinKey) joinKey = newKey();
    proof().then(function (pow) {
      return call("POST", "/join", pow ? { pow: pow } : {});
    }).then(function (r) {
      if (r.status === 200 && r.data.ticket) {
        failures = 0;
        trouble(false);
        ticket = r.data.ticket;
        joinKey = null; // the next join (after this ticket ends) is another one
        save(KEY, ticket);
        show(r.data);
        follow();
        return;
      }
      if (r.status === 409 && r.data.state === "closed") { showClosed(r.data); return; }
      later(start, r);
    });
  }

  // proof solves the queue's proof-of-work challenge in a Web Worker, when
  // the queue asks for one; it resolves to {challenge, solution} or null.
  // The time it took is kept on the page (data-pow-ms) for the browser test.
  function proof() {
    return call("GET", "/challenge").then(function (r) {
      if (r.status !== 200 || !r.data.difficulty) return null;
      if (!window.Worker) return null; // the join will say why it failed
      setState("checking");
      setLive("off", t("live_checking"));
      return new Promise(function (resolve) {
        var t0 = performance.now();
        var w = new Worker("/assets/pow.js");
        w.onmessage = function (e) {
          w.terminate();
          room.dataset.powMs = String(Math.round(performance.now() - t0));
          room.dataset.powHashes = String(e.data.hashes);
          setState("joining");
          resolve({ challenge: r.data.challenge, solution: e.data.solution });
        };
        w.onerror = function () { w.terminate(); resolve(null); };
        w.postMessage({ challenge: r.data.challenge, bits: r.data.difficulty });
      });
    });
  }

  // follow keeps the view current: events when possible, polling otherwise.
  function follow() {
    if (done) return;
    if (!window.EventSource) { poll(); return; }
    close();
    // EventSource cannot send headers: the ticket goes in a cookie scoped to
    // the events path (never in the URL, where logs and proxies keep it).
    document.cookie = "wr_ticket=" + encodeURIComponent(ticket) + "; path=" + base + "/events; SameSite=Strict" +
      (location.protocol === "https:" ? "; Secure" : "");
    source = new EventSource(base + "/events");
    source.onopen = function () { failures = 0; trouble(false); setLive("on", t("live_live")); };
    source.addEventListener("status", function (e) {
      failures = 0;
      trouble(false);
      setLive("on", t("live_live"));
      show(JSON.parse(e.data));
    });
    source.addEventListener("unavailable", function () { trouble(true); });
    source.onerror = function () {
      if (done) return;
      if (source && source.readyState === EventSource.CLOSED) {
        // The server refused the stream (expired ticket, store down, ...):
        // polling finds out why and carries on.
        close();
        poll();
      } else {
        setLive("trouble", t("live_reconnecting"));
      }
    };
  }

  function close() { if (source) { source.close(); source = null; } }

  function poll() {
    if (done) return;
    clearTimeout(timer);
    call("GET", "/status").then(function (r) {
      if (done) return;
      if (r.status === 200) {
        failures = 0;
        trouble(false);
        setLive("on", t("live_updating"));
        show(r.data);
        if (r.data.state === "waiting" || r.data.state === "pre_queue") {
          timer = setTimeout(function () { failures = 0; follow(); }, r.data.poll_after_ms || 2000);
        }
        return;
      }
      if (r.status === 410) { show(r.data.state ? r.data : { state: "expired" }); return; }
      if (r.status === 401) { forget(); start(); return; }
      later(poll, r);
    });
  }

  function show(d) {
    notice(d);
    if (d.state === "pre_queue") return showPreQueue(d);
    if (d.state === "waiting") return showWaiting(d);
    if (d.state === "admitted") return showAdmitted(d);
    if (d.state === "expired") return showExpired(d);
  }

  // notice shows the site's message, and says so when the queue is paused.
  function notice(d) {
    var text = d.message || "";
    if (d.queue_state === "paused") text = t("paused") + (text ? " " + text : "");
    if (d.state === "expired" || d.state === "closed") text = "";
    $("notice").textContent = text;
    $("notice").hidden = !text;
  }

  var countdownTimer = null;
  function showPreQueue(d) {
    setState("pre_queue");
    $("pre-count").textContent = I.number(d.pre_queue);
    var opens = new Date(d.opens_at);
    $("opens-at").textContent = t("pre_opens_at", { time: I.when(opens) });
    $("opens-at").dataset.at = String(opens.getTime());
    clearInterval(countdownTimer);
    var tick = function () { $("countdown").textContent = I.countdown((opens.getTime() - Date.now()) / 1000); };
    tick();
    countdownTimer = setInterval(tick, 1000);
    document.title = t("title_pre_queue", { q: title });
  }

  function showClosed(d) {
    done = true;
    close();
    clearTimeout(timer);
    clearInterval(countdownTimer);
    forget();
    setState("closed");
    setLive("off", t("live_closed"));
    if (d.message) $("closed-message").textContent = d.message;
    document.title = t("title_closed", { q: title });
  }

  function showWaiting(d) {
    clearInterval(countdownTimer);
    setState("waiting");
    $("position").textContent = I.number(d.position);
    $("ahead").textContent = d.ahead === 0 ? t("ahead_none") : I.number(d.ahead);
    $("eta").textContent = I.eta(d.eta_seconds);
    var first = parseInt(load(START) || "-1", 10);
    if (first < d.ahead) { first = d.ahead; save(START, String(first)); }
    var pct = first > 0 ? (first - d.ahead) / first * 100 : 100;
    pct = Math.max(3, Math.min(100, pct));
    $("bar").style.width = pct.toFixed(1) + "%";
    $("progress").setAttribute("aria-valuenow", String(Math.round(pct)));
    document.title = t("title_waiting", { n: I.number(d.position), q: title });
  }

  function showAdmitted(d) {
    done = true;
    close();
    clearTimeout(timer);
    setState("admitted");
    setLive("on", t("live_admitted"));
    $("pass").textContent = d.pass;
    $("pass").title = d.pass;
    document.title = t("title_admitted", { q: title });
    var go = $("go");
    if (d.redirect_url) {
      go.href = d.redirect_url;
      $("admitted-lede").textContent = t("admitted_taking");
      // The pass works once; this tab hands it over, so the ticket is done.
      forget();
      setTimeout(function () { window.location.assign(d.redirect_url); }, 1200);
    } else {
      go.hidden = true;
      $("admitted-lede").textContent = t("admitted_show");
    }
  }

  function showExpired(d) {
    if (d.reason === "closed") return showClosed(d);
    done = true;
    close();
    clearTimeout(timer);
    forget();
    setState("expired");
    setLive("off", t("live_expired"));
    var why = "reason_" + (d.reason || "");
    $("expired-reason").textContent = t(Object.prototype.hasOwnProperty.call(I.catalog, why) ? why : "expired_lede");
    document.title = t("title_expired", { q: title });
  }

  $("rejoin").addEventListener("click", function () { forget(); start(); });
  start();
})();
