//! Maven's configuration file (C-1..C-6): the model, its validation and the webfetch doors
//! built from it.
//!
//! The file is parsed into a `serde_json::Value` first and then walked by hand, so that every
//! error names the file, the JSON path, the value found and what was expected, and so that all
//! errors of a file are reported at once. Every block is shape-checked, including blocks that are
//! written with `"enabled": false`: a typo must not wait for the day the block is switched on.

#![warn(clippy::expect_used, clippy::panic)]

use std::collections::BTreeMap;
use std::fmt;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Map, Value};

// The tool-name pattern (A-9) and the default `max_tools` (A-1) are the allowlist's.
use allowlist::catalogue::{valid_tool_name, DEFAULT_MAX_TOOLS};

mod error;

pub use error::{Error, Problem, ProblemKind};

/// The hard maximum of any MCP request deadline (M-6).
const MAX_MCP_TIMEOUT: Duration = Duration::from_secs(600);

/// A string that must never be shown: its `Debug` and `Display` print `••••`.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps a value that must not be shown.
    pub fn new(value: impl Into<String>) -> Secret {
        Secret(value.into())
    }

    /// The value itself, for the one place that sends it (a header, a child's environment).
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("••••")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("••••")
    }
}

/// The whole configuration, validated.
#[derive(Debug, Clone)]
pub struct Config {
    /// The file it came from; `None` when no file existed and every default applies.
    pub source: Option<PathBuf>,
    /// The `web` block.
    pub web: WebConfig,
    /// The `router` block.
    pub router: RouterConfig,
    /// The `fetch` block.
    pub fetch: FetchConfig,
    /// The `feeds` list, in file order.
    pub feeds: Vec<FeedConfig>,
    /// `feed_min_interval`: no feed is polled more often than this (default 5 minutes).
    pub feed_min_interval: Duration,
    /// The `mcp_servers` blocks, by name.
    pub mcp_servers: BTreeMap<String, McpServerConfig>,
    /// The `mcp_timing` block.
    pub mcp_timing: McpTiming,
    /// The `acts` list, in file order.
    pub acts: Vec<ActConfig>,
}

/// The `mcp_timing` block: how the connection manager retries, checks and re-lists servers.
/// The defaults are A-4's (1 minute doubling to 30, jittered).
///
/// Not `mcp::ManagerOptions` itself: those also hold the client's options, the debounce and the
/// stagger, which the file does not set, and are neither `Debug` nor comparable. This block
/// produces them with [`McpTiming::manager_options`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpTiming {
    /// First retry delay after a failed dial.
    pub backoff_min: Duration,
    /// Largest retry delay.
    pub backoff_max: Duration,
    /// How often a live server is pinged.
    pub health: Duration,
    /// How often a live server's tools are listed again (besides `list_changed`).
    pub refresh: Duration,
    /// A connection that dies sooner than this after its dial counts as a failed dial.
    pub min_uptime: Duration,
}

impl Default for McpTiming {
    fn default() -> Self {
        let d = mcp::ManagerOptions::default();
        McpTiming {
            backoff_min: d.backoff_min,
            backoff_max: d.backoff_max,
            health: d.health_interval,
            refresh: d.refresh_interval,
            min_uptime: d.min_uptime,
        }
    }
}

impl McpTiming {
    /// The manager's options with these timings.
    pub fn manager_options(&self) -> mcp::ManagerOptions {
        let d = mcp::ManagerOptions::default();
        let debounce = d.debounce;
        d.with_backoff(self.backoff_min, self.backoff_max)
            .with_periods(self.health, self.refresh, debounce)
            .with_min_uptime(self.min_uptime)
    }
}

/// The `web` block: the local page.
#[derive(Debug, Clone)]
pub struct WebConfig {
    /// The address the page listens on (default `127.0.0.1:8765`).
    pub listen: SocketAddr,
    /// Host names the page answers to (DNS-rebinding defence).
    pub hosts: Vec<String>,
    /// An argon2id hash of the fallback step-up passphrase.
    pub passphrase_hash: Option<Secret>,
    /// How long a step-up keeps a browser session signed in, so that it may see the owner's
    /// data (`session_hours`, default 12, at most 720). Enabling and disabling still need a
    /// step-up of the last five minutes.
    pub session: Duration,
}

/// Default of `web.session_hours`.
pub const DEFAULT_SESSION_HOURS: u64 = 12;
/// Largest `web.session_hours`: thirty days.
pub const MAX_SESSION_HOURS: u64 = 720;

/// Which router chooses what a turn does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RouterKind {
    /// Fixed rules, no model (`"rules"`, the default).
    Rules,
    /// An OpenAI-compatible chat-completions endpoint (`"llm"`).
    Llm,
}

/// The `router` block.
#[derive(Debug, Clone)]
pub struct RouterConfig {
    /// `kind`: which router.
    pub kind: RouterKind,
    /// The OpenAI-compatible chat-completions URL (llm router).
    pub url: Option<String>,
    /// The model name sent to the endpoint (llm router).
    pub model: Option<String>,
    /// The model's context size in tokens (at least 512; default 4096).
    pub context_tokens: u64,
    /// Deadline of one request to the endpoint (default 30 s).
    pub timeout: Duration,
    /// Whether the endpoint may be a private or loopback address.
    pub allow_private: bool,
    /// Static headers sent to the endpoint (bearer tokens).
    pub headers: BTreeMap<String, Secret>,
}

/// The `fetch` block: global host lists and the defaults of every door.
///
/// Not a `webfetch::DoorConfig`: a door also has a name, `allow_private`, `allow_cgnat` and
/// `max_redirects`, which this block does not set; [`Config::door`] builds each door from it.
#[derive(Debug, Clone)]
pub struct FetchConfig {
    /// Host patterns every door may reach (empty: any host).
    pub allow_hosts: Vec<String>,
    /// Host patterns no door may reach.
    pub deny_hosts: Vec<String>,
    /// Largest body accepted, in bytes.
    pub max_body: u64,
    /// Least time between two requests to one host.
    pub host_interval: Duration,
    /// Deadlines of each phase of a request (`fetch.timeouts`).
    pub timeouts: webfetch::Timeouts,
}

/// One entry of `feeds`.
#[derive(Debug, Clone)]
pub struct FeedConfig {
    /// The feed's name (letters, digits, `-`, `_`, `.`; unique).
    pub name: String,
    /// The feed's http or https URL.
    pub url: String,
    /// How often it is polled (never below `feed_min_interval`; default 30 minutes).
    pub interval: Duration,
    /// Whether it is polled at all.
    pub enabled: bool,
    /// Its own body cap, instead of the `fetch` block's.
    pub max_body: Option<u64>,
    /// Whether it may be on a private or loopback address.
    pub allow_private: bool,
    /// How many of the newest items the first fetch notes.
    pub baseline: u64,
}

/// How an MCP server is reached.
///
/// Not `mcp::Transport`: that holds secrets as plain strings and, for HTTP, the finished
/// webfetch door, which is built from the `fetch` block together with this server's
/// `allow_private` and `host_interval`. [`Config::mcp_server`] produces the `mcp::Transport`.
#[derive(Debug, Clone)]
pub enum McpTarget {
    /// A local child process (`command`).
    Stdio {
        /// Program to run (no shell).
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Extra environment of the child.
        env: BTreeMap<String, Secret>,
        /// Its sandbox (`sandbox`, default `true`); `None` when the block says
        /// `"sandbox": false`, the owner's explicit choice to run it as themselves.
        sandbox: Option<sandbox::Policy>,
    },
    /// A Streamable HTTP endpoint (`url`).
    Http {
        /// The endpoint URL.
        url: String,
        /// Static headers sent to the endpoint.
        headers: BTreeMap<String, Secret>,
        /// Whether the endpoint may be a private or loopback address.
        allow_private: bool,
        /// Least time between two requests to the endpoint's host; none unless set.
        host_interval: Option<Duration>,
    },
}

/// One entry of `mcp_servers`.
#[derive(Debug, Clone)]
pub struct McpServerConfig {
    /// The block's name (`mcp_servers.<name>`).
    pub name: String,
    /// How the server is reached.
    pub target: McpTarget,
    /// The target as the file writes it: the command and its arguments joined by spaces, or
    /// the URL, with every `${NAME}` reference left unexpanded. What status shows (masked).
    pub written: String,
    /// Whether the server is dialled at all (default false).
    pub enabled: bool,
    /// Tool names the owner allows; empty: every tool, up to `max_tools`.
    pub allow_tools: Vec<String>,
    /// Most tools the server may offer without `allow_tools` (default 12).
    pub max_tools: u64,
    /// The server's request deadlines.
    pub timeouts: mcp::McpTimeouts,
    /// Which protocol era to speak: `"auto"` (default), `"2026-07-28"` or `"2025-11-25"`.
    pub protocol: mcp::Protocol,
    /// HTTP only: the `oauth` block (a pre-registered client, a client metadata document).
    /// Without one, an HTTP server that asks for OAuth is authorized with dynamic
    /// registration.
    pub oauth: McpOAuthConfig,
}

/// The `oauth` block of an HTTP server.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct McpOAuthConfig {
    /// `oauth.client_id`: a client registered with the authorization server beforehand.
    pub client_id: Option<String>,
    /// `oauth.client_secret`: its secret, only as a `${ENV}` reference.
    pub client_secret: Option<Secret>,
    /// `oauth.client_metadata_url`: an https URL of Maven's Client ID Metadata Document,
    /// used as the client id where the authorization server supports them.
    pub client_metadata_url: Option<String>,
    /// `oauth.dpop`: `"auto"` (default: DPoP when both the authorization server and the
    /// server speak it), `"never"`, `"required"`.
    pub dpop: oauth::DpopMode,
}

/// One entry of `acts`: a local command proposed from config.
#[derive(Debug, Clone)]
pub struct ActConfig {
    /// The act's name (lowercase letters, digits and `_`; unique).
    pub name: String,
    /// The argv to run (no shell).
    pub cmd: Vec<String>,
    /// Whether the act only reads; otherwise it is a write, confirmed every time (default false).
    pub read_only: bool,
    /// Deadline of one run (default 30 s).
    pub timeout: Duration,
    /// Most bytes of output kept (default 64 KiB).
    pub max_output: u64,
}

/// Where the configuration is read from when `--config` is not given.
pub fn default_config_path() -> PathBuf {
    xdg_dir("XDG_CONFIG_HOME", ".config").join("maven/config.json")
}

/// Where the data directory is when `--data` is not given.
pub fn default_data_dir() -> PathBuf {
    xdg_dir("XDG_DATA_HOME", ".local/share").join("maven")
}

fn xdg_dir(var: &str, fallback: &str) -> PathBuf {
    match std::env::var_os(var) {
        Some(v) if !v.is_empty() => PathBuf::from(v),
        _ => {
            let home = std::env::var_os("HOME").unwrap_or_else(|| ".".into());
            PathBuf::from(home).join(fallback)
        }
    }
}

impl McpServerConfig {
    /// What the allowlist needs to know of this block.
    pub fn policy(&self) -> allowlist::ServerPolicy {
        allowlist::ServerPolicy {
            name: self.name.clone(),
            allow_tools: self.allow_tools.clone(),
            max_tools: usize::try_from(self.max_tools).unwrap_or(usize::MAX),
        }
    }
}

impl Config {
    /// What the configuration approves to run, for the allowlist's executor: each server
    /// block's `allow_tools`, and the local acts.
    pub fn approvals(&self) -> allowlist::Approvals {
        allowlist::Approvals {
            servers: self
                .mcp_servers
                .iter()
                .map(|(name, block)| (name.clone(), block.allow_tools.clone()))
                .collect(),
            acts: self
                .acts
                .iter()
                .map(|a| allowlist::LocalAct {
                    name: a.name.clone(),
                    cmd: a.cmd.clone(),
                    read_only: a.read_only,
                    timeout: a.timeout,
                    max_output: a.max_output,
                })
                .collect(),
        }
    }

    /// What the file configures, as `maven config check` and `maven doctor` say it:
    /// `2 feeds, 1 MCP servers, 0 acts`.
    pub fn counts(&self) -> String {
        format!(
            "{} feeds, {} MCP servers, {} acts",
            self.feeds.len(),
            self.mcp_servers.len(),
            self.acts.len()
        )
    }

    /// Loads the configuration. `explicit` is the `--config` argument: an explicitly named file
    /// must exist; the default file may be missing, which means every default.
    pub fn load(explicit: Option<&Path>) -> Result<Config, Error> {
        let path = explicit
            .map(Path::to_path_buf)
            .unwrap_or_else(default_config_path);
        let file = path.display().to_string();
        match std::fs::read(&path) {
            Ok(bytes) => Config::parse(&file, &bytes, &|k| std::env::var(k).ok()).map(|mut c| {
                c.source = Some(path);
                c
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && explicit.is_none() => {
                Ok(Config::defaults())
            }
            Err(source) => Err(Error::Read { file, source }),
        }
    }

    /// Every default: nothing external configured.
    pub fn defaults() -> Config {
        let mut errors = Vec::new();
        let env = |_: &str| None;
        let mut v = Validator {
            problems: &mut errors,
            env: &env,
        };
        let empty = Map::new();
        let cfg = v.config(&empty);
        debug_assert!(errors.is_empty(), "defaults must validate: {errors:?}");
        cfg
    }

    /// Parses and validates the bytes of a config file. `env` looks up `${NAME}` references.
    pub fn parse(
        file: &str,
        bytes: &[u8],
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Config, Error> {
        let text = std::str::from_utf8(bytes).map_err(|e| Error::Encoding {
            file: file.to_string(),
            offset: e.valid_up_to(),
        })?;
        let value: Value = serde_json::from_str(text).map_err(|e| Error::Syntax {
            file: file.to_string(),
            line: e.line(),
            column: e.column(),
            message: strip_position(&e.to_string()).to_string(),
        })?;
        let Value::Object(root) = &value else {
            return Err(Error::Invalid {
                file: file.to_string(),
                problems: vec![Problem {
                    path: String::new(),
                    kind: ProblemKind::WrongType {
                        expected: "a JSON object at the top level",
                        found: describe(&value),
                    },
                }],
            });
        };
        let mut problems = Vec::new();
        let mut v = Validator {
            problems: &mut problems,
            env,
        };
        let cfg = v.config(root);
        if problems.is_empty() {
            Ok(cfg)
        } else {
            Err(Error::Invalid {
                file: file.to_string(),
                problems,
            })
        }
    }

    /// The webfetch door called `name`: `fetch` (the global block), `feed:<name>`,
    /// `mcp:<name>` (an HTTP server) or `router`.
    pub fn door(&self, name: &str) -> Result<webfetch::DoorConfig, String> {
        let f = &self.fetch;
        let mut door = webfetch::DoorConfig::new(name);
        door.allow_hosts = f.allow_hosts.clone();
        door.deny_hosts = f.deny_hosts.clone();
        door.max_body = f.max_body;
        door.host_interval = f.host_interval;
        door.timeouts = f.timeouts;
        if name == "fetch" {
            return Ok(door);
        }
        if name == "router" {
            door.allow_private = self.router.allow_private;
            door.timeouts.total = self.router.timeout;
            return Ok(door);
        }
        if let Some(feed) = name.strip_prefix("feed:") {
            let Some(fc) = self.feeds.iter().find(|x| x.name == feed) else {
                return Err(format!("no feed named {feed:?} in the config"));
            };
            door.allow_private = fc.allow_private;
            if let Some(m) = fc.max_body {
                door.max_body = m;
            }
            return Ok(door);
        }
        if let Some(server) = name.strip_prefix("mcp:") {
            let Some(sc) = self.mcp_servers.get(server) else {
                return Err(format!("no MCP server named {server:?} in the config"));
            };
            let McpTarget::Http {
                allow_private,
                host_interval,
                ..
            } = &sc.target
            else {
                return Err(format!(
                    "MCP server {server:?} is a local process, not an HTTP endpoint"
                ));
            };
            door.allow_private = *allow_private;
            // A JSON-RPC session is many small requests to one endpoint: no per-host
            // interval unless the block asks for one.
            door.host_interval = host_interval.unwrap_or(Duration::ZERO);
            // The server's own deadlines (M-6) govern its requests: the door's must not cut a
            // slow call short.
            let longest = sc.timeouts.call.max(sc.timeouts.init).max(sc.timeouts.list);
            door.timeouts.headers = door.timeouts.headers.max(longest);
            door.timeouts.total = door.timeouts.total.max(longest);
            return Ok(door);
        }
        Err(format!(
            "unknown door {name:?}: expected fetch, router, feed:<name> or mcp:<name>"
        ))
    }

    /// The MCP crate's view of one configured server.
    pub fn mcp_server(&self, name: &str) -> Option<mcp::ServerConfig> {
        let sc = self.mcp_servers.get(name)?;
        let transport = match &sc.target {
            McpTarget::Stdio {
                command, args, env, ..
            } => mcp::Transport::Stdio {
                command: command.clone(),
                args: args.clone(),
                env: env
                    .iter()
                    .map(|(k, v)| (k.clone(), v.expose().to_string()))
                    .collect(),
            },
            McpTarget::Http { url, headers, .. } => mcp::Transport::Http {
                url: url.clone(),
                headers: headers
                    .iter()
                    .map(|(k, v)| (k.clone(), v.expose().to_string()))
                    .collect(),
                door: self.door(&format!("mcp:{name}")).ok()?,
            },
        };
        Some(mcp::ServerConfig {
            protocol: sc.protocol,
            name: name.to_string(),
            transport,
            timeouts: sc.timeouts,
        })
    }
}

/// serde_json appends " at line L column C"; we print the position ourselves.
fn strip_position(msg: &str) -> &str {
    match msg.rfind(" at line ") {
        Some(i) => &msg[..i],
        None => msg,
    }
}

/// A short rendering of a value for error messages: its JSON, cut at 60 characters.
fn describe(v: &Value) -> String {
    let s = v.to_string();
    if mcp::tools::cap_chars(&s, 60).len() < s.len() {
        format!("{}...", mcp::tools::cap_chars(&s, 57))
    } else {
        s
    }
}

/// Lowercase, every non-alphanumeric character turned into `_` (A-5): the allowlist's
/// flattening of one name.
pub fn flatten_name(s: &str) -> String {
    allowlist::naming::flatten(s)
}

/// Parses a duration written as a string: "500ms", "30s", "5m", "1h", "1d" (C-6).
pub fn parse_duration(s: &str) -> Option<Duration> {
    let s = s.trim();
    let split = s.find(|c: char| !c.is_ascii_digit())?;
    let (num, unit) = s.split_at(split);
    if num.is_empty() || num.len() > 12 {
        return None;
    }
    let n: u64 = num.parse().ok()?;
    let ms = match unit {
        "ms" => n,
        "s" => n.checked_mul(1_000)?,
        "m" => n.checked_mul(60_000)?,
        "h" => n.checked_mul(3_600_000)?,
        "d" => n.checked_mul(86_400_000)?,
        _ => return None,
    };
    Some(Duration::from_millis(ms))
}

/// Writes a duration back in the config's own notation, in the largest unit that is exact.
fn show_duration(d: Duration) -> String {
    let ms = d.as_millis();
    for (unit, size) in [
        ("d", 86_400_000),
        ("h", 3_600_000),
        ("m", 60_000),
        ("s", 1_000),
    ] {
        if ms >= size && ms.is_multiple_of(size) {
            return format!("\"{}{unit}\"", ms / size);
        }
    }
    format!("\"{ms}ms\"")
}

/// Validates a name used in paths, sources and allowlist rows.
fn valid_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 64
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.')
}

struct Validator<'a> {
    problems: &'a mut Vec<Problem>,
    env: &'a dyn Fn(&str) -> Option<String>,
}

/// One JSON object being read, with the keys it may have.
struct Obj<'v> {
    path: String,
    map: &'v Map<String, Value>,
    /// Whether `${ENV}` references must resolve (the block is enabled).
    enabled: bool,
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

impl Validator<'_> {
    fn problem(&mut self, path: &str, kind: ProblemKind) {
        self.problems.push(Problem {
            path: path.to_string(),
            kind,
        });
    }

    /// A value of the wrong JSON type.
    fn wrong_type(&mut self, path: &str, expected: &'static str, found: &Value) {
        self.problem(
            path,
            ProblemKind::WrongType {
                expected,
                found: describe(found),
            },
        );
    }

    /// A value of the right JSON type that is not acceptable.
    fn bad_value(&mut self, path: &str, expected: impl Into<String>, value: impl Into<String>) {
        self.problem(
            path,
            ProblemKind::BadValue {
                value: value.into(),
                expected: expected.into(),
            },
        );
    }

    /// Reads `value` as an object and reports keys outside `allowed`.
    fn object<'v>(
        &mut self,
        path: &str,
        value: &'v Value,
        allowed: &'static [&'static str],
        enabled: bool,
    ) -> Option<Obj<'v>> {
        let Value::Object(map) = value else {
            self.wrong_type(path, "an object", value);
            return None;
        };
        Some(self.keys(path, map, allowed, enabled))
    }

    fn keys<'v>(
        &mut self,
        path: &str,
        map: &'v Map<String, Value>,
        allowed: &'static [&'static str],
        enabled: bool,
    ) -> Obj<'v> {
        for k in map.keys() {
            if !allowed.contains(&k.as_str()) {
                self.problem(
                    &join(path, k),
                    ProblemKind::UnknownKey { expected: allowed },
                );
            }
        }
        Obj {
            path: path.to_string(),
            map,
            enabled,
        }
    }

    /// Expands `${NAME}` references in a string.
    fn expand(&mut self, path: &str, s: &str, enabled: bool) -> Option<String> {
        let mut out = String::with_capacity(s.len());
        let mut rest = s;
        while let Some(i) = rest.find("${") {
            out.push_str(&rest[..i]);
            let after = &rest[i + 2..];
            let Some(end) = after.find('}') else {
                self.problem(path, ProblemKind::UnterminatedReference);
                return None;
            };
            let name = &after[..end];
            let valid = !name.is_empty()
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !name.starts_with(|c: char| c.is_ascii_digit());
            if !valid {
                self.problem(
                    path,
                    ProblemKind::BadReference {
                        name: name.to_string(),
                    },
                );
                return None;
            }
            match (self.env)(name) {
                Some(v) => out.push_str(&v),
                None if enabled => {
                    self.problem(
                        path,
                        ProblemKind::Unresolved {
                            var: name.to_string(),
                        },
                    );
                    return None;
                }
                // A disabled block keeps its reference unexpanded; it is never used.
                None => out.push_str(&rest[i..i + 2 + end + 1]),
            }
            rest = &after[end + 1..];
        }
        out.push_str(rest);
        Some(out)
    }

    fn string(&mut self, o: &Obj<'_>, key: &str) -> Option<String> {
        let v = o.map.get(key)?;
        let path = join(&o.path, key);
        match v {
            Value::String(s) => self.expand(&path, s, o.enabled),
            _ => {
                self.wrong_type(&path, "a string", v);
                None
            }
        }
    }

    fn nonempty_string(&mut self, o: &Obj<'_>, key: &str) -> Option<String> {
        let s = self.string(o, key)?;
        if s.trim().is_empty() {
            self.bad_value(&join(&o.path, key), "a non-empty string", "\"\"");
            return None;
        }
        Some(s)
    }

    fn boolean(&mut self, o: &Obj<'_>, key: &str, default: bool) -> bool {
        match o.map.get(key) {
            None => default,
            Some(Value::Bool(b)) => *b,
            Some(v) => {
                self.wrong_type(&join(&o.path, key), "true or false", v);
                default
            }
        }
    }

    fn positive(&mut self, o: &Obj<'_>, key: &str) -> Option<u64> {
        let v = o.map.get(key)?;
        match v.as_u64() {
            Some(n) if n > 0 => Some(n),
            _ if v.is_number() => {
                self.bad_value(&join(&o.path, key), "a positive integer", describe(v));
                None
            }
            _ => {
                self.wrong_type(&join(&o.path, key), "a positive integer", v);
                None
            }
        }
    }

    fn duration(&mut self, o: &Obj<'_>, key: &str) -> Option<Duration> {
        let v = o.map.get(key)?;
        let path = join(&o.path, key);
        match v {
            Value::String(s) => match parse_duration(s) {
                Some(d) => Some(d),
                None => {
                    self.bad_value(
                        &path,
                        "a duration such as \"500ms\", \"30s\", \"5m\", \"1h\" or \"1d\"",
                        describe(v),
                    );
                    None
                }
            },
            _ => {
                self.wrong_type(&path, "a duration string such as \"30s\"", v);
                None
            }
        }
    }

    fn positive_duration(&mut self, o: &Obj<'_>, key: &str, default: Duration) -> Duration {
        match self.duration(o, key) {
            Some(d) if d.is_zero() => {
                self.bad_value(&join(&o.path, key), "a duration above zero", "\"0\"");
                default
            }
            Some(d) => d,
            None => default,
        }
    }

    fn string_list(&mut self, o: &Obj<'_>, key: &str) -> Vec<String> {
        let Some(v) = o.map.get(key) else {
            return Vec::new();
        };
        let path = join(&o.path, key);
        let Value::Array(items) = v else {
            self.wrong_type(&path, "a list of strings", v);
            return Vec::new();
        };
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let p = format!("{path}[{i}]");
            match item {
                Value::String(s) => {
                    if let Some(s) = self.expand(&p, s, o.enabled) {
                        out.push(s);
                    }
                }
                _ => self.wrong_type(&p, "a string", item),
            }
        }
        out
    }

    fn secret_map(&mut self, o: &Obj<'_>, key: &str) -> BTreeMap<String, Secret> {
        let Some(v) = o.map.get(key) else {
            return BTreeMap::new();
        };
        let path = join(&o.path, key);
        let Value::Object(m) = v else {
            self.wrong_type(&path, "an object of strings", v);
            return BTreeMap::new();
        };
        let mut out = BTreeMap::new();
        for (k, item) in m {
            let p = join(&path, k);
            match item {
                Value::String(s) => {
                    if let Some(s) = self.expand(&p, s, o.enabled) {
                        out.insert(k.clone(), Secret(s));
                    }
                }
                _ => self.wrong_type(&p, "a string", item),
            }
        }
        out
    }

    fn http_url(&mut self, o: &Obj<'_>, key: &str) -> Option<String> {
        let s = self.string(o, key)?;
        let path = join(&o.path, key);
        match url::Url::parse(&s) {
            Ok(u) if (u.scheme() == "http" || u.scheme() == "https") && u.host().is_some() => {
                Some(s)
            }
            Ok(_) => {
                self.problem(
                    &path,
                    ProblemKind::NotHttpUrl {
                        url: s,
                        reason: None,
                    },
                );
                None
            }
            Err(e) => {
                self.problem(
                    &path,
                    ProblemKind::NotHttpUrl {
                        url: s,
                        reason: Some(e.to_string()),
                    },
                );
                None
            }
        }
    }

    fn config(&mut self, root: &Map<String, Value>) -> Config {
        let top = self.keys(
            "",
            root,
            &[
                "web",
                "router",
                "fetch",
                "feeds",
                "feed_min_interval",
                "mcp_servers",
                "mcp_timing",
                "acts",
            ],
            true,
        );
        let feed_min_interval =
            self.positive_duration(&top, "feed_min_interval", Duration::from_secs(300));
        let web = self.web(root.get("web"));
        let router = self.router(root.get("router"));
        let fetch = self.fetch(root.get("fetch"));
        let feeds = self.feeds(root.get("feeds"), feed_min_interval);
        let mcp_servers = self.mcp_servers(root.get("mcp_servers"));
        let mcp_timing = self.mcp_timing(root.get("mcp_timing"));
        let acts = self.acts(root.get("acts"), &mcp_servers);
        Config {
            source: None,
            web,
            router,
            fetch,
            feeds,
            feed_min_interval,
            mcp_servers,
            mcp_timing,
            acts,
        }
    }

    fn mcp_timing(&mut self, v: Option<&Value>) -> McpTiming {
        let mut t = McpTiming::default();
        let Some(v) = v else { return t };
        let keys = &[
            "backoff_min",
            "backoff_max",
            "health",
            "refresh",
            "min_uptime",
        ];
        let Some(o) = self.object("mcp_timing", v, keys, true) else {
            return t;
        };
        t.backoff_min = self.positive_duration(&o, "backoff_min", t.backoff_min);
        t.backoff_max = self.positive_duration(&o, "backoff_max", t.backoff_max);
        t.health = self.positive_duration(&o, "health", t.health);
        t.refresh = self.positive_duration(&o, "refresh", t.refresh);
        if let Some(d) = self.duration(&o, "min_uptime") {
            t.min_uptime = d;
        }
        if t.backoff_min > t.backoff_max {
            self.bad_value(
                "mcp_timing.backoff_min",
                format!("at most backoff_max ({})", show_duration(t.backoff_max)),
                show_duration(t.backoff_min),
            );
        }
        t
    }

    fn web(&mut self, v: Option<&Value>) -> WebConfig {
        let default_listen = SocketAddr::from(([127, 0, 0, 1], 8765));
        let mut web = WebConfig {
            listen: default_listen,
            hosts: vec!["localhost".into(), "127.0.0.1".into()],
            passphrase_hash: None,
            session: Duration::from_secs(DEFAULT_SESSION_HOURS * 3600),
        };
        let Some(v) = v else { return web };
        let Some(o) = self.object(
            "web",
            v,
            &["listen", "hosts", "passphrase_hash", "session_hours"],
            true,
        ) else {
            return web;
        };
        if let Some(h) = self.positive(&o, "session_hours") {
            if h > MAX_SESSION_HOURS {
                self.bad_value(
                    "web.session_hours",
                    "at most 720 (thirty days)",
                    h.to_string(),
                );
            } else {
                web.session = Duration::from_secs(h * 3600);
            }
        }
        if let Some(s) = self.string(&o, "listen") {
            match s.parse::<SocketAddr>() {
                Ok(a) => web.listen = a,
                Err(_) => self.bad_value(
                    "web.listen",
                    "an address and port such as \"127.0.0.1:8765\"",
                    format!("{s:?}"),
                ),
            }
        }
        if o.map.contains_key("hosts") {
            web.hosts = self.string_list(&o, "hosts");
        }
        if let Some(h) = self.string(&o, "passphrase_hash") {
            if !h.starts_with("$argon2id$") {
                self.problem(
                    "web.passphrase_hash",
                    ProblemKind::BadSecret {
                        expected: "an argon2id hash (\"$argon2id$...\")",
                    },
                );
            } else {
                web.passphrase_hash = Some(Secret(h));
            }
        }
        web
    }

    fn router(&mut self, v: Option<&Value>) -> RouterConfig {
        let mut r = RouterConfig {
            kind: RouterKind::Rules,
            url: None,
            model: None,
            context_tokens: 4096,
            timeout: Duration::from_secs(30),
            allow_private: false,
            headers: BTreeMap::new(),
        };
        let Some(v) = v else { return r };
        let Some(o) = self.object(
            "router",
            v,
            &[
                "kind",
                "url",
                "model",
                "context_tokens",
                "timeout",
                "allow_private",
                "headers",
            ],
            true,
        ) else {
            return r;
        };
        if let Some(k) = o.map.get("kind") {
            match k.as_str() {
                Some("rules") => r.kind = RouterKind::Rules,
                Some("llm") => r.kind = RouterKind::Llm,
                Some(_) => self.bad_value("router.kind", "\"rules\" or \"llm\"", describe(k)),
                None => self.wrong_type("router.kind", "\"rules\" or \"llm\"", k),
            }
        }
        // The endpoint's secrets only need to resolve when the llm router is in use.
        let o = Obj {
            enabled: r.kind == RouterKind::Llm,
            ..o
        };
        r.url = self.http_url(&o, "url");
        r.model = self.nonempty_string(&o, "model");
        if let Some(n) = self.positive(&o, "context_tokens") {
            if n < 512 {
                self.bad_value(
                    "router.context_tokens",
                    "at least 512 tokens",
                    n.to_string(),
                );
            } else {
                r.context_tokens = n;
            }
        }
        r.timeout = self.positive_duration(&o, "timeout", r.timeout);
        r.allow_private = self.boolean(&o, "allow_private", false);
        r.headers = self.secret_map(&o, "headers");
        if r.kind == RouterKind::Llm && r.url.is_none() && !o.map.contains_key("url") {
            self.problem(
                "router.url",
                ProblemKind::Missing {
                    needed: "the llm router needs the URL of an OpenAI-compatible endpoint",
                },
            );
        }
        r
    }

    fn fetch(&mut self, v: Option<&Value>) -> FetchConfig {
        let mut f = FetchConfig {
            allow_hosts: Vec::new(),
            deny_hosts: Vec::new(),
            max_body: webfetch::DEFAULT_MAX_BODY,
            host_interval: Duration::from_secs(1),
            timeouts: webfetch::Timeouts::default(),
        };
        let Some(v) = v else { return f };
        let Some(o) = self.object(
            "fetch",
            v,
            &[
                "allow_hosts",
                "deny_hosts",
                "max_body",
                "host_interval",
                "timeouts",
            ],
            true,
        ) else {
            return f;
        };
        f.allow_hosts = self.host_list(&o, "allow_hosts");
        f.deny_hosts = self.host_list(&o, "deny_hosts");
        if let Some(m) = self.positive(&o, "max_body") {
            f.max_body = m;
        }
        if let Some(d) = self.duration(&o, "host_interval") {
            f.host_interval = d;
        }
        if let Some(t) = o.map.get("timeouts") {
            if let Some(t) = self.object(
                "fetch.timeouts",
                t,
                &["resolve", "connect", "tls", "headers", "total"],
                true,
            ) {
                let ft = &mut f.timeouts;
                ft.resolve = self.positive_duration(&t, "resolve", ft.resolve);
                ft.connect = self.positive_duration(&t, "connect", ft.connect);
                ft.tls = self.positive_duration(&t, "tls", ft.tls);
                ft.headers = self.positive_duration(&t, "headers", ft.headers);
                ft.total = self.positive_duration(&t, "total", ft.total);
            }
        }
        f
    }

    fn host_list(&mut self, o: &Obj<'_>, key: &str) -> Vec<String> {
        let hosts = self.string_list(o, key);
        for (i, h) in hosts.iter().enumerate() {
            if !webfetch::host_pattern_is_valid(h) {
                self.bad_value(
                    &format!("{}[{i}]", join(&o.path, key)),
                    "a host name such as \"example.org\" or \"*.example.org\", or an IP address",
                    format!("{h:?}"),
                );
            }
        }
        hosts
    }

    fn feeds(&mut self, v: Option<&Value>, min_interval: Duration) -> Vec<FeedConfig> {
        let Some(v) = v else { return Vec::new() };
        let Value::Array(items) = v else {
            self.wrong_type("feeds", "a list of feed objects", v);
            return Vec::new();
        };
        let mut out: Vec<FeedConfig> = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let path = format!("feeds[{i}]");
            let enabled = item.get("enabled").and_then(Value::as_bool).unwrap_or(true);
            let Some(o) = self.object(
                &path,
                item,
                &[
                    "name",
                    "url",
                    "interval",
                    "enabled",
                    "max_body",
                    "allow_private",
                    "baseline",
                ],
                enabled,
            ) else {
                continue;
            };
            let name = self.nonempty_string(&o, "name");
            if o.map.get("name").is_none() {
                self.problem(
                    &join(&path, "name"),
                    ProblemKind::Missing {
                        needed: "every feed needs a name",
                    },
                );
            }
            if let Some(n) = &name {
                if !valid_name(n) {
                    self.bad_value(
                        &join(&path, "name"),
                        "letters, digits, '-', '_' or '.', at most 64",
                        format!("{n:?}"),
                    );
                } else if out.iter().any(|f| &f.name == n) {
                    self.problem(
                        &join(&path, "name"),
                        ProblemKind::Duplicate {
                            what: "feed name",
                            name: n.clone(),
                        },
                    );
                }
            }
            let url = self.http_url(&o, "url");
            if o.map.get("url").is_none() {
                self.problem(
                    &join(&path, "url"),
                    ProblemKind::Missing {
                        needed: "every feed needs a url",
                    },
                );
            }
            let interval = self
                .positive_duration(&o, "interval", Duration::from_secs(30 * 60))
                .max(min_interval);
            let enabled = self.boolean(&o, "enabled", true);
            let max_body = self.positive(&o, "max_body");
            let allow_private = self.boolean(&o, "allow_private", false);
            let baseline = match o.map.get("baseline") {
                None => 3,
                Some(v) => match v.as_u64() {
                    Some(n) if n <= 1000 => n,
                    _ if v.is_number() => {
                        self.bad_value(
                            &join(&path, "baseline"),
                            "an integer from 0 to 1000",
                            describe(v),
                        );
                        3
                    }
                    _ => {
                        self.wrong_type(&join(&path, "baseline"), "an integer from 0 to 1000", v);
                        3
                    }
                },
            };
            if let (Some(name), Some(url)) = (name, url) {
                out.push(FeedConfig {
                    name,
                    url,
                    interval,
                    enabled,
                    max_body,
                    allow_private,
                    baseline,
                });
            }
        }
        out
    }

    fn mcp_servers(&mut self, v: Option<&Value>) -> BTreeMap<String, McpServerConfig> {
        let mut out = BTreeMap::new();
        let Some(v) = v else { return out };
        let Value::Object(map) = v else {
            self.wrong_type("mcp_servers", "an object mapping names to server blocks", v);
            return out;
        };
        let mut flat: BTreeMap<String, String> = BTreeMap::new();
        for (name, block) in map {
            let path = format!("mcp_servers.{name}");
            if !valid_name(name) {
                self.bad_value(
                    &path,
                    "a server name of letters, digits, '-', '_' or '.', at most 64",
                    format!("{name:?}"),
                );
                continue;
            }
            if let Some(other) = flat.insert(flatten_name(name), name.clone()) {
                self.problem(
                    &path,
                    ProblemKind::FlattenCollision {
                        first: other,
                        second: name.clone(),
                        flat: flatten_name(name),
                    },
                );
            }
            let enabled = block
                .get("enabled")
                .and_then(Value::as_bool)
                .unwrap_or(false);
            let Some(o) = self.object(
                &path,
                block,
                &[
                    "command",
                    "args",
                    "env",
                    "url",
                    "headers",
                    "allow_private",
                    "host_interval",
                    "enabled",
                    "allow_tools",
                    "max_tools",
                    "timeouts",
                    "protocol",
                    "oauth",
                    "sandbox",
                ],
                enabled,
            ) else {
                continue;
            };
            if let Some(s) = self.mcp_server(name, &o) {
                out.insert(name.clone(), s);
            }
        }
        out
    }

    fn mcp_server(&mut self, name: &str, o: &Obj<'_>) -> Option<McpServerConfig> {
        let path = o.path.clone();
        let has = |k: &str| o.map.contains_key(k);
        let raw = |k: &str| o.map.get(k).and_then(Value::as_str).unwrap_or("");
        let written = if has("command") {
            let args = o.map.get("args").and_then(Value::as_array);
            std::iter::once(raw("command"))
                .chain(args.into_iter().flatten().filter_map(Value::as_str))
                .collect::<Vec<_>>()
                .join(" ")
        } else {
            raw("url").to_owned()
        };
        let target = match (has("command"), has("url")) {
            (true, true) => {
                self.problem(
                    &path,
                    ProblemKind::Conflict {
                        expected:
                            "either \"command\" (a local process) or \"url\" (an HTTP endpoint)",
                    },
                );
                None
            }
            (false, false) => {
                self.problem(
                    &path,
                    ProblemKind::Missing {
                        needed: "a server block needs \"command\" (a local process) or \"url\" (an HTTP endpoint)",
                    },
                );
                None
            }
            (true, false) => {
                for k in ["headers", "allow_private", "host_interval", "oauth"] {
                    if has(k) {
                        self.problem(
                            &join(&path, k),
                            ProblemKind::WrongKind {
                                only: "an HTTP server (with \"url\")",
                            },
                        );
                    }
                }
                let command = self.nonempty_string(o, "command");
                let args = self.string_list(o, "args");
                let env = self.secret_map(o, "env");
                let path_env = env
                    .get("PATH")
                    .map(|v| v.expose().to_owned())
                    .or_else(|| (self.env)("PATH"));
                let sandbox = self.sandbox(o, command.as_deref(), &args, path_env.as_deref());
                command.map(|command| McpTarget::Stdio {
                    command,
                    args,
                    env,
                    sandbox,
                })
            }
            (false, true) => {
                for k in ["args", "env", "sandbox"] {
                    if has(k) {
                        self.problem(
                            &join(&path, k),
                            ProblemKind::WrongKind {
                                only: "a local server (with \"command\")",
                            },
                        );
                    }
                }
                let url = self.http_url(o, "url");
                let headers = self.secret_map(o, "headers");
                let allow_private = self.boolean(o, "allow_private", false);
                let host_interval = self.duration(o, "host_interval");
                url.map(|url| McpTarget::Http {
                    url,
                    headers,
                    allow_private,
                    host_interval,
                })
            }
        };
        let enabled = self.boolean(o, "enabled", false);
        let allow_tools = self.string_list(o, "allow_tools");
        for (i, t) in allow_tools.iter().enumerate() {
            if !valid_tool_name(t) {
                self.bad_value(
                    &format!("{path}.allow_tools[{i}]"),
                    "a tool name matching [A-Za-z0-9_.-]{1,128}",
                    format!("{t:?}"),
                );
            }
        }
        let max_tools = self
            .positive(o, "max_tools")
            .unwrap_or(u64::try_from(DEFAULT_MAX_TOOLS).unwrap_or(u64::MAX));
        let mut timeouts = mcp::McpTimeouts::default();
        if let Some(t) = o.map.get("timeouts") {
            let tpath = join(&path, "timeouts");
            if let Some(t) = self.object(&tpath, t, &["init", "list", "call"], o.enabled) {
                for (key, slot) in [
                    ("init", &mut timeouts.init),
                    ("list", &mut timeouts.list),
                    ("call", &mut timeouts.call),
                ] {
                    let d = self.positive_duration(&t, key, *slot);
                    if d > MAX_MCP_TIMEOUT {
                        self.bad_value(
                            &join(&tpath, key),
                            "at most \"10m\"",
                            format!("{:?}", t.map.get(key).map(describe).unwrap_or_default()),
                        );
                    } else {
                        *slot = d;
                    }
                }
            }
        }
        let protocol = match o.map.get("protocol") {
            None => mcp::Protocol::Auto,
            Some(v) => match v.as_str().and_then(mcp::Protocol::parse) {
                Some(p) => p,
                None => {
                    self.bad_value(
                        &join(&path, "protocol"),
                        "\"auto\", \"2026-07-28\" or \"2025-11-25\"",
                        describe(v),
                    );
                    mcp::Protocol::Auto
                }
            },
        };
        let oauth = match o.map.get("oauth") {
            Some(v) if has("url") => self.mcp_oauth(&join(&path, "oauth"), v, o.enabled),
            _ => McpOAuthConfig::default(),
        };
        Some(McpServerConfig {
            name: name.to_string(),
            target: target?,
            written,
            enabled,
            allow_tools,
            max_tools,
            timeouts,
            protocol,
            oauth,
        })
    }

    /// A stdio block's `sandbox`: `true` (the default), `false`, or `{"read": [paths],
    /// "write": [paths], "network": bool, "memory": bytes, "processes": n}` (X-1).
    fn sandbox(
        &mut self,
        o: &Obj<'_>,
        command: Option<&str>,
        args: &[String],
        path_env: Option<&str>,
    ) -> Option<sandbox::Policy> {
        let mut policy = sandbox::Policy::default();
        let Some(v) = o.map.get("sandbox") else {
            return Some(policy);
        };
        let path = join(&o.path, "sandbox");
        let so = match v {
            Value::Bool(true) => return Some(policy),
            Value::Bool(false) => return None,
            Value::Object(_) => self.object(
                &path,
                v,
                &[
                    "read",
                    "write",
                    "network",
                    "memory",
                    "processes",
                    "disk",
                    "allow_shared_code",
                ],
                o.enabled,
            )?,
            _ => {
                self.wrong_type(
                    &path,
                    "true, false or an object {\"read\", \"write\", \"network\", \"memory\", \"processes\", \"disk\", \"allow_shared_code\"}",
                    v,
                );
                return Some(policy);
            }
        };
        for (key, slot) in [("read", &mut policy.read), ("write", &mut policy.write)] {
            for (i, p) in self.string_list(&so, key).into_iter().enumerate() {
                let pp = std::path::Path::new(&p);
                let dotted = pp
                    .components()
                    .any(|c| matches!(c, std::path::Component::ParentDir));
                if !pp.is_absolute() || dotted || p.contains('\0') {
                    self.bad_value(
                        &format!("{path}.{key}[{i}]"),
                        "an absolute path without \"..\"",
                        format!("{p:?}"),
                    );
                } else {
                    slot.push(PathBuf::from(p));
                }
            }
        }
        policy.network = self.boolean(&so, "network", true);
        policy.allow_shared_code = self.boolean(&so, "allow_shared_code", false);
        self.no_shared_code(&path, &policy, command, args, path_env);
        if let Some(d) = self.positive(&so, "disk") {
            if d < sandbox::MIN_DISK {
                self.bad_value(
                    &join(&path, "disk"),
                    format!("at least {} bytes (16 MiB)", sandbox::MIN_DISK),
                    d.to_string(),
                );
            } else {
                policy.disk = d;
            }
        }
        if let Some(m) = self.positive(&so, "memory") {
            if m < sandbox::MIN_MEMORY {
                self.bad_value(
                    &join(&path, "memory"),
                    format!("at least {} bytes (64 MiB)", sandbox::MIN_MEMORY),
                    m.to_string(),
                );
            } else {
                policy.memory = m;
            }
        }
        if let Some(n) = self.positive(&so, "processes") {
            if n > sandbox::MAX_PROCESSES {
                self.bad_value(
                    &join(&path, "processes"),
                    format!("at most {}", sandbox::MAX_PROCESSES),
                    n.to_string(),
                );
            } else {
                policy.processes = n;
            }
        }
        Some(policy)
    }

    /// X-4: a `write` never covers the server's own program or script, nor (without
    /// `allow_shared_code`) a directory other programs load code from.
    fn no_shared_code(
        &mut self,
        path: &str,
        policy: &sandbox::Policy,
        command: Option<&str>,
        args: &[String],
        path_env: Option<&str>,
    ) {
        let home = (self.env)("HOME").map(PathBuf::from);
        let path_os = path_env.map(std::ffi::OsStr::new);
        let own = command
            .map(|c| sandbox::own_code(c, args, path_os))
            .unwrap_or_default();
        for (i, w) in policy.write.iter().enumerate() {
            let at = format!("{path}.write[{i}]");
            if let Some((p, what)) = own.iter().find(|(p, _)| p.starts_with(w)) {
                self.problem(
                    &at,
                    ProblemKind::Refused {
                        reason: format!(
                            "{} covers {} ({what}): a server that can rewrite its own code keeps a compromise across restarts, and you may run that code yourself outside Maven; grant it in \"read\" instead (an existing file named in \"args\" is readable already)",
                            w.display(),
                            p.display()
                        ),
                    },
                );
                continue;
            }
            if policy.allow_shared_code {
                continue;
            }
            if let Some((p, what)) = sandbox::shared_code(w, home.as_deref(), path_os) {
                self.problem(
                    &at,
                    ProblemKind::Refused {
                        reason: format!(
                            "{} covers {} ({what}), where other programs load code from: a server could plant code that you later run outside any sandbox. Its private directory already holds its own caches; grant a directory of its own instead, or set \"allow_shared_code\": true in this sandbox if that is what you mean",
                            w.display(),
                            p.display()
                        ),
                    },
                );
            }
        }
    }

    /// The `oauth` block of an HTTP server: `client_id`, `client_secret` (a `${ENV}`
    /// reference only: a secret is not written in the file), `client_metadata_url` (https,
    /// with a path).
    fn mcp_oauth(&mut self, path: &str, v: &Value, enabled: bool) -> McpOAuthConfig {
        let mut out = McpOAuthConfig::default();
        let Some(o) = self.object(
            path,
            v,
            &["client_id", "client_secret", "client_metadata_url", "dpop"],
            enabled,
        ) else {
            return out;
        };
        out.client_id = self.nonempty_string(&o, "client_id");
        if let Some(v) = o.map.get("dpop") {
            out.dpop = match v.as_str() {
                Some("auto") => oauth::DpopMode::Auto,
                Some("never") => oauth::DpopMode::Never,
                Some("required") => oauth::DpopMode::Required,
                _ => {
                    self.bad_value(
                        &join(path, "dpop"),
                        "\"auto\", \"never\" or \"required\"",
                        describe(v),
                    );
                    oauth::DpopMode::Auto
                }
            };
        }
        if let Some(raw) = o.map.get("client_secret") {
            let p = join(path, "client_secret");
            match raw {
                Value::String(r)
                    if r.starts_with("${") && r.ends_with('}') && r.matches("${").count() == 1 =>
                {
                    if let Some(s) = self.expand(&p, r, enabled) {
                        out.client_secret = Some(Secret(s));
                    }
                }
                Value::String(_) => self.bad_value(
                    &p,
                    "a ${ENV} reference (a secret is not written in the file)",
                    "a literal string",
                ),
                other => self.wrong_type(&p, "a string", other),
            }
            if !o.map.contains_key("client_id") {
                self.problem(
                    &p,
                    ProblemKind::Missing {
                        needed: "oauth.client_secret needs oauth.client_id",
                    },
                );
            }
        }
        if let Some(u) = self.http_url(&o, "client_metadata_url") {
            let ok = url::Url::parse(&u)
                .is_ok_and(|x| x.scheme() == "https" && x.path() != "/" && x.fragment().is_none());
            if ok {
                out.client_metadata_url = Some(u);
            } else {
                self.bad_value(
                    &join(path, "client_metadata_url"),
                    "an https URL with a path",
                    format!("{u:?}"),
                );
            }
        }
        out
    }

    fn acts(
        &mut self,
        v: Option<&Value>,
        servers: &BTreeMap<String, McpServerConfig>,
    ) -> Vec<ActConfig> {
        let Some(v) = v else { return Vec::new() };
        let Value::Array(items) = v else {
            self.wrong_type("acts", "a list of act objects", v);
            return Vec::new();
        };
        let _ = servers;
        let mut out: Vec<ActConfig> = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let path = format!("acts[{i}]");
            let Some(o) = self.object(
                &path,
                item,
                &["name", "cmd", "read_only", "timeout", "max_output"],
                true,
            ) else {
                continue;
            };
            let name = self.nonempty_string(&o, "name");
            if !o.map.contains_key("name") {
                self.problem(
                    &join(&path, "name"),
                    ProblemKind::Missing {
                        needed: "every act needs a name",
                    },
                );
            }
            if let Some(n) = &name {
                let ok = n.len() <= 64
                    && n.chars()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
                if !ok {
                    self.bad_value(
                        &join(&path, "name"),
                        "lowercase letters, digits and '_', at most 64",
                        format!("{n:?}"),
                    );
                } else if out.iter().any(|a| &a.name == n) {
                    self.problem(
                        &join(&path, "name"),
                        ProblemKind::Duplicate {
                            what: "act name",
                            name: n.clone(),
                        },
                    );
                }
            }
            let cmd = self.string_list(&o, "cmd");
            match o.map.get("cmd") {
                None => self.problem(
                    &join(&path, "cmd"),
                    ProblemKind::Missing {
                        needed: "an act needs cmd, the argv to run (no shell)",
                    },
                ),
                Some(_) if cmd.is_empty() => self.problem(
                    &join(&path, "cmd"),
                    ProblemKind::Empty {
                        expected: "a non-empty list: the program and its arguments",
                    },
                ),
                Some(_) if cmd[0] == "mcp" => self.problem(
                    &join(&path, "cmd"),
                    ProblemKind::Reserved {
                        name: cmd[0].clone(),
                    },
                ),
                Some(_) => {}
            }
            let read_only = self.boolean(&o, "read_only", false);
            let timeout = self.positive_duration(&o, "timeout", Duration::from_secs(30));
            let max_output = self.positive(&o, "max_output").unwrap_or(64 * 1024);
            if let (Some(name), false) = (name, cmd.is_empty()) {
                out.push(ActConfig {
                    name,
                    cmd,
                    read_only,
                    timeout,
                    max_output,
                });
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(k: &str) -> Option<String> {
        match k {
            "TOKEN" => Some("s3cret".into()),
            _ => None,
        }
    }

    fn check(json: &str) -> Result<Config, Vec<String>> {
        Config::parse("config.json", json.as_bytes(), &env).map_err(|e| {
            e.to_string()
                .lines()
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
    }

    fn check_err(json: &str, expect: &[&str]) {
        match check(json) {
            Ok(_) => panic!("expected errors {expect:?} for {json}"),
            Err(got) => assert_eq!(got, expect, "for {json}"),
        }
    }

    #[test]
    fn the_sandbox_key() {
        let c = check(
            r#"{"mcp_servers": {
                "a": {"command": "x"},
                "b": {"command": "x", "sandbox": false},
                "c": {"command": "x", "sandbox": {"read": ["/srv/notes"], "write": ["/srv/notes/out"],
                      "network": false, "memory": 134217728, "processes": 8}}}}"#,
        )
        .unwrap();
        let sb = |n: &str| match &c.mcp_servers[n].target {
            McpTarget::Stdio { sandbox, .. } => sandbox.clone(),
            McpTarget::Http { .. } => unreachable!(),
        };
        assert_eq!(sb("a"), Some(sandbox::Policy::default()));
        assert_eq!(sb("b"), None);
        assert_eq!(
            sb("c"),
            Some(sandbox::Policy {
                read: vec!["/srv/notes".into()],
                write: vec!["/srv/notes/out".into()],
                network: false,
                memory: 134_217_728,
                processes: 8,
                ..sandbox::Policy::default()
            })
        );
        check_err(
            r#"{"mcp_servers": {"v": {"command": "x", "sandbox": {"read": ["notes", "/a/../b"], "write": [1],
                "network": "no", "memory": 1024, "processes": 0, "net": true}}}}"#,
            &[
                r#"config.json: mcp_servers.v.sandbox.net: unknown key (expected one of: read, write, network, memory, processes, disk, allow_shared_code)"#,
                r#"config.json: mcp_servers.v.sandbox.read[0]: expected an absolute path without "..", got "notes""#,
                r#"config.json: mcp_servers.v.sandbox.read[1]: expected an absolute path without "..", got "/a/../b""#,
                r#"config.json: mcp_servers.v.sandbox.write[0]: expected a string, got 1"#,
                r#"config.json: mcp_servers.v.sandbox.network: expected true or false, got "no""#,
                r#"config.json: mcp_servers.v.sandbox.memory: expected at least 67108864 bytes (64 MiB), got 1024"#,
                r#"config.json: mcp_servers.v.sandbox.processes: expected a positive integer, got 0"#,
            ],
        );
        check_err(
            r#"{"mcp_servers": {"v": {"command": "x", "sandbox": "yes"}, "h": {"url": "http://a.example/", "sandbox": true}}}"#,
            &[
                r#"config.json: mcp_servers.v.sandbox: expected true, false or an object {"read", "write", "network", "memory", "processes", "disk", "allow_shared_code"}, got "yes""#,
                r#"config.json: mcp_servers.h.sandbox: only a local server (with "command") takes this key"#,
            ],
        );
    }

    #[test]
    fn a_write_never_covers_shared_code_nor_the_servers_own_program() {
        let env = |k: &str| match k {
            "HOME" => Some("/home/me".to_owned()),
            "PATH" => Some("/usr/bin:/home/me/tools/bin".to_owned()),
            _ => None,
        };
        let parse = |text: &str| Config::parse("config.json", text.as_bytes(), &env);
        let err = |text: &str| match parse(text) {
            Err(e) => e.to_string(),
            Ok(_) => panic!("accepted: {text}"),
        };
        let e = err(
            r#"{"mcp_servers": {"f": {"command": "npx", "args": ["-y", "@x/fs", "/home/me/docs"],
                "sandbox": {"write": ["/home/me/docs", "/home/me/.npm", "/home/me/tools/bin/x"]}}}}"#,
        );
        assert!(
            e.contains("mcp_servers.f.sandbox.write[1]: /home/me/.npm covers /home/me/.npm (npm's cache (npx runs packages from it)), where other programs load code from: a server could plant code that you later run outside any sandbox.")
                && e.contains("set \"allow_shared_code\": true in this sandbox if that is what you mean"),
            "{e}"
        );
        assert!(
            e.contains("mcp_servers.f.sandbox.write[2]: /home/me/tools/bin/x covers /home/me/tools/bin (a directory on PATH)"),
            "{e}"
        );
        assert!(!e.contains("write[0]"), "{e}");
        // The owner who knows says so.
        parse(
            r#"{"mcp_servers": {"f": {"command": "npx", "sandbox": {"write": ["/home/me/.npm"], "allow_shared_code": true}}}}"#,
        )
        .unwrap();
        // Its own script, never, whatever the block says.
        let e = err(
            r#"{"mcp_servers": {"py": {"command": "python3", "args": ["/home/me/srv/server.py"],
                "sandbox": {"write": ["/home/me/srv/server.py"], "allow_shared_code": true},
                "enabled": true}}}"#,
        );
        assert!(
            e.contains("mcp_servers.py.sandbox.write[0]: /home/me/srv/server.py covers /home/me/srv/server.py (the script python3 runs): a server that can rewrite its own code keeps a compromise across restarts"),
            "{e}"
        );
        let e = err(
            r#"{"mcp_servers": {"py": {"command": "python3", "args": ["-u", "/home/me/srv/server.py"],
                "sandbox": {"write": ["/home/me/srv"]}}}}"#,
        );
        assert!(e.contains("the script python3 runs"), "{e}");
        let e = err(
            r#"{"mcp_servers": {"s": {"command": "/opt/srv/bin/server", "sandbox": {"write": ["/opt/srv"], "allow_shared_code": true}}}}"#,
        );
        assert!(e.contains("(the program this server runs)"), "{e}");
        // A disk bound.
        let c = parse(r#"{"mcp_servers": {"d": {"command": "x", "sandbox": {"disk": 33554432}}}}"#)
            .unwrap();
        match &c.mcp_servers["d"].target {
            McpTarget::Stdio {
                sandbox: Some(p), ..
            } => assert_eq!(p.disk, 32 * 1024 * 1024),
            t => panic!("{t:?}"),
        }
        let e = err(r#"{"mcp_servers": {"d": {"command": "x", "sandbox": {"disk": 1024}}}}"#);
        assert!(
            e.contains("sandbox.disk: expected at least 16777216 bytes (16 MiB), got 1024"),
            "{e}"
        );
    }

    #[test]
    fn empty_object_is_all_defaults() {
        let c = check("{}").unwrap();
        assert!(c.feeds.is_empty());
        assert!(c.mcp_servers.is_empty());
        assert_eq!(c.router.kind, RouterKind::Rules);
        assert_eq!(c.web.listen.to_string(), "127.0.0.1:8765");
        assert_eq!(c.feed_min_interval, Duration::from_secs(300));
        assert_eq!(c.fetch.max_body, 2 * 1024 * 1024);
        assert_eq!(c.mcp_timing.backoff_min, Duration::from_secs(60));
        assert_eq!(c.mcp_timing.backoff_max, Duration::from_secs(30 * 60));
    }

    #[test]
    fn protocol_reaches_the_client() {
        let c = check(
            r#"{"mcp_servers": {"a": {"command": "x"}, "m": {"command": "x", "protocol": "2026-07-28"}, "l": {"url": "https://l.example/mcp", "protocol": "2025-11-25"}}}"#,
        )
        .unwrap();
        let p = |n: &str| c.mcp_server(n).unwrap().protocol;
        assert_eq!(p("a"), mcp::Protocol::Auto);
        assert_eq!(p("m"), mcp::Protocol::Modern);
        assert_eq!(p("l"), mcp::Protocol::Legacy);
    }

    #[test]
    fn mcp_timing_reaches_the_manager() {
        let c = check(
            r#"{"mcp_timing": {"backoff_min": "200ms", "backoff_max": "2s", "health": "1s", "refresh": "3s", "min_uptime": "0s"}}"#,
        )
        .unwrap();
        let o = c.mcp_timing.manager_options();
        assert_eq!(o.backoff_min, Duration::from_millis(200));
        assert_eq!(o.backoff_max, Duration::from_secs(2));
        assert_eq!(o.health_interval, Duration::from_secs(1));
        assert_eq!(o.refresh_interval, Duration::from_secs(3));
        assert_eq!(o.min_uptime, Duration::ZERO);
    }

    #[test]
    fn errors_name_file_path_value_and_expectation() {
        let table: &[(&str, &[&str])] = &[
            (
                r#"{"mcp_servers": {"vikunja": {"url": "http://x.example/mcp", "max_tools": "12"}}}"#,
                &[r#"config.json: mcp_servers.vikunja.max_tools: expected a positive integer, got "12""#],
            ),
            (
                r#"{"mcp_servers": {"v": {"command": "x", "max_tool": 3}}}"#,
                &["config.json: mcp_servers.v.max_tool: unknown key (expected one of: command, args, env, url, headers, allow_private, host_interval, enabled, allow_tools, max_tools, timeouts, protocol, oauth, sandbox)"],
            ),
            (
                r#"{"mcp_servers": {"v": {"command": "x", "enabled": false, "timeouts": {"call": "11m"}}}}"#,
                &[r#"config.json: mcp_servers.v.timeouts.call: expected at most "10m", got "\"11m\"""#],
            ),
            (
                r#"{"mcp_servers": {"v": {"command": "x", "timeouts": {"init": 10}}}}"#,
                &[r#"config.json: mcp_servers.v.timeouts.init: expected a duration string such as "30s", got 10"#],
            ),
            (
                r#"{"mcp_servers": {"v": {"command": "x", "timeouts": {"list": "10 parsecs"}}}}"#,
                &[r#"config.json: mcp_servers.v.timeouts.list: expected a duration such as "500ms", "30s", "5m", "1h" or "1d", got "10 parsecs""#],
            ),
            (
                r#"{"mcp_servers": {"v": {"command": "x", "url": "http://a.example/"}}}"#,
                &[r#"config.json: mcp_servers.v: expected either "command" (a local process) or "url" (an HTTP endpoint), not both"#],
            ),
            (
                r#"{"mcp_servers": {"v": {"enabled": true}}}"#,
                &[r#"config.json: mcp_servers.v: missing: a server block needs "command" (a local process) or "url" (an HTTP endpoint)"#],
            ),
            (
                r#"{"mcp_servers": {"v": {"url": "ftp://a.example/"}}}"#,
                &[r#"config.json: mcp_servers.v.url: expected an http or https URL, got "ftp://a.example/""#],
            ),
            (
                r#"{"mcp_servers": {"v": {"command": "x", "headers": {}}}}"#,
                &[r#"config.json: mcp_servers.v.headers: only an HTTP server (with "url") takes this key"#],
            ),
            (
                r#"{"mcp_servers": {"a-b": {"command": "x"}, "a_b": {"command": "y"}}}"#,
                &[r#"config.json: mcp_servers.a_b: server names "a-b" and "a_b" both flatten to "a_b"; tool rows would collide"#],
            ),
            (
                r#"{"mcp_servers": {"v": {"url": "https://a.example/", "enabled": true, "headers": {"Authorization": "Bearer ${NOPE}"}}}}"#,
                &["config.json: mcp_servers.v.headers.Authorization: environment variable NOPE is not set"],
            ),
            (
                r#"{"mcp_servers": {"v": {"command": "x", "protocol": "2025-06-18"}}}"#,
                &[r#"config.json: mcp_servers.v.protocol: expected "auto", "2026-07-28" or "2025-11-25", got "2025-06-18""#],
            ),
            (
                r#"{"mcp_servers": {"v": {"command": "x", "protocol": true}}}"#,
                &[r#"config.json: mcp_servers.v.protocol: expected "auto", "2026-07-28" or "2025-11-25", got true"#],
            ),
            (
                r#"{"mcp_servers": {"v": {"command": "x", "allow_tools": ["ok", "bad name"]}}}"#,
                &[r#"config.json: mcp_servers.v.allow_tools[1]: expected a tool name matching [A-Za-z0-9_.-]{1,128}, got "bad name""#],
            ),
            (
                r#"{"mcp_servers": {"v": {"url": "https://a.example/mcp", "oauth": {"client_id": "c", "client_secret": "hunter2"}}}}"#,
                &["config.json: mcp_servers.v.oauth.client_secret: expected a ${ENV} reference (a secret is not written in the file), got a literal string"],
            ),
            (
                r#"{"mcp_servers": {"v": {"url": "https://a.example/mcp", "oauth": {"client_secret": "${TOKEN}"}}}}"#,
                &["config.json: mcp_servers.v.oauth.client_secret: missing: oauth.client_secret needs oauth.client_id"],
            ),
            (
                r#"{"mcp_servers": {"v": {"url": "https://a.example/mcp", "oauth": {"client_metadata_url": "http://maven.example/client.json"}}}}"#,
                &[r#"config.json: mcp_servers.v.oauth.client_metadata_url: expected an https URL with a path, got "http://maven.example/client.json""#],
            ),
            (
                r#"{"mcp_servers": {"v": {"url": "https://a.example/mcp", "oauth": {"client": "c"}}}}"#,
                &["config.json: mcp_servers.v.oauth.client: unknown key (expected one of: client_id, client_secret, client_metadata_url, dpop)"],
            ),
            (
                r#"{"mcp_servers": {"v": {"url": "https://a.example/mcp", "oauth": {"dpop": "always"}}}}"#,
                &[r#"config.json: mcp_servers.v.oauth.dpop: expected "auto", "never" or "required", got "always""#],
            ),
            (
                r#"{"mcp_servers": {"v": {"command": "x", "oauth": {}}}}"#,
                &[r#"config.json: mcp_servers.v.oauth: only an HTTP server (with "url") takes this key"#],
            ),
            (
                r#"{"feeds": [{"name": "a", "url": "https://a.example/rss"}, {"name": "a", "url": "https://b.example/rss"}]}"#,
                &[r#"config.json: feeds[1].name: duplicate feed name "a""#],
            ),
            (
                r#"{"feeds": [{"url": "https://a.example/rss", "intervall": "1h"}]}"#,
                &[
                    "config.json: feeds[0].intervall: unknown key (expected one of: name, url, interval, enabled, max_body, allow_private, baseline)",
                    "config.json: feeds[0].name: missing: every feed needs a name",
                ],
            ),
            (
                r#"{"feeds": {"name": "a"}}"#,
                &[r#"config.json: feeds: expected a list of feed objects, got {"name":"a"}"#],
            ),
            (
                r#"{"feeds": [{"name": "a", "url": "https://a.example/", "enabled": "yes"}]}"#,
                &[r#"config.json: feeds[0].enabled: expected true or false, got "yes""#],
            ),
            (
                r#"{"feeds": [{"name": "a", "url": "https://a.example/", "max_body": 0}]}"#,
                &["config.json: feeds[0].max_body: expected a positive integer, got 0"],
            ),
            (
                r#"{"acts": [{"name": "uptime", "cmd": ["mcp", "x", "y"]}]}"#,
                &[r#"config.json: acts[0].cmd: "mcp" is reserved for tools discovered on MCP servers; it is never run as a program"#],
            ),
            (
                r#"{"acts": [{"name": "Up Time", "cmd": ["uptime"]}]}"#,
                &[r#"config.json: acts[0].name: expected lowercase letters, digits and '_', at most 64, got "Up Time""#],
            ),
            (
                r#"{"acts": [{"name": "x", "cmd": []}]}"#,
                &["config.json: acts[0].cmd: expected a non-empty list: the program and its arguments"],
            ),
            (
                r#"{"router": {"kind": "gpt"}}"#,
                &[r#"config.json: router.kind: expected "rules" or "llm", got "gpt""#],
            ),
            (
                r#"{"router": {"kind": "llm"}}"#,
                &["config.json: router.url: missing: the llm router needs the URL of an OpenAI-compatible endpoint"],
            ),
            (
                r#"{"web": {"listen": "localhost"}}"#,
                &[r#"config.json: web.listen: expected an address and port such as "127.0.0.1:8765", got "localhost""#],
            ),
            (
                r#"{"fetch": {"deny_hosts": ["http://evil.example/"]}}"#,
                &[r#"config.json: fetch.deny_hosts[0]: expected a host name such as "example.org" or "*.example.org", or an IP address, got "http://evil.example/""#],
            ),
            (
                r#"{"fetch": {"timeouts": {"total": "0s"}}}"#,
                &[r#"config.json: fetch.timeouts.total: expected a duration above zero, got "0""#],
            ),
            (
                r#"{"feed_min_interval": 300}"#,
                &[r#"config.json: feed_min_interval: expected a duration string such as "30s", got 300"#],
            ),
            (
                r#"{"mcp_timing": {"backoff_min": "2m", "backoff_max": "90s"}}"#,
                &[r#"config.json: mcp_timing.backoff_min: expected at most backoff_max ("90s"), got "2m""#],
            ),
            (
                r#"{"mcp_timing": {"health": "0ms", "retry": "1s"}}"#,
                &[
                    "config.json: mcp_timing.retry: unknown key (expected one of: backoff_min, backoff_max, health, refresh, min_uptime)",
                    r#"config.json: mcp_timing.health: expected a duration above zero, got "0""#,
                ],
            ),
            (
                r#"{"mcp_serverz": {}}"#,
                &["config.json: mcp_serverz: unknown key (expected one of: web, router, fetch, feeds, feed_min_interval, mcp_servers, mcp_timing, acts)"],
            ),
            (
                r#"[1, 2]"#,
                &["config.json: expected a JSON object at the top level, got [1,2]"],
            ),
            (
                "{\n  \"feeds\": [,]\n}",
                &["config.json: line 2 column 13: not valid JSON: expected value"],
            ),
        ];
        for (json, expect) in table {
            check_err(json, expect);
        }
    }

    #[test]
    fn disabled_blocks_are_checked_too() {
        check_err(
            r#"{"mcp_servers": {"dark": {"command": "x", "enabled": false, "max_tools": -1}}}"#,
            &["config.json: mcp_servers.dark.max_tools: expected a positive integer, got -1"],
        );
        check_err(
            r#"{"feeds": [{"name": "off", "url": "not a url", "enabled": false}]}"#,
            &[
                r#"config.json: feeds[0].url: expected an http or https URL, got "not a url" (relative URL without a base)"#,
            ],
        );
    }

    #[test]
    fn env_references_resolve_and_stay_secret() {
        let c = check(
            r#"{"mcp_servers": {"v": {"url": "https://a.example/mcp", "enabled": true, "headers": {"Authorization": "Bearer ${TOKEN}"}}}}"#,
        )
        .unwrap();
        let McpTarget::Http { headers, .. } = &c.mcp_servers["v"].target else {
            panic!("expected http")
        };
        assert_eq!(headers["Authorization"].expose(), "Bearer s3cret");
        assert!(
            !format!("{c:?}").contains("s3cret"),
            "secret leaked into Debug"
        );
    }

    #[test]
    fn the_target_as_written_keeps_its_references() {
        let c = check(
            r#"{"mcp_servers": {"gh": {"command": "gh-mcp", "args": ["--token", "${TOKEN}"], "enabled": true},
                "r": {"url": "https://a.example/mcp?k=${TOKEN}", "enabled": true}}}"#,
        )
        .unwrap();
        assert_eq!(c.mcp_servers["gh"].written, "gh-mcp --token ${TOKEN}");
        assert_eq!(
            c.mcp_servers["r"].written,
            "https://a.example/mcp?k=${TOKEN}"
        );
        let McpTarget::Stdio { args, .. } = &c.mcp_servers["gh"].target else {
            panic!("expected stdio")
        };
        assert_eq!(args[1], "s3cret", "the child still gets the value");
    }

    #[test]
    fn session_hours_default_and_bounds() {
        let c = check("{}").unwrap();
        assert_eq!(c.web.session, Duration::from_secs(12 * 3600));
        let c = check(r#"{"web": {"session_hours": 1}}"#).unwrap();
        assert_eq!(c.web.session, Duration::from_secs(3600));
        for bad in ["0", "721", "\"12\""] {
            let e = check(&format!(r#"{{"web": {{"session_hours": {bad}}}}}"#)).unwrap_err();
            assert!(e[0].contains("web.session_hours"), "{e:?}");
        }
    }

    #[test]
    fn the_oauth_block_resolves_its_secret_and_keeps_it_secret() {
        let c = check(
            r#"{"mcp_servers": {"v": {"url": "https://a.example/mcp", "enabled": true, "oauth": {"client_id": "maven", "client_secret": "${TOKEN}", "client_metadata_url": "https://maven.example/client.json"}}}}"#,
        )
        .unwrap();
        let o = &c.mcp_servers["v"].oauth;
        assert_eq!(o.client_id.as_deref(), Some("maven"));
        assert_eq!(o.client_secret.as_ref().map(Secret::expose), Some("s3cret"));
        assert_eq!(
            o.client_metadata_url.as_deref(),
            Some("https://maven.example/client.json")
        );
        assert!(
            !format!("{c:?}").contains("s3cret"),
            "secret leaked into Debug"
        );
        assert_eq!(o.dpop, oauth::DpopMode::Auto, "the default");
        for (word, mode) in [
            ("never", oauth::DpopMode::Never),
            ("required", oauth::DpopMode::Required),
            ("auto", oauth::DpopMode::Auto),
        ] {
            let c = check(&format!(
                r#"{{"mcp_servers": {{"v": {{"url": "https://a.example/mcp", "oauth": {{"dpop": "{word}"}}}}}}}}"#
            ))
            .unwrap();
            assert_eq!(c.mcp_servers["v"].oauth.dpop, mode);
        }
    }

    #[test]
    fn unset_env_in_disabled_block_is_not_an_error() {
        let c = check(
            r#"{"mcp_servers": {"v": {"url": "https://a.example/mcp", "headers": {"Authorization": "Bearer ${NOPE}"}}}}"#,
        )
        .unwrap();
        assert!(!c.mcp_servers["v"].enabled);
    }

    #[test]
    fn every_error_is_reported_at_once() {
        let err = check(r#"{"feed_min_interval": "x", "acts": 3, "router": []}"#).unwrap_err();
        assert_eq!(err.len(), 3, "{err:?}");
    }

    #[test]
    fn durations() {
        let table = [
            ("500ms", Some(500)),
            ("30s", Some(30_000)),
            ("5m", Some(300_000)),
            ("1h", Some(3_600_000)),
            ("1d", Some(86_400_000)),
            ("0s", Some(0)),
            ("5", None),
            ("s", None),
            ("-5s", None),
            ("1.5s", None),
            ("5 m", None),
            ("99999999999999d", None),
        ];
        for (s, ms) in table {
            assert_eq!(parse_duration(s).map(|d| d.as_millis() as u64), ms, "{s}");
        }
    }

    #[test]
    fn doors_take_global_defaults_and_their_own_overrides() {
        let c = check(
            r#"{"fetch": {"deny_hosts": ["evil.example"], "max_body": 1000},
                "feeds": [{"name": "lan", "url": "http://192.168.1.5/rss", "allow_private": true, "max_body": 5000}],
                "mcp_servers": {"h": {"url": "http://127.0.0.1:9/mcp", "allow_private": true}, "s": {"command": "x"}}}"#,
        )
        .unwrap();
        let d = c.door("feed:lan").unwrap();
        assert!(d.allow_private);
        assert_eq!(d.max_body, 5000);
        assert_eq!(d.deny_hosts, vec!["evil.example".to_string()]);
        let g = c.door("fetch").unwrap();
        assert!(!g.allow_private);
        assert_eq!(g.max_body, 1000);
        assert_eq!(c.door("mcp:h").unwrap().host_interval, Duration::ZERO);
        assert_eq!(
            c.door("mcp:h").unwrap().timeouts.headers,
            Duration::from_secs(60),
            "never shorter than the call deadline"
        );
        assert_eq!(
            c.door("mcp:s").unwrap_err(),
            "MCP server \"s\" is a local process, not an HTTP endpoint"
        );
        assert_eq!(
            c.door("feed:nope").unwrap_err(),
            "no feed named \"nope\" in the config"
        );
        assert!(c.door("ftp").is_err());
    }

    #[test]
    fn feed_interval_never_below_minimum() {
        let c = check(
            r#"{"feed_min_interval": "10m", "feeds": [{"name": "a", "url": "https://a.example/", "interval": "1m"}]}"#,
        )
        .unwrap();
        assert_eq!(c.feeds[0].interval, Duration::from_secs(600));
    }

    #[test]
    fn problems_are_typed() {
        let err = Config::parse(
            "config.json",
            br#"{"mcp_servers": {"v": {"command": "x", "max_tools": "12", "allow_tools": [], "max_tool": 3}}, "acts": [{"name": "a", "cmd": [], "timeout": "0s"}]}"#,
            &env,
        )
        .unwrap_err();
        assert_eq!(err.file(), "config.json");
        let got: Vec<(&str, &ProblemKind)> = err
            .problems()
            .iter()
            .map(|p| (p.path.as_str(), &p.kind))
            .collect();
        assert!(matches!(
            got[..],
            [
                ("mcp_servers.v.max_tool", ProblemKind::UnknownKey { .. }),
                (
                    "mcp_servers.v.max_tools",
                    ProblemKind::WrongType {
                        expected: "a positive integer",
                        ..
                    }
                ),
                ("acts[0].cmd", ProblemKind::Empty { .. }),
                ("acts[0].timeout", ProblemKind::BadValue { .. }),
            ]
        ));
        let ProblemKind::WrongType { found, .. } = got[1].1 else {
            unreachable!()
        };
        assert_eq!(found, "\"12\"");

        let missing = Config::load(Some(Path::new("/nonexistent/maven/config.json"))).unwrap_err();
        assert!(matches!(missing, Error::Read { .. }), "{missing:?}");
        assert!(missing.problems().is_empty());
        let syntax = Config::parse("c.json", b"{,}", &env).unwrap_err();
        assert!(
            matches!(
                syntax,
                Error::Syntax {
                    line: 1,
                    column: 2,
                    ..
                }
            ),
            "{syntax:?}"
        );
        let encoding = Config::parse("c.json", b"{\"a\": \"\xff\"}", &env).unwrap_err();
        assert!(
            matches!(encoding, Error::Encoding { offset: 7, .. }),
            "{encoding:?}"
        );
    }
}
