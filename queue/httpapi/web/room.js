// The waiting room page: join (or resume the ticket kept in localStorage),
// follow the status live over server-sent events (polling when they are not
// available), and go to the protected site when admitted.
(function () {
  "use strict";
  var room = document.getElementById("room");
  var q = room.dataset.queue;
  var base = "/v1/queues/" + encodeURIComponent(q);
  var KEY = "waitroom:" + q + ":ticket";
  var START = "waitroom:" + q + ":start"; // people ahead when we first looked, for the progress bar
  var $ = function (id) { return document.getElementById(id); };

  var ticket = load(KEY);
  var source = null;
  var timer = null;
  var failures = 0;
  var done = false;

  function load(k) { try { return localStorage.getItem(k); } catch (e) { return null; } }
  function save(k, v) {
    try { if (v == null) localStorage.removeItem(k); else localStorage.setItem(k, v); } catch (e) { /* private mode */ }
  }
  function forget() { ticket = null; save(KEY, null); save(START, null); }

  function setState(s) { room.dataset.state = s; }
  function setLive(mode, text) { room.dataset.live = mode; $("live").textContent = text; }
  function trouble(on) {
    $("trouble").hidden = !on;
    if (on) setLive("trouble", "Reconnecting");
  }

  // call returns {status, data, retryAfter}; status 0 means the network failed.
  function call(method, path, body) {
    var headers = { "Accept": "application/json" };
    if (ticket && path !== "/join") headers["Authorization"] = "Bearer " + ticket;
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
    trouble(true);
    var ms = r && r.retryAfter ? r.retryAfter * 1000 : Math.min(1000 * failures, 10000);
    clearTimeout(timer);
    timer = setTimeout(fn, ms);
  }

  function start() {
    done = false;
    setState("joining");
    setLive("off", "Joining");
    if (ticket) {
      call("GET", "/status").then(function (r) {
        if (r.status === 200) { failures = 0; trouble(false); show(r.data); follow(); return; }
        if (r.status === 401 || r.status === 410) { forget(); start(); return; }
        later(start, r);
      });
      return;
    }
    proof().then(function (pow) {
      return call("POST", "/join", pow ? { pow: pow } : {});
    }).then(function (r) {
      if (r.status === 200 && r.data.ticket) {
        failures = 0;
        trouble(false);
        ticket = r.data.ticket;
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
      setLive("off", "Checking your browser");
      return new Promise(function (resolve) {
        var t0 = performance.now();
        var w = new Worker("/assets/pow.js");
        w.onmessage = function (e) {
          w.terminate();
          room.dataset.powMs = String(Math.round(performance.now() - t0));
          room.dataset.powHashes = String(e.data.hashes);
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
    source.onopen = function () { failures = 0; trouble(false); setLive("on", "Live"); };
    source.addEventListener("status", function (e) {
      failures = 0;
      trouble(false);
      setLive("on", "Live");
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
        setLive("trouble", "Reconnecting");
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
        setLive("on", "Updating");
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
    if (d.queue_state === "paused") text = "The queue is paused: nobody is let in for now, and everyone keeps their place." + (text ? " " + text : "");
    if (d.state === "expired" || d.state === "closed") text = "";
    $("notice").textContent = text;
    $("notice").hidden = !text;
  }

  var countdownTimer = null;
  function showPreQueue(d) {
    setState("pre_queue");
    $("pre-count").textContent = d.pre_queue.toLocaleString();
    var opens = new Date(d.opens_at);
    $("opens-at").textContent = opens.toLocaleString();
    clearInterval(countdownTimer);
    var tick = function () {
      var s = Math.max(0, Math.round((opens.getTime() - Date.now()) / 1000));
      var h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), sec = s % 60;
      $("countdown").textContent = (h ? h + ":" + (m < 10 ? "0" : "") : "") + m + ":" + (sec < 10 ? "0" : "") + sec;
    };
    tick();
    countdownTimer = setInterval(tick, 1000);
    document.title = "Opens soon · " + q;
  }

  function showClosed(d) {
    done = true;
    close();
    clearTimeout(timer);
    clearInterval(countdownTimer);
    forget();
    setState("closed");
    setLive("off", "Closed");
    if (d.message) $("closed-message").textContent = d.message;
    document.title = "Closed · " + q;
  }

  function showWaiting(d) {
    clearInterval(countdownTimer);
    setState("waiting");
    $("position").textContent = d.position.toLocaleString();
    $("ahead").textContent = d.ahead === 0 ? "Nobody – you're next" : d.ahead.toLocaleString();
    $("eta").textContent = eta(d.eta_seconds);
    var first = parseInt(load(START) || "-1", 10);
    if (first < d.ahead) { first = d.ahead; save(START, String(first)); }
    var pct = first > 0 ? (first - d.ahead) / first * 100 : 100;
    pct = Math.max(3, Math.min(100, pct));
    $("bar").style.width = pct.toFixed(1) + "%";
    $("progress").setAttribute("aria-valuenow", String(Math.round(pct)));
    document.title = "#" + d.position + " in line · " + q;
  }

  function showAdmitted(d) {
    done = true;
    close();
    clearTimeout(timer);
    setState("admitted");
    setLive("on", "Admitted");
    $("pass").textContent = d.pass;
    $("pass").title = d.pass;
    document.title = "Your turn · " + q;
    var go = $("go");
    if (d.redirect_url) {
      go.href = d.redirect_url;
      $("admitted-lede").textContent = "Taking you in now…";
      // The pass works once; this tab hands it over, so the ticket is done.
      forget();
      setTimeout(function () { window.location.assign(d.redirect_url); }, 1200);
    } else {
      go.hidden = true;
      $("admitted-lede").textContent = "Show this pass to continue.";
    }
  }

  function showExpired(d) {
    if (d.reason === "closed") return showClosed(d);
    done = true;
    close();
    clearTimeout(timer);
    forget();
    setState("expired");
    setLive("off", "Expired");
    if (d.error) $("expired-reason").textContent = "Reason: " + d.error + ".";
    document.title = "Place expired · " + q;
  }

  function eta(s) {
    if (s == null) return "Calculating…";
    if (s < 60) return "Under a minute";
    if (s < 3600) return "About " + Math.round(s / 60) + " min";
    var h = Math.floor(s / 3600), m = Math.round((s % 3600) / 60);
    return "About " + h + " h " + m + " min";
  }

  $("rejoin").addEventListener("click", function () { forget(); start(); });
  start();
})();
