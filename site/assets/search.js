// kbuild catalog enhancements. Everything on the page works without this
// script; it only adds a filter box to the package list, shows how far the
// index expiry is from now, fills in the site address in snippets when
// the site was generated without one, and puts a copy button on every
// snippet (the Clipboard API where the page is a secure context, else a
// selection copied with execCommand; nothing is loaded from elsewhere).
(function () {
  "use strict";

  function filterBox() {
    var slot = document.getElementById("filter");
    var rows = document.querySelectorAll("tr.package-row");
    if (!slot || rows.length === 0) {
      return;
    }
    var none = document.getElementById("no-match");
    var input = document.createElement("input");
    input.type = "search";
    input.placeholder = "Filter packages by name, description, capability…";
    input.setAttribute("aria-label", "Filter packages");
    input.addEventListener("input", function () {
      var q = input.value.trim().toLowerCase();
      var shown = 0;
      rows.forEach(function (row) {
        var match = q === "" || row.textContent.toLowerCase().indexOf(q) >= 0;
        row.hidden = !match;
        if (match) {
          shown++;
        }
      });
      if (none) {
        none.hidden = shown > 0;
      }
    });
    slot.appendChild(input);
  }

  function expiry() {
    var el = document.querySelector("time.expires");
    if (!el) {
      return;
    }
    var t = Date.parse(el.getAttribute("datetime"));
    if (isNaN(t)) {
      return;
    }
    var days = Math.round((t - Date.now()) / 86400000);
    var span = document.createElement("span");
    span.className = "relative";
    if (t <= Date.now()) {
      span.textContent = " (expired: subscribers refuse this index)";
      var banner = el.closest(".banner");
      if (banner) {
        banner.classList.add("expired");
      }
    } else if (days === 0) {
      span.textContent = " (within a day)";
    } else {
      span.textContent = " (in " + days + " day" + (days === 1 ? "" : "s") + ")";
    }
    el.after(span);
  }

  function siteURL() {
    document.querySelectorAll(".site-url[data-rel]").forEach(function (el) {
      if (location.protocol === "http:" || location.protocol === "https:") {
        el.textContent = new URL(el.getAttribute("data-rel"), location.href).href;
        var hint = el.closest("pre") && el.closest("pre").nextElementSibling;
        if (hint && hint.classList.contains("site-url-hint")) {
          hint.hidden = true;
        }
      }
    });
  }

  function copyText(text, done) {
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(function () { done(true); }, function () { done(legacyCopy(text)); });
      return;
    }
    done(legacyCopy(text));
  }

  function legacyCopy(text) {
    var area = document.createElement("textarea");
    area.value = text;
    area.setAttribute("readonly", "");
    area.style.position = "fixed";
    area.style.top = "-1000px";
    document.body.appendChild(area);
    area.select();
    var ok = false;
    try {
      ok = document.execCommand("copy");
    } catch (e) {
      ok = false;
    }
    area.remove();
    return ok;
  }

  function copyButtons() {
    document.querySelectorAll("pre.code").forEach(function (pre) {
      var wrap = document.createElement("div");
      wrap.className = "code-wrap";
      pre.parentNode.insertBefore(wrap, pre);
      wrap.appendChild(pre);
      var button = document.createElement("button");
      button.type = "button";
      button.className = "copy";
      button.textContent = "Copy";
      button.setAttribute("aria-label", "Copy to the clipboard");
      button.addEventListener("click", function () {
        copyText(pre.textContent, function (ok) {
          button.textContent = ok ? "Copied" : "Select and copy";
          setTimeout(function () { button.textContent = "Copy"; }, 2000);
        });
      });
      wrap.appendChild(button);
    });
  }

  filterBox();
  expiry();
  siteURL();
  copyButtons();
})();
