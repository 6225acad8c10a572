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
  // excepted), DEL, C1 controls and the bidirectional embeddings, overrides and isolates
  // (U+202A-U+202E, U+2066-U+2069) as visible escapes (\e, \r, \0, \u{202e}), a newline as ⏎.
  function shown(s) {
    let out = "";
    for (const ch of String(s)) {
      const c = ch.codePointAt(0);
      const hazard =
        (c <= 0x1f && c !== 0x09) ||
        (c >= 0x7f && c <= 0x9f) ||
        (c >= 0x202a && c <= 0x202e) ||
        (c >= 0x2066 && c <= 0x2069);
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
    if (!start.ok) throw new Error(start.data.message || "enrollment refused");
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
    if (!fin.ok) throw new Error(fin.data.message || "the passkey was not accepted");
    return fin.data.enrolled;
  }

  async function verifyPasskey() {
    const start = await post("/api/stepup/passkey/start");
    if (!start.ok) throw new Error(start.data.message || "verification refused");
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
    if (!fin.ok) throw new Error(fin.data.message || "the passkey did not verify");
    return fin.data.step_up;
  }

  // A POST behind a step-up: when the step-up is missing or stale, the passkey is asked for
  // (when one is enrolled) and the POST made again.
  async function guarded(path, body, what) {
    let res = await post(path, body);
    if (!res.ok && (res.data.error === "step_up_required" || res.data.error === "step_up_stale")) {
      const state = document.getElementById("stepup-state");
      if (!state || state.dataset.passkeys === "0") {
        throw new Error(res.data.message);
      }
      say("Verify with your passkey to " + what + "…");
      await verifyPasskey();
      res = await post(path, body);
    }
    if (!res.ok) throw new Error(res.data.message || "refused");
    return res.data;
  }

  async function change(name, action) {
    return guarded("/api/tools/" + encodeURIComponent(name) + "/" + action, {}, action + " " + name);
  }

  function wire() {
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
          say(String(e.message || e), true);
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
          say(String(e.message || e), true);
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
            say(String(e.message || e), true);
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
          say(String(e.message || e), true);
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
          say(res.data.message || "refused", true);
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
          say("Enrolled (" + who + "). Open Tools to review your acts.");
        } catch (e) {
          say(String(e.message || e), true);
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
