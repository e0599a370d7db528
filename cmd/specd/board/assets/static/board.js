// specd board: follow the page's event stream and, on a change, fetch the
// page's main part again and put it in place (no reload). Plain
// JavaScript, same origin only.
(function () {
  "use strict";
  var main = document.getElementById("main");
  var status = document.getElementById("live-status");
  if (!main || !main.dataset.live || !window.EventSource) { return; }
  var busy = false, again = false;
  function say(text) { if (status) { status.textContent = text; } }
  function refresh() {
    if (busy) { again = true; return; }
    busy = true;
    var url = location.pathname + "?part=main";
    fetch(url, { credentials: "same-origin", cache: "no-store" }).then(function (r) {
      if (!r.ok) { throw new Error("HTTP " + r.status); }
      return r.text();
    }).then(function (html) {
      main.innerHTML = html;
      say("Updated " + new Date().toLocaleTimeString());
    }).catch(function (e) {
      say("Update failed: " + e.message);
    }).then(function () {
      busy = false;
      if (again) { again = false; refresh(); }
    });
  }
  // A hidden tab lets its stream go (a browser keeps only six connections
  // per server, and each stream holds one) and catches up when shown.
  var es = null;
  function connect() {
    es = new EventSource(main.dataset.live);
    es.addEventListener("change", refresh);
    es.addEventListener("open", function () { say("Live"); });
    // The session ended (signed out elsewhere, its lifetime, replaced by
    // a newer sign-in of the key): the stream says so and ends; go sign in.
    es.addEventListener("signed-out", function () {
      es.close(); es = null;
      location.assign("/login?next=" + encodeURIComponent(location.pathname));
    });
    es.addEventListener("error", function () {
      say(es && es.readyState === EventSource.CLOSED ? "Live updates stopped: reload the page" : "Reconnecting…");
    });
  }
  document.addEventListener("visibilitychange", function () {
    if (document.visibilityState === "hidden") {
      if (es) { es.close(); es = null; say("Paused"); }
    } else if (!es) {
      connect();
      refresh();
    }
  });
  if (document.visibilityState !== "hidden") { connect(); }
})();
