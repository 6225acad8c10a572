// Maven's page: WebAuthn ceremonies and the enable/disable buttons. No framework, no build step.
// Every POST carries the session's CSRF token; the server also checks Origin and Host.
// Text is only ever set with textContent, never parsed as HTML, and passes through shown()
// first: a server's words (an act's name, an error that quotes a server) may carry control
// characters or bidirectional overrides.
"use strict";

(function () {
  const csrfMeta = document.querySelector('meta[name="csrf-token"]');
  const csrf = csrfMeta ? csrfMeta.getAttribute("content") : "";

  // One line of outside text as the server renders it (shown::line in Rust): C0 controls (tab
  // excepted), DEL, C1 controls, and every character that renders as nothing or changes how
  // others render (format characters, default-ignorables such as tag characters, zero-width
  // characters, Hangul fillers and variation selectors, the line and paragraph separators) as
  // visible escapes (\e, \r, \0, \u{202e}, \u{e0041}), a newline as ⏎. A selector or a
  // zero-width joiner inside an emoji sequence is kept, as in Rust.
  const INVISIBLE = /[\p{Cf}\p{Default_Ignorable_Code_Point}\u2028\u2029]/u;
  function pictograph(c) {
    return c === 0xa9 || c === 0xae || c === 0x203c || c === 0x2049 || c === 0x2122 ||
      c === 0x2139 || (c >= 0x2190 && c <= 0x21ff) || (c >= 0x2300 && c <= 0x23ff) ||
      c === 0x24c2 || (c >= 0x25a0 && c <= 0x27bf) || (c >= 0x2934 && c <= 0x2935) ||
      (c >= 0x2b00 && c <= 0x2bff) || c === 0x3030 || c === 0x303d || c === 0x3297 ||
      c === 0x3299 || (c >= 0x1f000 && c <= 0x1faff);
  }
  function inEmoji(cps, i) {
    const c = cps[i], prev = cps[i - 1];
    if (c === 0xfe0e || c === 0xfe0f) {
      if (prev !== undefined && pictograph(prev)) return true;
      const keycap = prev !== undefined && ((prev >= 0x30 && prev <= 0x39) || prev === 0x23 || prev === 0x2a);
      return keycap && cps[i + 1] === 0x20e3;
    }
    if (c === 0x200d) {
      const before = prev === 0xfe0f ? cps[i - 2] : prev;
      return before !== undefined && pictograph(before) && cps[i + 1] !== undefined && pictograph(cps[i + 1]);
    }
    return false;
  }
  function shown(s) {
    const cps = Array.from(String(s), (ch) => ch.codePointAt(0));
    let out = "";
    for (let i = 0; i < cps.length; i++) {
      const c = cps[i];
      const ch = String.fromCodePoint(c);
      const hazard =
        (c <= 0x1f && c !== 0x09) ||
        (c >= 0x7f && c <= 0x9f) ||
        (c > 0x7f && INVISIBLE.test(ch) && !inEmoji(cps, i));
      if (!hazard) out += ch;
      else if (c === 0x0a) out += "\u23ce";
      else if (c === 0x1b) out += "\\e";
      else if (c === 0x0d) out += "\\r";
      else if (c === 0x00) out += "\\0";
      else out += "\\u{" + c.toString(16) + "}";
    }
    return out;
  }
  // Read-only, so the browser test can hold it against the server's rendering.
  Object.defineProperty(window, "mavenShown", { value: shown });

  // What went wrong, in words. A WebAuthn ceremony fails with a DOMException whose name is
  // all the browser says ("NotAllowedError"); the server refuses with a code of
  // web::error::Code. Each gets the owner's words; a code mapped to null keeps the server's
  // own message, which names what it is about (an act, a server, a wait).
  const DOM_WORDS = {
    NotAllowedError: "this passkey is not enrolled here, or the request was cancelled",
    InvalidStateError: "this authenticator is already enrolled",
    AbortError: "the request was cancelled",
    TimeoutError: "the authenticator did not answer in time: try again",
    SecurityError:
      "passkeys work only on the page's own address (http://localhost:PORT): open the link exactly as printed",
    NotSupportedError: "this browser or authenticator cannot make the kind of passkey asked for",
    ConstraintError: "this authenticator cannot verify you (it has no PIN or biometric set up)",
    NotReadableError: "the authenticator could not be read: try again",
    UnknownError: "the authenticator failed: try again",
  };
  const CODE_WORDS = {
    bad_transition: null,
    busy: "the page is busy right now: try again in a few seconds",
    ceremony_expired: "the passkey took too long to answer: try again",
    csrf: "this page is out of date: reload it and try again",
    enroll_link: null,
    host: "open the page at the address Maven printed (http://localhost:PORT)",
    internal: "Maven failed to do this; its log says why",
    no_ceremony: "the passkey request was lost (the page was reloaded?): try again",
    no_passkey: "no passkey is enrolled yet: run `maven web enroll` on this machine and open the link",
    no_passphrase: "no passphrase is configured: use your passkey",
    no_session: "your session ended (Maven restarted?): reload the page",
    not_found: null,
    oauth: null,
    oauth_link: null,
    origin: "this request did not come from Maven's own page: reload it and try again",
    passphrase: "wrong passphrase",
    sign_in_required: "sign in first: verify with your passkey (or the passphrase)",
    step_up_required: null,
    step_up_stale: "your last verification is more than 5 minutes old: verify again",
    timeout: "Maven did not answer in time: try again",
    too_large: "the request was too large",
    too_many_attempts: null,
    too_many_sessions: null,
    unchanged: null,
    unstable: null,
    webauthn: "the passkey did not verify: it may belong to another Maven, or not be enrolled here",
  };
  Object.defineProperty(window, "mavenCodeWords", { value: Object.freeze(Object.assign({}, CODE_WORDS)) });

  function words(e) {
    if (e && e.refusal && CODE_WORDS[e.refusal]) return CODE_WORDS[e.refusal];
    if (e && typeof DOMException !== "undefined" && e instanceof DOMException && DOM_WORDS[e.name]) {
      return DOM_WORDS[e.name];
    }
    return String((e && e.message) || e);
  }

  // A refusal of the server as an Error that carries its code.
  function refused(data, fallback) {
    const err = new Error((data && data.message) || fallback);
    err.refusal = data && data.error;
    return err;
  }

  function say(text, bad) {
    const el = document.getElementById("status") || document.getElementById("enroll-status");
    if (!el) return;
    el.textContent = shown(text);
    el.className = bad ? "bad" : "good";
  }

  async function post(path, body) {
    const res = await fetch(path, {
      method: "POST",
      credentials: "same-origin",
      headers: { "content-type": "application/json", "x-csrf-token": csrf },
      body: JSON.stringify(body === undefined ? {} : body),
    });
    let data = null;
    try {
      data = await res.json();
    } catch (_) {
      data = { error: "http", message: "HTTP " + res.status };
    }
    return { ok: res.ok, status: res.status, data: data };
  }

  // base64url <-> ArrayBuffer
  function fromB64u(s) {
    const b64 = s.replace(/-/g, "+").replace(/_/g, "/") + "===".slice((s.length + 3) % 4);
    const bin = atob(b64);
    const out = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
    return out.buffer;
  }
  function toB64u(buf) {
    const bytes = new Uint8Array(buf);
    let bin = "";
    for (let i = 0; i < bytes.length; i++) bin += String.fromCharCode(bytes[i]);
    return btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  }

  async function enroll(token) {
    const start = await post("/api/enroll/start", { token: token });
    if (!start.ok) throw refused(start.data, "enrollment refused");
    const pk = start.data.publicKey;
    pk.challenge = fromB64u(pk.challenge);
    pk.user.id = fromB64u(pk.user.id);
    if (pk.excludeCredentials) {
      pk.excludeCredentials = pk.excludeCredentials.map(function (c) {
        return Object.assign({}, c, { id: fromB64u(c.id) });
      });
    }
    const cred = await navigator.credentials.create({ publicKey: pk });
    const body = {
      id: cred.id,
      rawId: toB64u(cred.rawId),
      type: cred.type,
      extensions: cred.getClientExtensionResults(),
      response: {
        attestationObject: toB64u(cred.response.attestationObject),
        clientDataJSON: toB64u(cred.response.clientDataJSON),
      },
    };
    const fin = await post("/api/enroll/finish", body);
    if (!fin.ok) throw refused(fin.data, "the passkey was not accepted");
    return fin.data.enrolled;
  }

  async function verifyPasskey() {
    const start = await post("/api/stepup/passkey/start");
    if (!start.ok) throw refused(start.data, "verification refused");
    const pk = start.data.publicKey;
    pk.challenge = fromB64u(pk.challenge);
    if (pk.allowCredentials) {
      pk.allowCredentials = pk.allowCredentials.map(function (c) {
        return Object.assign({}, c, { id: fromB64u(c.id) });
      });
    }
    const cred = await navigator.credentials.get({ publicKey: pk });
    const r = cred.response;
    const body = {
      id: cred.id,
      rawId: toB64u(cred.rawId),
      type: cred.type,
      extensions: cred.getClientExtensionResults(),
      response: {
        authenticatorData: toB64u(r.authenticatorData),
        clientDataJSON: toB64u(r.clientDataJSON),
        signature: toB64u(r.signature),
        userHandle: r.userHandle ? toB64u(r.userHandle) : null,
      },
    };
    const fin = await post("/api/stepup/passkey/finish", body);
    if (!fin.ok) throw refused(fin.data, "the passkey did not verify");
    return fin.data.step_up;
  }

  // A POST behind a step-up: when the step-up is missing or stale, the passkey is asked for
  // (when one is enrolled) and the POST made again.
  async function guarded(path, body, what) {
    let res = await post(path, body);
    if (!res.ok && (res.data.error === "step_up_required" || res.data.error === "step_up_stale")) {
      const state = document.getElementById("stepup-state");
      if (!state || state.dataset.passkeys === "0") {
        throw refused(res.data);
      }
      say("Verify with your passkey to " + what + "…");
      await verifyPasskey();
      res = await post(path, body);
    }
    if (!res.ok) throw refused(res.data, "refused");
    return res.data;
  }

  async function change(name, action) {
    return guarded("/api/tools/" + encodeURIComponent(name) + "/" + action, {}, action + " " + name);
  }

  // The filter over the acts: every word typed must be in an act's name, description or
  // server. Sections with a match open while filtering and fold back as they were after.
  function wireFilter() {
    const input = document.getElementById("filter");
    if (!input) return;
    const count = document.getElementById("filter-count");
    const acts = Array.from(document.querySelectorAll("#acts article.act"));
    const groups = Array.from(document.querySelectorAll("#acts details.group"));
    groups.forEach(function (g) {
      g.dataset.folded = g.open ? "no" : "yes";
    });
    function apply() {
      const want = input.value.toLowerCase().split(/\s+/).filter(Boolean);
      let shown = 0;
      acts.forEach(function (a) {
        const desc = a.querySelector("dd.desc");
        const hay = [a.dataset.name, a.dataset.server, desc ? desc.textContent : ""]
          .join(" ")
          .toLowerCase();
        const hit = want.every(function (w) {
          return hay.includes(w);
        });
        a.hidden = !hit;
        if (hit) shown++;
      });
      groups.forEach(function (g) {
        const any = g.querySelector("article.act:not([hidden])") !== null;
        g.hidden = !any;
        g.open = want.length ? any : g.dataset.folded === "no";
      });
      count.textContent = want.length ? shown + " of " + acts.length + " acts" : acts.length + " acts";
    }
    input.addEventListener("input", apply);
    apply();
  }

  function wire() {
    wireFilter();

    // A server's "Enable all read-only": one step-up, then the server enables exactly that
    // server's read-only tools that wait for the owner.
    document.querySelectorAll("button[data-bulk]").forEach(function (b) {
      b.addEventListener("click", async function () {
        const server = b.dataset.server;
        b.disabled = true;
        try {
          const path = "/api/mcp_servers/" + encodeURIComponent(server) + "/" + b.dataset.bulk;
          const r = await guarded(path, {}, "enable the read-only tools of " + server);
          say(r.enabled.length + " read-only tools of " + server + " enabled.");
          window.location.reload();
        } catch (e) {
          say(words(e), true);
          b.disabled = false;
        }
      });
    });

    document.querySelectorAll("button[data-action]").forEach(function (b) {
      b.addEventListener("click", async function () {
        const name = b.dataset.name;
        const action = b.dataset.action;
        b.disabled = true;
        try {
          const row = await change(name, action);
          say(name + " is now " + row.state + ".");
          window.location.reload();
        } catch (e) {
          say(words(e), true);
          b.disabled = false;
        }
      });
    });

    // The MCP servers card: Connect sends the browser to the authorization server;
    // Disconnect forgets the tokens (revoked where the authorization server offers it).
    document.querySelectorAll("button[data-oauth]").forEach(function (b) {
      b.addEventListener("click", async function () {
        const name = b.dataset.name;
        const action = b.dataset.oauth;
        b.disabled = true;
        try {
          const path = "/api/mcp_servers/" + encodeURIComponent(name) + "/" + action;
          const r = await guarded(path, {}, action + " " + name);
          if (action === "connect") {
            say("Sending you to " + r.issuer + "…");
            window.location.assign(r.redirect);
          } else {
            say(name + ": authorization forgotten.");
            window.location.reload();
          }
        } catch (e) {
          say(words(e), true);
          b.disabled = false;
        }
      });
    });

    // The page a `maven mcp login` link opens: the one-time token is in the fragment, kept
    // there across the step-up's reload and posted only with the step-up fresh.
    const loginButton = document.getElementById("oauth-login-button");
    if (loginButton) {
      const token = window.location.hash.replace(/^#/, "");
      if (!token) {
        say("This page needs the link `maven mcp login NAME` prints.", true);
        loginButton.disabled = true;
      } else {
        loginButton.addEventListener("click", async function () {
          loginButton.disabled = true;
          try {
            const r = await guarded("/api/oauth/login", { token: token }, "authorize");
            history.replaceState(null, "", window.location.pathname);
            say("Sending you to " + r.issuer + "…");
            window.location.assign(r.redirect);
          } catch (e) {
            say(words(e), true);
            loginButton.disabled = false;
          }
        });
      }
    }

    const pkButton = document.getElementById("stepup-passkey");
    if (pkButton) {
      pkButton.addEventListener("click", async function () {
        try {
          const m = await verifyPasskey();
          say("Verified with " + m + ".");
          window.location.reload();
        } catch (e) {
          say(words(e), true);
        }
      });
    }

    const ppForm = document.getElementById("stepup-passphrase");
    if (ppForm) {
      ppForm.addEventListener("submit", async function (ev) {
        ev.preventDefault();
        const input = ppForm.querySelector("input[name=passphrase]");
        const res = await post("/api/stepup/passphrase", { passphrase: input.value });
        input.value = "";
        if (res.ok) {
          say("Verified with the passphrase.");
          window.location.reload();
        } else {
          say(words(refused(res.data, "refused")), true);
        }
      });
    }

    const enrollButton = document.getElementById("enroll-button");
    if (enrollButton) {
      // The one-time token is in the fragment, never sent to the server in a URL.
      const token = window.location.hash.replace(/^#/, "");
      history.replaceState(null, "", window.location.pathname);
      if (!token) {
        say("This page needs the link `maven web enroll` prints.", true);
        enrollButton.disabled = true;
        return;
      }
      enrollButton.addEventListener("click", async function () {
        enrollButton.disabled = true;
        try {
          const who = await enroll(token);
          say("Enrolled (" + who + "). You are signed in: open Tools to review your acts.");
          const next = document.getElementById("enroll-continue");
          if (next) next.hidden = false;
        } catch (e) {
          say(words(e), true);
          enrollButton.disabled = false;
        }
      });
    }
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", wire);
  } else {
    wire();
  }
})();
