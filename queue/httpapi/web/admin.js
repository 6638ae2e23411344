// The admin dashboard: every queue with its live counts and a chart of the
// last 30 minutes, and the controls of the admin API (settings, state,
// message, schedule, proof of work, bypass codes, run-time queues). The
// token stays in this tab (sessionStorage) and goes with each API call.
(function () {
  "use strict";
  var KEY = "waitroom:admin-token";
  var $ = function (id) { return document.getElementById(id); };
  var token = load();
  // queue name -> {el, loaded: values the form was filled with, dirty: edited
  // since, saving: a save in flight, epoch: bumped by each save, so a read that
  // began before it cannot fill the form with the old values}
  var cards = {};
  var timer = null;

  function load() { try { return sessionStorage.getItem(KEY) || ""; } catch (e) { return ""; } }
  function save(v) { try { if (v) sessionStorage.setItem(KEY, v); else sessionStorage.removeItem(KEY); } catch (e) { /* private mode */ } }

  function status(text) { $("status").textContent = text || ""; $("status").hidden = !text; }

  // api returns {status, data}; status 0 means the network failed.
  function api(method, path, body) {
    var headers = { "Accept": "application/json" };
    if (token) headers["Authorization"] = "Bearer " + token;
    var init = { method: method, headers: headers, cache: "no-store" };
    if (body !== undefined) { headers["Content-Type"] = "application/json"; init.body = JSON.stringify(body); }
    return fetch(path, init).then(function (res) {
      return res.json().catch(function () { return {}; }).then(function (d) { return { status: res.status, data: d }; });
    }, function () { return { status: 0, data: { error: "network error" } }; });
  }

  function signedIn(on) {
    $("login").hidden = on;
    $("whoami").hidden = !on;
    $("create-box").hidden = !on;
    document.body.dataset.auth = on ? "yes" : "no";
  }

  var gen = 0; // one refresh loop at a time: a newer refresh ends the older one
  function refresh() {
    clearTimeout(timer);
    var my = ++gen;
    api("GET", "/v1/queues").then(function (r) {
      if (my !== gen) return;
      if (r.status !== 200) { status("Cannot list the queues: " + (r.data.error || r.status)); return; }
      var names = r.data.queues.map(function (q) { return q.name; });
      names.forEach(function (n) { if (!cards[n]) makeCard(n); });
      Object.keys(cards).forEach(function (n) {
        if (names.indexOf(n) < 0) { cards[n].el.remove(); delete cards[n]; }
      });
      return Promise.all(names.map(refreshQueue));
    }).then(function () {
      if (my === gen) timer = setTimeout(refresh, 2000);
    });
  }

  function refreshQueue(name) {
    var path = "/v1/queues/" + encodeURIComponent(name);
    var epoch = cards[name] ? cards[name].epoch : 0;
    return Promise.all([api("GET", path), api("GET", path + "/history")]).then(function (rs) {
      if (rs[0].status !== 200) return;
      var q = rs[0].data;
      var c = cards[name];
      if (!c) return;
      var el = c.el;
      el.dataset.state = q.state;
      var badge = el.querySelector(".state");
      badge.textContent = q.state;
      badge.dataset.state = q.state;
      el.querySelector(".active").textContent = q.active.toLocaleString();
      el.querySelector(".waiting").textContent = q.waiting.toLocaleString();
      el.querySelector(".rate").textContent = q.admit_rate_per_s.toLocaleString();
      el.querySelector(".pre").textContent = q.pre_queue.toLocaleString();
      el.querySelector(".bypass").textContent = q.bypass_uses.toLocaleString();
      el.querySelector(".delete").hidden = !(q.runtime && token);
      el.querySelector(".settings").hidden = !token;
      el.querySelector(".codes").hidden = !token;
      if (epoch === c.epoch && (!c.loaded || (!c.dirty && !c.saving))) fill(c, q);
      if (rs[1].status === 200) chart(el, rs[1].data.points);
    });
  }

  function makeCard(name) {
    var el = $("queue-card").content.firstElementChild.cloneNode(true);
    el.dataset.queue = name;
    el.querySelector(".qname").textContent = name;
    var c = { el: el, loaded: null, dirty: false, saving: false, epoch: 0 };
    var form = el.querySelector(".settings");
    form.addEventListener("input", function () { c.dirty = true; });
    form.addEventListener("submit", function (e) { e.preventDefault(); submit(name, c); });
    el.querySelector(".delete").addEventListener("click", function () {
      if (!window.confirm("Delete queue " + name + "? Everyone in it loses their place.")) return;
      api("DELETE", "/v1/queues/" + encodeURIComponent(name)).then(function (r) {
        if (r.status !== 200) { status("Delete failed: " + (r.data.error || r.status)); return; }
        refresh();
      });
    });
    el.querySelector(".codes").addEventListener("submit", function (e) {
      e.preventDefault();
      var f = e.target;
      api("POST", "/v1/queues/" + encodeURIComponent(name) + "/codes",
        { count: +f.count.value, uses: +f.uses.value }).then(function (r) {
        if (r.status !== 201) { status("Codes: " + (r.data.error || r.status)); return; }
        status("");
        var pre = el.querySelector(".issued");
        pre.textContent = r.data.codes.join("\n");
        pre.hidden = false;
      });
    });
    cards[name] = c;
    $("queues").appendChild(el);
    return c;
  }

  // localInput turns an RFC 3339 time into a datetime-local value in the
  // browser's zone, and back.
  function localInput(iso) {
    if (!iso) return "";
    var d = new Date(iso);
    var p = function (n) { return (n < 10 ? "0" : "") + n; };
    return d.getFullYear() + "-" + p(d.getMonth() + 1) + "-" + p(d.getDate()) + "T" +
      p(d.getHours()) + ":" + p(d.getMinutes()) + ":" + p(d.getSeconds());
  }
  function fromInput(v) { return v ? new Date(v).toISOString().replace(/\.\d{3}Z$/, "Z") : ""; }

  function values(q) {
    return {
      slot: String(q.slot), session_seconds: String(q.session_seconds), state: q.admin_state,
      pow_bits: String(q.pow_bits), message: q.message || "",
      opens_at: localInput(q.opens_at), closes_at: localInput(q.closes_at)
    };
  }

  function fill(c, q) {
    var v = values(q);
    var f = c.el.querySelector(".settings");
    Object.keys(v).forEach(function (k) { f.elements[k].value = v[k]; });
    c.loaded = v;
    c.dirty = false;
  }

  // submit sends only the fields that differ from what the form was filled
  // with, so a save never re-arms a draw nobody changed.
  function submit(name, c) {
    var f = c.el.querySelector(".settings");
    var body = {}, n = 0;
    Object.keys(c.loaded).forEach(function (k) {
      var v = f.elements[k].value;
      if (v === c.loaded[k]) return;
      n++;
      if (k === "slot" || k === "session_seconds" || k === "pow_bits") body[k] = +v;
      else if (k === "opens_at" || k === "closes_at") body[k] = fromInput(v);
      else body[k] = v;
    });
    if (!n) { status("Nothing to change."); return; }
    c.saving = true;
    c.epoch++;
    api("PUT", "/v1/queues/" + encodeURIComponent(name), body).then(function (r) {
      c.saving = false;
      if (r.status !== 200) { status("Save failed: " + (r.data.error || r.status)); return; }
      status("");
      fill(c, r.data);
      c.el.dataset.saves = String(+(c.el.dataset.saves || 0) + 1); // saves done, for tests and scripts
      var saved = c.el.querySelector(".saved");
      saved.hidden = false;
      setTimeout(function () { saved.hidden = true; }, 1500);
      refreshQueue(name);
    });
  }

  // chart draws the last 30 minutes: waiting, active and admitted/s, each
  // scaled to the largest value shown.
  function chart(el, pts) {
    var now = Date.now(), span = 30 * 60 * 1000, W = 600, Hh = 140;
    var max = 1;
    pts.forEach(function (p) { max = Math.max(max, p.waiting, p.active, p.admit_rate_per_s); });
    var line = function (key) {
      return pts.map(function (p) {
        var x = W - (now - new Date(p.at).getTime()) / span * W;
        var y = Hh - 4 - p[key] / max * (Hh - 8);
        return Math.max(0, x).toFixed(1) + "," + y.toFixed(1);
      }).join(" ");
    };
    el.querySelector(".line-waiting").setAttribute("points", line("waiting"));
    el.querySelector(".line-active").setAttribute("points", line("active"));
    el.querySelector(".line-rate").setAttribute("points", line("admit_rate_per_s"));
    el.querySelector(".ymax").textContent = max.toLocaleString();
    el.dataset.points = String(pts.length);
  }

  $("login").addEventListener("submit", function (e) {
    e.preventDefault();
    token = $("token").value.trim();
    save(token);
    signedIn(!!token);
    refresh();
  });
  $("logout").addEventListener("click", function () {
    token = ""; save(""); signedIn(false); refresh();
  });
  $("create").addEventListener("submit", function (e) {
    e.preventDefault();
    api("POST", "/v1/queues", { name: $("create-name").value, slot: +$("create-slot").value }).then(function (r) {
      if (r.status !== 201) { status("Create failed: " + (r.data.error || r.status)); return; }
      status("");
      $("create-name").value = "";
      refresh();
    });
  });
  signedIn(!!token);
  refresh();
})();
