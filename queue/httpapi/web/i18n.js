// The page's words and formats in its language (ko, en or ja, chosen by the
// server from ?lang=, the wr_lang cookie or Accept-Language). The catalog
// comes with the page (data-i18n, web/lang/<lang>.json); numbers, durations
// and dates are formatted with Intl for that language, dates in the
// visitor's own time zone. room.js uses window.waitroomI18n.
(function () {
  "use strict";
  var room = document.getElementById("room");
  var lang = (room && room.dataset.lang) || document.documentElement.lang || "en";
  var cat = {};
  try { cat = JSON.parse((room && room.dataset.i18n) || "{}"); } catch (e) { /* keep the keys */ }

  // t returns the string for key with {name} placeholders filled from vars.
  function t(key, vars) {
    var s = Object.prototype.hasOwnProperty.call(cat, key) ? cat[key] : key;
    if (vars) {
      s = s.replace(/\{(\w+)\}/g, function (m, k) { return vars[k] != null ? String(vars[k]) : m; });
    }
    return s;
  }

  var numbers = new Intl.NumberFormat(lang);
  function number(n) { return numbers.format(n); }

  // unit formats n minutes, hours or days; unit_spacing "none" writes them
  // without the spaces CLDR puts in ("1時間30分", not "1 時間 30 分").
  function unit(n, u) {
    var s = new Intl.NumberFormat(lang, { style: "unit", unit: u, unitDisplay: cat.unit_display || "long" }).format(n);
    return cat.unit_spacing === "none" ? s.replace(/\s+/g, "") : s;
  }

  // eta turns seconds into "About 5 minutes" / "약 5분" / "約5分".
  function eta(s) {
    if (s == null) return t("eta_calculating");
    if (s < 60) return t("eta_under_minute");
    if (s < 3600) return t("eta_about", { t: unit(Math.round(s / 60), "minute") });
    var h = Math.floor(s / 3600), m = Math.round((s % 3600) / 60);
    if (m === 60) { h++; m = 0; }
    var hm = m ? t("eta_hm", { h: unit(h, "hour"), m: unit(m, "minute") }) : unit(h, "hour");
    return t("eta_about", { t: hm });
  }

  function pad(n) { return (n < 10 ? "0" : "") + n; }

  // countdown shows seconds left as [days] h:mm:ss, the days in words.
  function countdown(s) {
    s = Math.max(0, Math.round(s));
    var d = Math.floor(s / 86400), h = Math.floor((s % 86400) / 3600), m = Math.floor((s % 3600) / 60), sec = s % 60;
    var clock = (h || d ? h + ":" + pad(m) : String(m)) + ":" + pad(sec);
    return d ? unit(d, "day") + " " + clock : clock;
  }

  var dates = new Intl.DateTimeFormat(lang, { dateStyle: "full", timeStyle: "short" });
  var zone = new Intl.DateTimeFormat(lang, { timeZoneName: "short" });
  // when formats a date in the visitor's time zone, with the zone's name.
  function when(date) {
    var z = zone.formatToParts(date).filter(function (p) { return p.type === "timeZoneName"; });
    return dates.format(date) + (z.length ? " (" + z[0].value + ")" : "");
  }

  window.waitroomI18n = { lang: lang, catalog: cat, t: t, number: number, eta: eta, countdown: countdown, when: when };
})();
