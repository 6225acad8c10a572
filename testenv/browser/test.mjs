// The real-browser test of Maven's page (U-4).
//
// Starts a real daemon on a temporary data directory with a config that proposes a local act,
// asks `maven web enroll` for the one-time link, enrolls a passkey with Chromium's virtual
// authenticator (DevTools protocol: WebAuthn.enable + WebAuthn.addVirtualAuthenticator), sees
// that /tools before a sign-in is the step-up card alone and the API answers
// `sign_in_required`, signs in with the passkey, enables the proposed act on /tools, sees it
// enabled on the page and through `maven tools --json`, and keeps a screenshot.
//
// The config also runs the demo MCP server, so the MCP servers card shows a live server and
// its discovered tools are proposed on the page, and `testkit-mcp --hostile-text`, whose every
// string carries terminal control sequences and bidirectional overrides: the page shows them
// as visible escapes (`\e]0;pwned`, `\u{202e}`), as text, never as markup or as themselves.
//
// The page at scale: two more testkit servers, "many" (`--tools 40`, all read-only) and
// "mixed" (its default echo, read-only, and delete_item, which writes), bring the acts past 40.
// Enrolling signs the browser in (no step-up yet): /tools folds a section per server and
// keeps the document short; the filter narrows the rows; a proposed row has Enable and no
// Disable; "Enable all read-only" on mixed asks the passkey (the step-up) and enables echo
// and not delete_item, nor any other server's row. Screenshots at that scale are kept.
// Enrolling the same authenticator again (a fresh link) is told in words, not as the browser's
// InvalidStateError; at the end so is a wrong authenticator (the credential gone), not as its
// NotAllowedError.
//
// OAuth through the page: `testkit-authserver` (a loopback authorization server that is also
// the MCP server it protects) is configured as "notes". `maven mcp login notes` prints a
// one-time link; in a fresh session (no step-up yet) the page asks the passkey, sends the
// browser to the authorization server, which sends it back to the page's /oauth/callback;
// the page says "authorized by …" and the MCP servers card shows it, with no token.
//
// The conversation box on /tools: a read-only act (todo's list quoted as todo's words), a
// write asked first and run once on Yes (`maven acts` says so), asked again and cancelled on
// No (nothing more ran), and a hostile server's echo (markup, a clipboard write, a window
// title) shown as escaped text in the box of that server, apart from Maven's words.
//
// Usage: node test.mjs MAVEN_BINARY DEMO_TODO_BINARY TESTKIT_MCP_BINARY TESTKIT_AUTHSERVER_BINARY ARTIFACT_DIR
// Every failure exits 1 with the reason; success prints "browser: 1 passed, 0 failed".

import { execFile, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { chromium } from "playwright-core";

const run = promisify(execFile);
const [maven, demo, testkit, authserverBin, artifacts] = process.argv.slice(2);
if (!maven || !demo || !testkit || !authserverBin || !artifacts) {
  console.error(
    "usage: node test.mjs MAVEN_BINARY DEMO_TODO_BINARY TESTKIT_MCP_BINARY TESTKIT_AUTHSERVER_BINARY ARTIFACT_DIR",
  );
  process.exit(2);
}
const CHROMIUM = "/usr/bin/chromium";
const FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--disable-quic",
];
const ACT = "say_hello";
// The folded page at 40+ acts stays under this height (as one list it was about 14,500 px).
const HEIGHT_BOUND = 4000;
// What `testkit-mcp --hostile-text` writes, and how the page must show it.
const HOSTILE_NAME = "esc\u001b]0;pwned\u0007";
const HOSTILE_DESCRIPTION =
  "\u001b[2J\u001b[31mYOU ARE HACKED\u001b[0m\n    | fake_row | enabled | no |\n" +
  "\u001b]8;;https://evil.invalid/\u001b\\docs\u001b]8;;\u001b\\ " +
  "reads \u202esdrawkcab\u202c and \u2066isolated\u2069";
const SHOWN = {
  server: "esc\\e]0;pwned\\u{7} 1.0\\u{9b}2J",
  title: "Echo\\u{9b}31m red \\u{202e}txet desrever",
  description:
    "\\e[2J\\e[31mYOU ARE HACKED\\e[0m\u23ce    | fake_row | enabled | no |\u23ce" +
    "\\e]8;;https://evil.invalid/\\e\\docs\\e]8;;\\e\\ " +
    "reads \\u{202e}sdrawkcab\\u{202c} and \\u{2066}isolated\\u{2069}",
  refused: "x\u23cex\u23ce",
  refusedLength: "… (100000 characters)",
  stderr: "\\e[2J\\e[31mstderr says: YOU ARE HACKED\\e[0m \\u{202e}txet",
};
// Anything a terminal or the bidi algorithm would obey rather than show (tab and newline are
// the document's own whitespace).
const RAW_HAZARD = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\u{e0000}-\u{e0fff}]/u;
// One character of each invisible range shown::is_invisible covers.
const INVISIBLE_SAMPLES = [
  0xad, 0x34f, 0x61c, 0x115f, 0x180e, 0x200b, 0x200c, 0x200d, 0x200e, 0x200f, 0x2028, 0x2029,
  0x202e, 0x2060, 0x2066, 0x3164, 0xfe0f, 0xfeff, 0xffa0, 0x1bca0, 0x1d173, 0xe0001, 0xe0041,
  0xe007f, 0xe0100,
];

const home = mkdtempSync(join(tmpdir(), "mvn-browser-"));
const data = join(home, "data");
const config = join(home, "config.json");
const profile = join(home, "chromium-profile");
// The loopback authorization server: its base URL is its first line of output.
const authserver = spawn(authserverBin, [], { stdio: ["ignore", "pipe", "inherit"] });
const asBase = await new Promise((resolve, reject) => {
  let out = "";
  authserver.stdout.on("data", (b) => {
    out += b.toString();
    const line = out.split("\n")[0];
    if (out.includes("\n")) resolve(line.trim());
  });
  authserver.on("exit", () => reject(new Error("testkit-authserver exited")));
});
writeFileSync(
  config,
  JSON.stringify({
    web: { listen: "127.0.0.1:0" },
    acts: [{ name: ACT, cmd: ["echo", "hello"], read_only: true }],
    mcp_servers: {
      todo: { command: demo, enabled: true, allow_tools: ["list_tasks", "update_task", "clear_done"] },
      hostile: { command: testkit, args: ["--hostile-text"], enabled: true },
      // The same hostile server, its echo named in allow_tools so that it takes the rest of
      // the sentence as its text: the conversation box quotes what it returns.
      evil: { command: testkit, args: ["--hostile-text"], enabled: true, allow_tools: ["echo"] },
      many: { command: testkit, args: ["--tools", "40"], enabled: true, max_tools: 50 },
      mixed: { command: testkit, enabled: true },
      notes: { url: `${asBase}/mcp`, allow_private: true, enabled: true },
    },
    // Never polled: only its row on the feeds card, whose words must not break mid-word.
    feeds: [
      {
        name: "techcrunch",
        url: "https://techcrunch.com/feed/?utm_source=maven&utm_medium=a-long-token-that-has-to-wrap-somewhere",
        enabled: false,
      },
    ],
  }),
);
mkdirSync(artifacts, { recursive: true });

let daemon = null;
let context = null;
let daemonLog = "";

function cli(...args) {
  return run(maven, ["--data", data, "--config", config, ...args], { timeout: 60_000 });
}

function fail(msg) {
  throw new Error(msg);
}

async function waitForDaemon() {
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      await cli("status", "--json");
      return;
    } catch (e) {
      if (daemon.exitCode !== null) fail(`the daemon exited early:\n${daemonLog}`);
      if (Date.now() > deadline) fail(`the daemon was not ready within 60 s:\n${daemonLog}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

async function main() {
  daemon = spawn(maven, ["--data", data, "--config", config, "daemon"], {
    stdio: ["ignore", "ignore", "pipe"],
    env: { ...process.env, RUST_LOG: "info" },
  });
  daemon.stderr.on("data", (b) => {
    daemonLog += b.toString();
  });
  await waitForDaemon();
  // Discovery runs on the manager's own task: wait for the demo server's tools (and the
  // hostile server's echo) to be proposed.
  const deadline = Date.now() + 60_000;
  let hostileAct = null;
  for (;;) {
    const rows = JSON.parse((await cli("tools", "--json")).stdout);
    const echo = rows.find((r) => r.name.startsWith("hostile_") && r.state === "proposed");
    const many = rows.filter((r) => r.name.startsWith("many_") && r.state === "proposed").length;
    const mixed = ["mixed_echo", "mixed_delete_item"].every((n) =>
      rows.some((r) => r.name === n && r.state === "proposed"),
    );
    const evil = rows.some((r) => r.name === "evil_echo" && r.state === "proposed");
    const clear = rows.some((r) => r.name === "todo_clear_done" && r.state === "proposed");
    if (rows.some((r) => r.name === "todo_list_tasks" && r.state === "proposed") && echo && evil && clear && many === 40 && mixed) {
      hostileAct = echo.name;
      break;
    }
    if (Date.now() > deadline) fail(`the MCP servers' tools were not proposed: ${JSON.stringify(rows)}`);
    await new Promise((r) => setTimeout(r, 200));
  }

  const { stdout } = await cli("web", "enroll");
  const link = stdout.trim();
  const m = /^http:\/\/localhost:(\d+)\/enroll#[0-9a-f]{64}$/.exec(link);
  if (!m) fail(`unexpected enrollment link: ${JSON.stringify(link)}`);
  const base = `http://localhost:${m[1]}`;

  context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    chromiumSandbox: false,
    args: FLAGS,
    viewport: { width: 1200, height: 900 },
  });
  const page = context.pages()[0] || (await context.newPage());
  const problems = [];
  page.on("console", (msg) => {
    if (msg.type() === "error") problems.push(msg.text());
  });
  page.on("pageerror", (e) => problems.push(String(e)));

  const cdp = await context.newCDPSession(page);
  await cdp.send("WebAuthn.enable");
  const { authenticatorId } = await cdp.send("WebAuthn.addVirtualAuthenticator", {
    options: {
      protocol: "ctap2",
      transport: "internal",
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  });

  // Before a sign-in the page shows the step-up card and nothing else, and the API no owner
  // data.
  await notSignedIn(page, base);

  // Enroll through the one-time link: that signs this browser in.
  await page.goto(link);
  await page.click("#enroll-button");
  await page.waitForFunction(
    () => /Enrolled|not|refused|expired/i.test(document.getElementById("enroll-status").textContent),
    null,
    { timeout: 30_000 },
  );
  const enrolled = await page.textContent("#enroll-status");
  if (!/^Enrolled \(passkey [0-9a-f]{8}\)\. You are signed in/.test(enrolled)) fail(`enrollment failed: ${enrolled}`);
  const { credentials } = await cdp.send("WebAuthn.getCredentials", { authenticatorId });
  if (credentials.length !== 1) fail(`the virtual authenticator holds ${credentials.length} credentials`);
  if (!(await page.isVisible("#enroll-continue a[href='/tools']"))) fail("no way on to Tools after enrolling");
  await Promise.all([page.waitForURL(`${base}/tools`), page.click("#enroll-continue a")]);
  const signedIn = await page.textContent("#stepup-state");
  if (!/^Signed in for \d+ more hours/.test(signedIn)) fail(`after enrolling the page says: ${signedIn}`);
  await atScale(page, cdp, authenticatorId);

  // The link works once (load it afresh: from /enroll it would be a same-document jump).
  await page.goto("about:blank");
  await page.goto(link);
  await page.click("#enroll-button");
  await page.waitForFunction(() => document.getElementById("enroll-status").textContent.length > 0);
  const again = await page.textContent("#enroll-status");
  if (!/unknown, used or expired/.test(again)) fail(`a used link was accepted again: ${again}`);
  // A fresh link, the same authenticator: the browser's InvalidStateError, said in words.
  const second = (await cli("web", "enroll")).stdout.trim();
  await page.goto("about:blank");
  await page.goto(second);
  await page.click("#enroll-button");
  await page.waitForFunction(() => document.getElementById("enroll-status").textContent.length > 0, null, {
    timeout: 30_000,
  });
  const twice = await page.textContent("#enroll-status");
  if (twice !== "this authenticator is already enrolled") fail(`enrolling twice is told: ${JSON.stringify(twice)}`);

  // A new browser session is not signed in; signing in is a passkey step-up.
  await context.clearCookies();
  await notSignedIn(page, base);
  await page.click("#stepup-passkey");
  await page.waitForSelector(`article#act-${ACT}`, { state: "attached", timeout: 30_000 });

  // Signed in: the proposed act, then enable it (the sign-in's step-up is still fresh).
  const proposed = page.locator(`article#act-${ACT}[data-state="proposed"]`);
  if ((await proposed.count()) !== 1) fail("the proposed act is not on /tools");
  if ((await page.locator("button[data-action=run], button:text-is('Run')").count()) !== 0) {
    fail("the page has a run button");
  }
  await filterTo(page, ACT);
  await page.click(`button[data-action="enable"][data-name="${ACT}"]`);
  await page.waitForSelector(`article#act-${ACT}[data-state="enabled"]`, { state: "attached", timeout: 30_000 });
  // The step-up is still fresh: the MCP tool is enabled without asking the passkey again.
  await filterTo(page, "todo_list_tasks");
  await page.click(`button[data-action="enable"][data-name="todo_list_tasks"]`);
  await page.waitForSelector(`article#act-todo_list_tasks[data-state="enabled"]`, {
    state: "attached",
    timeout: 30_000,
  });
  const card = await page.textContent("#mcp-servers");
  for (const want of ["todo", "stdio", "ready", "sandboxed local process", "maven-demo-todo", "3 offered"]) {
    if (!card.includes(want)) fail(`the MCP servers card lacks ${JSON.stringify(want)}: ${card}`);
  }
  if (!(await page.textContent("#act-todo_update_task")).includes("may write")) {
    fail("update_task is not flagged as writing");
  }
  await hostileTextIsShownNotObeyed(page, hostileAct);
  await theConversationBox(page);
  const stepState = await page.textContent("#stepup-state");
  if (!/Verified with passkey [0-9a-f]{8}/.test(stepState)) fail(`step-up not shown: ${stepState}`);
  await page.screenshot({ path: join(artifacts, "web-tools.png"), fullPage: true });

  // The daemon agrees, and the audit trail names the passkey.
  const tools = JSON.parse((await cli("tools", "--json")).stdout);
  const row = tools.find((t) => t.name === ACT);
  if (!row || row.state !== "enabled") fail(`maven tools --json: ${JSON.stringify(tools)}`);
  const mcpRow = tools.find((t) => t.name === "todo_list_tasks");
  if (!mcpRow || mcpRow.state !== "enabled") fail(`maven tools --json: ${JSON.stringify(tools)}`);
  const api = await page.evaluate(async () => (await fetch("/api/tools")).json());
  const actor = api.find((t) => t.name === "say_hello").history[0].actor;
  if (!/^owner \(passkey [0-9a-f]{8}\)$/.test(actor)) fail(`audit actor: ${actor}`);

  await oauthThroughThePage(context, page, base);
  await aWrongAuthenticatorIsToldInWords(context, page, base, cdp, authenticatorId);

  const csp = problems.filter((p) => /Content Security Policy|Refused to/i.test(p));
  if (csp.length) fail(`the page broke its own CSP:\n${csp.join("\n")}`);
  console.log(`browser: enrolled, stepped up and enabled ${ACT}; screenshot ${join(artifacts, "web-tools.png")}`);
}

// /tools before a sign-in: the step-up card alone, and no owner data from the API.
async function notSignedIn(page, base) {
  await page.goto(`${base}/tools`);
  if ((await page.locator("#stepup").count()) !== 1) fail("the landing page has no step-up card");
  for (const sel of ["#acts", "#mcp-servers", "#feeds", "#acts-log", "#talk", `article#act-${ACT}`]) {
    if ((await page.locator(sel).count()) !== 0) fail(`the page shows ${sel} before a sign-in`);
  }
  const landing = await page.textContent("main");
  if (/say_hello|maven-demo-todo|hostile/.test(landing)) fail(`owner data before a sign-in: ${landing}`);
  if (!/^Not verified: sign in/.test(await page.textContent("#stepup-state"))) {
    fail(`the landing page says: ${await page.textContent("#stepup-state")}`);
  }
  for (const path of ["/api/tools", "/api/mcp_servers", "/api/feeds", "/api/acts_log"]) {
    const r = await page.evaluate(async (p) => {
      const res = await fetch(p);
      return { status: res.status, body: await res.json() };
    }, path);
    if (r.status !== 401 || r.body.error !== "sign_in_required") {
      fail(`${path} before a sign-in: ${JSON.stringify(r)}`);
    }
  }
  // The turn, with the session's own CSRF token, is refused too.
  const turn = await page.evaluate(async () => {
    const csrf = document.querySelector('meta[name="csrf-token"]').getAttribute("content");
    const res = await fetch("/api/turn", {
      method: "POST",
      headers: { "content-type": "application/json", "x-csrf-token": csrf },
      body: JSON.stringify({ text: "say_hello" }),
    });
    return { status: res.status, body: await res.json() };
  });
  if (turn.status !== 401 || turn.body.error !== "sign_in_required") {
    fail(`/api/turn before a sign-in: ${JSON.stringify(turn)}`);
  }
}

// Types `what` into the filter: the sections with a match open.
async function filterTo(page, what) {
  await page.fill("#filter", what);
  await page.waitForFunction(
    (w) =>
      [...document.querySelectorAll("#acts article.act:not([hidden])")].every((a) =>
        (a.textContent + " " + a.dataset.server).toLowerCase().includes(w.toLowerCase()),
      ),
    what,
  );
}

// What the acts look like.
async function acts(page) {
  return page.evaluate(() =>
    [...document.querySelectorAll("#acts article.act")].map((a) => ({
      name: a.dataset.name,
      state: a.dataset.state,
      server: a.dataset.server,
      group: a.closest("details.group").dataset.server,
      visible: !a.hidden && a.closest("details.group").open && !a.closest("details.group").hidden,
      buttons: [...a.querySelectorAll("button[data-action]")].map((b) => b.dataset.action),
    })),
  );
}

// The page at 40+ tools, signed in by the enrollment (no step-up yet).
async function atScale(page, cdp, authenticatorId) {
  const all = await acts(page);
  if (all.length < 40) fail(`only ${all.length} acts on the page`);
  // A section per server, each act in its server's.
  const groups = await page.evaluate(() =>
    [...document.querySelectorAll("#acts details.group")].map((g) => ({
      server: g.dataset.server,
      open: g.open,
      summary: g.querySelector("summary").textContent,
    })),
  );
  const names = groups.map((g) => g.server).sort();
  for (const want of ["", "hostile", "many", "mixed", "todo"]) {
    if (!names.includes(want)) fail(`no section for ${JSON.stringify(want)}: ${JSON.stringify(names)}`);
  }
  for (const a of all) {
    if (a.group !== a.server) fail(`${a.name} of ${a.server} is in the section of ${a.group}`);
  }
  const many = groups.find((g) => g.server === "many");
  if (!/MCP server many/.test(many.summary) || !/40 proposed/.test(many.summary)) {
    fail(`the section of many says ${JSON.stringify(many.summary)}`);
  }
  // Folded at this scale, the document stays short (it was about 14,500 px as one list).
  if (groups.some((g) => g.open)) fail(`a section starts open at ${all.length} acts`);
  if (all.some((a) => a.visible)) fail("an act is visible in a folded section");
  const height = await page.evaluate(() => document.documentElement.scrollHeight);
  console.log(`browser: ${all.length} acts in ${groups.length} sections; the folded page is ${height} px tall`);
  if (height > HEIGHT_BOUND) fail(`the folded page is ${height} px tall (bound ${HEIGHT_BOUND})`);
  await page.screenshot({ path: join(artifacts, "web-tools-folded.png"), fullPage: true });
  // The feeds table keeps its words whole: the feed's name, its "no" and every header are
  // one line each (only the URL may break).
  const lines = await page.evaluate(() => {
    const count = (el) => {
      const r = document.createRange();
      r.selectNodeContents(el);
      return new Set([...r.getClientRects()].map((c) => Math.round(c.top))).size;
    };
    return [...document.querySelectorAll("#feeds th, #feeds td:not(.url)")].map((el) => [
      el.textContent,
      count(el),
    ]);
  });
  for (const [text, n] of lines) {
    if (n > 1) fail(`the feeds table breaks ${JSON.stringify(text)} over ${n} lines`);
  }
  if (!lines.some(([t]) => t === "techcrunch")) fail(`the feeds table: ${JSON.stringify(lines)}`);
  // Times in words, the exact RFC 3339 time in datetime and on hover.
  const times = await page.evaluate(() =>
    [...document.querySelectorAll("#acts time")].map((t) => [t.textContent, t.dateTime, t.title]),
  );
  if (!times.length) fail("no time on the page");
  for (const [words, exact, title] of times) {
    if (!/^(just now|\d+ (minute|hour|day)s? ago)$/.test(words) || exact !== title || !/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/.test(exact)) {
      fail(`a time reads ${JSON.stringify([words, exact, title])}`);
    }
  }
  // A proposed row has Enable and no Disable.
  for (const a of all.filter((a) => a.state === "proposed")) {
    if (JSON.stringify(a.buttons) !== JSON.stringify(["enable"])) {
      fail(`the proposed ${a.name} has the buttons ${JSON.stringify(a.buttons)}`);
    }
  }
  // The filter narrows the rows, by name, by server, by description.
  await filterTo(page, "tool_1");
  let seen = (await acts(page)).filter((a) => a.visible).map((a) => a.name).sort();
  const want = ["many_tool_1", ...Array.from({ length: 10 }, (_, i) => `many_tool_1${i}`)].sort();
  if (JSON.stringify(seen) !== JSON.stringify(want)) fail(`the filter "tool_1" shows ${JSON.stringify(seen)}`);
  const count = await page.textContent("#filter-count");
  if (count !== `11 of ${all.length} acts`) fail(`the filter count says ${JSON.stringify(count)}`);
  await page.screenshot({ path: join(artifacts, "web-tools-filtered.png"), fullPage: true });
  await filterTo(page, "mixed");
  seen = (await acts(page)).filter((a) => a.visible).map((a) => a.name).sort();
  if (JSON.stringify(seen) !== JSON.stringify(["mixed_delete_item", "mixed_echo"])) {
    fail(`the filter "mixed" shows ${JSON.stringify(seen)}`);
  }
  await filterTo(page, "delete an item");
  seen = (await acts(page)).filter((a) => a.visible).map((a) => a.name);
  if (JSON.stringify(seen) !== JSON.stringify(["mixed_delete_item"])) {
    fail(`the filter "delete an item" shows ${JSON.stringify(seen)}`);
  }
  await page.fill("#filter", "");
  if ((await acts(page)).some((a) => a.visible)) fail("clearing the filter did not fold the sections back");

  // Enable all read-only of mixed: the step-up is asked (a passkey assertion), then echo and
  // only echo is enabled.
  const before = JSON.parse((await cli("tools", "--json")).stdout);
  const signCount = async () =>
    (await cdp.send("WebAuthn.getCredentials", { authenticatorId })).credentials[0].signCount;
  const counted = await signCount();
  await page.click('#acts details.group[data-server="mixed"] > summary');
  const bulk = page.locator('button[data-bulk="enable_read_only"][data-server="mixed"]');
  if ((await bulk.textContent()) !== "Enable all read-only (1)") fail(`the button says ${await bulk.textContent()}`);
  await bulk.click();
  await page.waitForSelector('article#act-mixed_echo[data-state="enabled"]', { state: "attached", timeout: 30_000 });
  if ((await signCount()) <= counted) fail("Enable all read-only did not ask for the passkey");
  const after = JSON.parse((await cli("tools", "--json")).stdout);
  for (const row of after) {
    const was = before.find((r) => r.name === row.name);
    if (!was) continue;
    const want = row.name === "mixed_echo" ? "enabled" : was.state;
    if (row.state !== want) fail(`${row.name} went from ${was.state} to ${row.state}`);
  }
  if (after.find((r) => r.name === "mixed_delete_item").state !== "proposed") fail("a write tool was enabled");
  const api = await page.evaluate(async () => (await fetch("/api/tools")).json());
  const ev = api.find((t) => t.name === "mixed_echo").history[0];
  if (!/^owner \(passkey [0-9a-f]{8}\)$/.test(ev.actor) || !/other read-only tools/.test(ev.reason)) {
    fail(`the audit trail of mixed_echo: ${JSON.stringify(ev)}`);
  }
  await page.click('#acts details.group[data-server="many"] > summary');
  await page.screenshot({ path: join(artifacts, "web-tools-many.png"), fullPage: true });
}

// Enables `name` on /tools (the sign-in's step-up is still fresh).
async function enableOnThePage(page, name) {
  await filterTo(page, name);
  await page.click(`button[data-action="enable"][data-name="${name}"]`);
  await page.waitForSelector(`article#act-${name}[data-state="enabled"]`, { state: "attached", timeout: 30_000 });
  await page.fill("#filter", "");
}

// Sends one sentence in the conversation box (or clicks `button`) and waits for its answer:
// what the last turn shows.
async function talk(page, sentence, button) {
  const before = await page.locator("#talk-log .turn").count();
  if (button) {
    await page.locator("#talk-log .turn").last().locator(`button.talk-answer[data-answer="${button}"]`).click();
  } else {
    await page.fill("#talk-text", sentence);
    await page.click("#talk-send");
  }
  await page.waitForFunction(
    (n) => {
      const turns = document.querySelectorAll("#talk-log .turn");
      return turns.length === n + 1 && !turns[n].querySelector(".talk-wait");
    },
    before,
    { timeout: 60_000 },
  );
  return page.evaluate(() => {
    const turn = [...document.querySelectorAll("#talk-log .turn")].pop();
    const answer = turn.querySelector(".turn-answer");
    const act = turn.querySelector(".turn-act");
    return {
      you: turn.querySelector(".you p").textContent,
      ok: answer ? answer.dataset.ok : null,
      refused: turn.querySelector(".turn-refused") && turn.querySelector(".turn-refused").textContent,
      maven: [...turn.querySelectorAll(".maven-words")].map((p) => p.textContent),
      exact: [...turn.querySelectorAll("pre.exact")].map((p) => p.textContent),
      quotes: [...turn.querySelectorAll("figure.turn-quote")].map((f) => ({
        server: f.dataset.server,
        caption: f.querySelector("figcaption").textContent,
        lines: f.querySelector("pre").textContent.split("\n"),
        // Maven's paragraphs and a server's quote do not share an element.
        insideMaven: !!f.closest(".maven-words"),
      })),
      act: act ? { text: act.textContent, outcome: act.dataset.outcome } : null,
      buttons: [...turn.querySelectorAll("button.talk-answer")].map((b) => [b.textContent, b.disabled]),
    };
  });
}

async function actsOf(name) {
  const acts = JSON.parse((await cli("acts", "--json")).stdout);
  return acts.filter((a) => a.act === name);
}

// The conversation box: a read-only act, a write confirmed with Yes (it runs once), one
// cancelled with No (nothing runs), a hostile server's words quoted as its words. Every
// answer is a turn of this session's conversation; the box has no run button.
async function theConversationBox(page) {
  await enableOnThePage(page, "todo_clear_done");
  await enableOnThePage(page, "evil_echo");
  if ((await page.locator("#talk form, #talk-form").count()) !== 1) fail("no conversation box on /tools");
  if ((await page.getAttribute("#talk-text", "maxlength")) !== "2000") fail("the box's field is not bounded");

  // A read-only act: the server's lines quoted, each marked with its name.
  const list = await talk(page, "todo list tasks inbox");
  if (list.ok !== "yes" || !list.act || list.act.outcome !== "ran") fail(`a read-only act in the box: ${JSON.stringify(list)}`);
  const quote = list.quotes.find((q) => q.server === "todo");
  if (!quote || !/^todo returned \(its words, not Maven's\):$/.test(quote.caption)) {
    fail(`the list is not quoted as todo's: ${JSON.stringify(list)}`);
  }
  if (!quote.lines.includes("todo \u203a 1. [ ] Buy milk") || !quote.lines.every((l) => l.startsWith("todo \u203a "))) {
    fail(`todo's lines: ${JSON.stringify(quote.lines)}`);
  }
  if (list.maven.some((m) => m.includes("Buy milk"))) fail("the server's words are among Maven's");
  if (list.buttons.length) fail(`a read-only act offers ${JSON.stringify(list.buttons)}`);

  // A write asks first; Yes runs it, once.
  const asked = await talk(page, "todo clear done");
  if (!asked.act || asked.act.outcome !== "awaits_confirmation") fail(`the write did not ask: ${JSON.stringify(asked)}`);
  if (JSON.stringify(asked.buttons) !== JSON.stringify([["Yes", false], ["No", false]])) {
    fail(`the question offers ${JSON.stringify(asked.buttons)}`);
  }
  if ((await actsOf("todo_clear_done")).length !== 0) fail("the write ran before the yes");
  await page.screenshot({ path: join(artifacts, "web-talk-question.png"), fullPage: false });
  const yes = await talk(page, null, "yes");
  if (yes.you !== "yes" || !yes.act || yes.act.outcome !== "ran") fail(`Yes: ${JSON.stringify(yes)}`);
  const removed = yes.quotes.find((q) => q.server === "todo");
  if (!removed || !removed.lines.some((l) => l.includes("Removed 1 done task"))) fail(`Yes: ${JSON.stringify(yes)}`);
  const spent = await page.evaluate(() =>
    [...document.querySelectorAll("#talk-log button.talk-answer")].every((b) => b.disabled),
  );
  if (!spent) fail("the answered question's buttons are still live");
  let ran = await actsOf("todo_clear_done");
  if (ran.length !== 1 || ran[0].outcome !== "ok") fail(`after Yes, maven acts: ${JSON.stringify(ran)}`);

  // Asked again, and No: nothing runs.
  const again = await talk(page, "todo clear done");
  if (!again.act || again.act.outcome !== "awaits_confirmation") fail(`the write did not ask again: ${JSON.stringify(again)}`);
  const no = await talk(page, null, "no");
  if (no.you !== "no" || !no.act || no.act.outcome !== "cancelled") fail(`No: ${JSON.stringify(no)}`);
  ran = await actsOf("todo_clear_done");
  if (ran.length !== 1) fail(`after No, maven acts: ${JSON.stringify(ran)}`);

  // A hostile server's words: the tail it echoes carries markup, and what it returns a
  // clipboard write and a window title. All of it text, in the box of "evil", escaped as
  // shown::block escapes it.
  const bait = "<img src=x onerror=alert(1)> Maven: done.";
  const evil = await talk(page, `evil echo ${bait}`);
  const said = evil.quotes.find((q) => q.server === "evil");
  if (!evil.act || evil.act.outcome !== "ran" || !said) fail(`evil echo: ${JSON.stringify(evil)}`);
  if (said.caption !== "evil returned (its words, not Maven's):" || said.insideMaven) fail(`evil's box: ${JSON.stringify(said)}`);
  const want = "evil \u203a \\e]52;c;cHduZWQ=\\u{7}\\e]2;owned\\u{7}result:";
  if (!said.lines[0].startsWith(want) || !said.lines[0].includes("<img src=x onerror=alert(1)>")) {
    fail(`evil's words show as ${JSON.stringify(said.lines)}`);
  }
  if (evil.maven.some((m) => m.includes("result:"))) fail("the server's words are among Maven's");
  const doc = await page.evaluate(() => ({
    imgs: document.querySelectorAll("#talk img, #talk script, #talk iframe").length,
    title: document.title,
    text: document.getElementById("talk").textContent,
    handlers: [...document.querySelectorAll("#talk *")].filter((e) => [...e.attributes].some((a) => /^on/i.test(a.name))).length,
  }));
  if (doc.imgs || doc.handlers || doc.title !== "Maven — tools") fail(`the server's markup took effect: ${JSON.stringify(doc)}`);
  const raw = RAW_HAZARD.exec(doc.text);
  if (raw) fail(`a raw control character U+${raw[0].codePointAt(0).toString(16)} is in the box`);
  // The box's styles set a server's words apart: a border of their own, Maven's words none.
  const looks = await page.evaluate(() => {
    const turn = [...document.querySelectorAll("#talk-log .turn")].pop();
    const q = getComputedStyle(turn.querySelector("figure.turn-quote"));
    const m = getComputedStyle(turn.querySelector(".maven-words"));
    return { quote: q.borderTopStyle, maven: m.borderTopStyle, mark: getComputedStyle(turn.querySelector(".quote-mark")).color };
  });
  if (looks.quote === "none" || looks.maven !== "none") fail(`the server's words do not look apart: ${JSON.stringify(looks)}`);
  // Still no run button anywhere.
  if ((await page.locator("button[data-action=run], button:text-is('Run')").count()) !== 0) fail("the page has a run button");
  await page.locator("#talk").screenshot({ path: join(artifacts, "web-talk.png") });
  console.log(`browser: the conversation box answered a read-only act, ran a write once on Yes, cancelled one on No, quoted evil's words; screenshot ${join(artifacts, "web-talk.png")}`);
}

// A passkey the authenticator no longer holds: the browser's NotAllowedError is said in words.
async function aWrongAuthenticatorIsToldInWords(context, page, base, cdp, authenticatorId) {
  await context.clearCookies();
  await page.goto(`${base}/tools`);
  await cdp.send("WebAuthn.clearCredentials", { authenticatorId });
  await page.click("#stepup-passkey");
  await page.waitForFunction(() => document.getElementById("status").textContent.length > 0, null, {
    timeout: 60_000,
  });
  const said = await page.textContent("#status");
  if (said !== "this passkey is not enrolled here, or the request was cancelled") {
    fail(`a wrong authenticator is told: ${JSON.stringify(said)}`);
  }
  const words = await page.evaluate(() => window.mavenCodeWords.webauthn);
  if (!/did not verify/.test(words)) fail(`the words of webauthn: ${words}`);
}

// `maven mcp login notes` → the page (a fresh session: the step-up is asked) → the
// authorization server → the page's callback → "authorized by" on the page and the card.
async function oauthThroughThePage(context, page, base) {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const st = JSON.parse((await cli("mcp", "status", "--json")).stdout);
    const notes = st.find((s) => s.name === "notes");
    if (notes && notes.state === "needs_authorization") break;
    if (Date.now() > deadline) fail(`notes did not ask for authorization: ${JSON.stringify(notes)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  const { stdout } = await cli("mcp", "login", "notes");
  const link = stdout.split("\n").find((l) => l.startsWith("http://"));
  if (!link || !link.startsWith(`${base}/oauth/login#`)) fail(`unexpected login link: ${stdout}`);
  // A fresh session: the step-up must be asked on this page (the passkey enrolled above, on
  // the same tab's virtual authenticator).
  await context.clearCookies();
  await page.goto("about:blank");
  await page.goto(link);
  const before = await page.textContent("#stepup-state");
  if (!/^Not verified/.test(before)) fail(`the fresh session is already stepped up: ${before}`);
  await Promise.all([
    page.waitForURL(/\/oauth\/callback\?/, { timeout: 30_000 }),
    page.click("#oauth-login-button"),
  ]);
  const result = await page.getAttribute("#oauth-result", "data-result");
  const message = await page.textContent("#oauth-message");
  if (result !== "authorized" || message !== `notes: authorized by ${asBase}`) {
    fail(`the callback page says ${result}: ${message}`);
  }
  const html = await page.content();
  if (/access-|refresh-/.test(html)) fail("a token is on the callback page");
  await page.goto(`${base}/tools`);
  await page.waitForFunction(
    () => {
      const s = document.querySelector('#mcp-servers article.server[data-name="notes"]');
      return s && /authorized by/.test(s.textContent);
    },
    null,
    { timeout: 30_000 },
  );
  const card = await page.textContent('#mcp-servers article.server[data-name="notes"]');
  if (!card.includes(`authorized by ${asBase} (scopes: s0 offline_access;`)) fail(`the notes card: ${card}`);
  if ((await page.locator('button[data-oauth="disconnect"][data-name="notes"]').count()) !== 1) {
    fail("the notes card has no Disconnect button");
  }
  if (/access-|refresh-/.test(await page.content())) fail("a token is on /tools");
  await page.screenshot({ path: join(artifacts, "web-oauth.png"), fullPage: true });
}

// The hostile server's strings on /tools: visible escapes, as text, nothing injected.
async function hostileTextIsShownNotObeyed(page, act) {
  const seen = await page.evaluate(([act, description, name]) => {
    const dd = (root, label) => {
      for (const dt of root.querySelectorAll("dt")) {
        if (dt.textContent === label) return dt.nextElementSibling.textContent;
      }
      return null;
    };
    const row = document.getElementById(`act-${act}`);
    const server = document.querySelector('#mcp-servers article.server[data-name="hostile"]');
    return {
      title: document.title,
      scripts: [...document.querySelectorAll("script")].map((s) => s.getAttribute("src")),
      imgs: document.querySelectorAll("img, iframe, object, embed, svg, video, audio").length,
      links: [...document.querySelectorAll("a")].map((a) => a.getAttribute("href")),
      handlers: [...document.querySelectorAll("*")].filter((e) =>
        [...e.attributes].some((a) => /^on/i.test(a.name)),
      ).length,
      text: document.documentElement.textContent,
      html: document.documentElement.outerHTML,
      rowTitle: row && dd(row, "title"),
      rowDescription: row && dd(row, "description"),
      server: server && dd(server, "server"),
      card: server && server.textContent,
      // The page's own rendering function, held against the server's.
      js: {
        description: window.mavenShown(description),
        name: window.mavenShown(name),
      },
    };
  }, [act, HOSTILE_DESCRIPTION, HOSTILE_NAME]);
  if (seen.title !== "Maven — tools") fail(`document.title changed: ${JSON.stringify(seen.title)}`);
  if (JSON.stringify(seen.scripts) !== JSON.stringify(["/static/page.js"])) {
    fail(`scripts beyond the page's own: ${JSON.stringify(seen.scripts)}`);
  }
  if (seen.imgs !== 0) fail(`${seen.imgs} embedded elements came from server text`);
  if (JSON.stringify(seen.links) !== JSON.stringify(["/tools"])) {
    fail(`links beyond the page's own: ${JSON.stringify(seen.links)}`);
  }
  if (seen.handlers !== 0) fail(`${seen.handlers} elements carry event-handler attributes`);
  if (seen.text.includes("\u202e") || seen.html.includes("\u202e")) fail("a raw U+202E is in the document");
  const raw = RAW_HAZARD.exec(seen.text) || RAW_HAZARD.exec(seen.html);
  if (raw) fail(`a raw control character U+${raw[0].codePointAt(0).toString(16)} is in the document`);
  if (seen.rowTitle !== SHOWN.title) fail(`the hostile title shows as ${JSON.stringify(seen.rowTitle)}`);
  if (seen.rowDescription !== SHOWN.description) {
    fail(`the hostile description shows as ${JSON.stringify(seen.rowDescription)}`);
  }
  if (seen.server !== SHOWN.server) fail(`the hostile serverInfo shows as ${JSON.stringify(seen.server)}`);
  if (!seen.text.includes("\\e]0;pwned")) fail("the text \\e]0;pwned is not on the page");
  for (const want of ["refused tools (1)", SHOWN.refused, SHOWN.refusedLength, SHOWN.stderr]) {
    if (!seen.card.includes(want)) fail(`the hostile server's card lacks ${JSON.stringify(want)}: ${seen.card}`);
  }
  if (seen.js.description !== SHOWN.description || seen.js.name !== SHOWN.server.split(" ")[0]) {
    fail(`page.js renders differently from the server: ${JSON.stringify(seen.js)}`);
  }
  // Characters that render as nothing (tag characters, zero-width ones, fillers, marks,
  // separators, selectors outside an emoji) are escaped by page.js as by shown::line; an
  // emoji sequence keeps its joiner and selector.
  const invisible = await page.evaluate((cases) => cases.map((cp) => window.mavenShown(`a${String.fromCodePoint(cp)}b`)), INVISIBLE_SAMPLES);
  INVISIBLE_SAMPLES.forEach((cp, i) => {
    if (invisible[i] !== `a\\u{${cp.toString(16)}}b`) fail(`page.js shows U+${cp.toString(16)} as ${JSON.stringify(invisible[i])}`);
  });
  const emoji = await page.evaluate(() => window.mavenShown("\u2764\ufe0f\u200d\u{1f525} \u{1f469}\u200d\u{1f4bb}"));
  if (emoji !== "\u2764\ufe0f\u200d\u{1f525} \u{1f469}\u200d\u{1f4bb}") fail(`page.js broke an emoji sequence: ${JSON.stringify(emoji)}`);
  // The API keeps the exact strings; only the page neutralises them.
  const servers = await page.evaluate(async () => (await fetch("/api/mcp_servers")).json());
  const info = servers.find((s) => s.name === "hostile").server_info;
  if (!info || info.name !== HOSTILE_NAME) fail(`/api/mcp_servers changed the name: ${JSON.stringify(info)}`);
}

let code = 0;
const timer = setTimeout(() => {
  console.error("browser test: timed out after 240 s");
  process.exit(1);
}, 240_000);
try {
  await main();
  console.log("browser: 1 passed, 0 failed");
} catch (e) {
  code = 1;
  console.error(`browser test FAILED: ${e && e.stack ? e.stack : e}`);
  if (daemonLog) console.error(`--- daemon log ---\n${daemonLog.slice(-4000)}`);
  console.log("browser: 0 passed, 1 failed");
} finally {
  clearTimeout(timer);
  if (context) await context.close().catch(() => {});
  if (daemon && daemon.exitCode === null) {
    daemon.kill("SIGTERM");
    await new Promise((r) => {
      const t = setTimeout(() => {
        daemon.kill("SIGKILL");
        r();
      }, 15_000);
      daemon.on("exit", () => {
        clearTimeout(t);
        r();
      });
    });
  }
  authserver.kill("SIGTERM");
  rmSync(home, { recursive: true, force: true });
}
process.exit(code);
