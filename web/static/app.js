// clawledger pages: optional enhancements. Every page reads without this
// script; it puts times in the browser's time zone, adds the keys / j k,
// and keeps live pages current. It never inserts text as HTML: what it
// adds comes from this server's own rendered (escaped) pages.
(function () {
  "use strict";

  var tz = "";
  try { tz = Intl.DateTimeFormat().resolvedOptions().timeZone || ""; } catch (e) {}
  if (tz) {
    // the server cuts usage days in this zone from the next page on
    document.cookie = "tz=" + encodeURIComponent(tz) + "; path=/; SameSite=Strict; max-age=31536000";
  }
  var fmt = new Intl.DateTimeFormat(undefined, { year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" });

  function localTimes(root) {
    root.querySelectorAll("time[datetime]").forEach(function (t) {
      var d = new Date(t.getAttribute("datetime"));
      if (!isNaN(d)) {
        t.title = t.textContent;
        t.textContent = fmt.format(d);
      }
    });
  }

  function openTarget() {
    var id = decodeURIComponent(location.hash.slice(1));
    var el = id && document.getElementById(id);
    if (!el) return;
    for (var p = el.parentElement; p; p = p.parentElement) {
      if (p.tagName === "DETAILS") p.open = true;
    }
    el.scrollIntoView({ block: "start" });
  }

  function typing(e) {
    var t = e.target;
    return t && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName));
  }

  function entries() {
    return Array.prototype.slice.call(document.querySelectorAll("#entries > .entry, .hit"));
  }

  function move(step) {
    var list = entries();
    if (!list.length) return;
    var i = list.indexOf(document.activeElement);
    if (i < 0) {
      // start from the first entry below the top of the window
      i = list.findIndex(function (el) { return el.getBoundingClientRect().top >= 0; });
      i = i < 0 ? list.length - 1 : i - (step > 0 ? 1 : 0);
    }
    var next = list[Math.max(0, Math.min(list.length - 1, i + step))];
    if (!next.hasAttribute("tabindex")) next.setAttribute("tabindex", "-1");
    next.focus({ preventScroll: true });
    next.scrollIntoView({ block: "nearest" });
    if (next.id) history.replaceState(null, "", "#" + next.id);
  }

  document.addEventListener("keydown", function (e) {
    if (e.ctrlKey || e.metaKey || e.altKey || typing(e)) return;
    if (e.key === "/") {
      var box = document.getElementById("find");
      if (box) { e.preventDefault(); box.focus(); box.select(); }
    } else if (e.key === "j") {
      move(1);
    } else if (e.key === "k") {
      move(-1);
    }
  });

  // Live pages: a change notice from /api/v1/events fetches what is new.
  var live = document.body.getAttribute("data-live");
  var busy = false, again = false;

  function fetchDoc(url) {
    return fetch(url, { credentials: "same-origin", headers: { "Accept": "text/html" } }).then(function (r) {
      if (!r.ok) throw new Error(r.status);
      return r.text();
    }).then(function (html) {
      return new DOMParser().parseFromString(html, "text/html");
    });
  }

  function updateSession() {
    var list = document.getElementById("entries");
    if (!list) return Promise.resolve();
    var q = new URLSearchParams(location.search);
    q.delete("page"); q.delete("at");
    q.set("after", list.getAttribute("data-tail") || "0");
    return fetchDoc(location.pathname + "/tail?" + q.toString()).then(function (doc) {
      var frag = doc.getElementById("entries");
      if (!frag) return;
      var added = Array.prototype.slice.call(frag.children);
      added.forEach(function (el) {
        if (!document.getElementById(el.id)) list.appendChild(document.importNode(el, true));
      });
      var tail = frag.getAttribute("data-tail");
      if (tail && tail !== "0") list.setAttribute("data-tail", tail);
      localTimes(list);
    });
  }

  function updateOverview() {
    return fetchDoc(location.href).then(function (doc) {
      document.querySelectorAll("[id^=live-]").forEach(function (el) {
        var fresh = doc.getElementById(el.id);
        if (fresh) {
          var node = document.importNode(fresh, true);
          localTimes(node);
          el.replaceWith(node);
        }
      });
    });
  }

  function update() {
    if (busy) { again = true; return; }
    busy = true;
    (live === "session" ? updateSession() : updateOverview()).catch(function () {}).then(function () {
      busy = false;
      if (again) { again = false; update(); }
    });
  }

  if (live && window.EventSource) {
    var es = new EventSource("/api/v1/events");
    es.addEventListener("change", update);
    es.addEventListener("open", function () { document.body.setAttribute("data-live-open", "1"); });
  }

  localTimes(document);
  var tzname = document.getElementById("tzname");
  if (tzname && tz) tzname.textContent = tz;
  openTarget();
  window.addEventListener("hashchange", openTarget);
})();
