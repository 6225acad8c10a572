//! Command-line parsing and dispatch.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use serde_json::{json, Value};

use config::Config;

use crate::exit::{LogFormat, EXIT_FAILED, EXIT_USAGE};
use crate::ipc::client as ipc;

/// Maven: a personal assistant daemon that hosts other people's tools (MCP servers, feeds, web
/// endpoints) safely: only what you approved, only in the shape you approved, and never a write
/// without your confirmation.
///
/// Start the daemon with `maven daemon`; the other commands talk to it over a Unix socket in the
/// data directory, or work offline (config check, fetch, feeds parse, mcp inspect).
///
/// Exit codes: 0 success, 1 the command failed, 2 usage or configuration error or no daemon
/// running, 3 refused by policy (e.g. a webfetch refusal).
#[derive(Parser, Debug)]
#[command(name = "maven", version, propagate_version = true)]
struct Cli {
    /// The configuration file [default: $XDG_CONFIG_HOME/maven/config.json; a missing default
    /// file means every default: nothing external]
    #[arg(long, global = true, env = "MAVEN_CONFIG", value_name = "PATH")]
    config: Option<PathBuf>,

    /// The data directory: database, IPC socket, lock [default: $XDG_DATA_HOME/maven]
    #[arg(long, global = true, env = "MAVEN_DATA", value_name = "DIR")]
    data: Option<PathBuf>,

    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run the daemon in the foreground until SIGINT or SIGTERM.
    ///
    /// With no config file it starts on embedded defaults and makes no outbound connection.
    Daemon(DaemonArgs),
    /// Say one sentence to the daemon and print its answer (one turn).
    ///
    /// This is the only way anything runs an act; an act that writes asks for a confirmation
    /// first ("About to run X. Run it? (yes/no)"), answered by the next `maven say yes`.
    /// Exit 0 when the turn succeeded, 1 when an act was refused or failed.
    Say(SayArgs),
    /// Show the running daemon's status.
    Status(JsonFlag),
    /// List the act allowlist: every tool row with its state (read-only).
    Tools(JsonFlag),
    /// List notes, newest first (read-only).
    Notes(NotesArgs),
    /// Check the configuration file.
    #[command(subcommand)]
    Config(ConfigCmd),
    /// Fetch a URL through a webfetch door and print status, headers and body size.
    ///
    /// Exit codes: 0 on a 2xx; 3 when webfetch refused (scheme, forbidden address or name,
    /// allow/deny list, a forbidden redirect, too many redirects); 1 any other failure;
    /// 2 usage error.
    Fetch(FetchArgs),
    /// Feeds: parse a feed file; show the poller's status.
    #[command(subcommand)]
    Feeds(FeedsCmd),
    /// MCP servers.
    #[command(subcommand)]
    Mcp(McpCmd),
    /// The local page: passkey enrollment and the fallback passphrase.
    #[command(subcommand)]
    Web(WebCmd),
}

#[derive(Subcommand, Debug)]
enum WebCmd {
    /// Print a one-time link (valid 10 minutes) that enrolls a passkey on the page. Needs the
    /// daemon running; open the link in a browser on this machine.
    Enroll,
    /// Read a passphrase (from the terminal, or one line of standard input) and print its
    /// argon2id hash for `web.passphrase_hash`: the step-up for machines without a passkey.
    Passphrase,
}

#[derive(Args, Debug)]
struct JsonFlag {
    /// Print JSON (a stable interface; see the README)
    #[arg(long)]
    json: bool,
}

#[derive(Args, Debug)]
struct DaemonArgs {
    /// Log format on stderr
    #[arg(long, value_enum, default_value = "human")]
    log_format: LogFormat,
    /// Log filter, e.g. "info" or "maven=debug,mcp=trace" [env: RUST_LOG]
    #[arg(long, value_name = "FILTER")]
    log: Option<String>,
}

#[derive(Args, Debug)]
struct SayArgs {
    /// The sentence, e.g. "what's new in my feeds?" or "todo list tasks inbox"
    #[arg(required = true, trailing_var_arg = true, allow_hyphen_values = true)]
    text: Vec<String>,
    /// Print the whole answer as JSON: {"answer", "pending", "ok"}
    #[arg(long)]
    json: bool,
}

#[derive(Args, Debug)]
struct NotesArgs {
    /// Only notes whose source starts with PREFIX, e.g. "rss:" or "rss:lwn"
    #[arg(long, value_name = "PREFIX")]
    source: Option<String>,
    /// At most this many notes
    #[arg(long, default_value_t = 50)]
    limit: u32,
    /// Print JSON
    #[arg(long)]
    json: bool,
}

#[derive(Subcommand, Debug)]
enum ConfigCmd {
    /// Validate a configuration file (every block, enabled or not). Exit 0 when valid, 1 when
    /// not, with every problem listed.
    Check {
        /// The file to check [default: --config or the default path]
        path: Option<PathBuf>,
    },
}

#[derive(Args, Debug)]
struct FetchArgs {
    /// The URL (http or https)
    url: String,
    /// The door whose limits apply: fetch (the global block), feed:<name>, mcp:<name>, router
    #[arg(long, default_value = "fetch")]
    door: String,
    /// Print JSON
    #[arg(long)]
    json: bool,
}

#[derive(Subcommand, Debug)]
enum FeedsCmd {
    /// Parse a feed (RSS, Atom, JSON Feed) from a file or stdin and print it as JSON.
    ///
    /// Exit 0 when a feed was recognised (even with warnings), 1 when the input is not a feed.
    Parse {
        /// The file, or - for standard input
        file: String,
        /// The URL the feed came from (resolves relative links)
        #[arg(long)]
        url: Option<String>,
        /// The HTTP Content-Type it came with (its charset is a hint)
        #[arg(long)]
        content_type: Option<String>,
    },
    /// Show each feed from the running daemon: state, last success, last error, next poll,
    /// items noted (read-only).
    Status {
        /// Print JSON (a stable interface; see the README)
        #[arg(long)]
        json: bool,
    },
}

#[derive(Subcommand, Debug)]
enum McpCmd {
    /// Convert another MCP host's configuration (the `mcpServers` shape of Claude Desktop,
    /// Cursor, VS Code…) into a Maven `mcp_servers` block, printed on stdout.
    ///
    /// Every server comes out `"enabled": false`. Environment and header values are never
    /// printed: they become `${NAME}` references, and stderr names the variables to set.
    /// Exit 0 on success, 2 when the file cannot be read or has another shape.
    Import {
        /// The file, or - for standard input
        file: String,
    },
    /// Show every configured MCP server as the running daemon sees it: transport, target
    /// (secrets masked), state, trust, protocol, counts, last error, stderr tail.
    Status {
        /// Print JSON
        #[arg(long)]
        json: bool,
    },
    /// Dial one configured server (even a disabled one), list its tools and say what Maven
    /// would do with each. Changes nothing and never calls a tool.
    ///
    /// Exit 0 when the listing completed, 1 when dialling, the handshake or the listing failed,
    /// 2 for a usage or configuration error.
    Inspect {
        /// The server's name in mcp_servers
        name: String,
        /// Print JSON
        #[arg(long)]
        json: bool,
    },
}

pub(crate) fn main() -> ExitCode {
    let cli = Cli::parse();
    let data_dir = cli.data.clone().unwrap_or_else(config::default_data_dir);
    match cli.command {
        Command::Daemon(a) => crate::daemon::main(crate::daemon::Options {
            config: cli.config,
            data_dir,
            log_format: a.log_format,
            log_filter: a.log,
        }),
        Command::Say(a) => say(&data_dir, &a.text.join(" "), a.json),
        Command::Status(f) => client(&data_dir, "status", json!({}), |v| {
            if f.json {
                print_json(v)
            } else {
                print_status(v)
            }
        }),
        Command::Tools(f) => client(&data_dir, "tools", json!({}), |v| {
            if f.json {
                print_json(v)
            } else {
                print_tools(v)
            }
        }),
        Command::Notes(a) => {
            let params = json!({"source": a.source, "limit": a.limit});
            client(&data_dir, "notes", params, |v| {
                if a.json {
                    print_json(v)
                } else {
                    print_notes(v)
                }
            })
        }
        Command::Config(ConfigCmd::Check { path }) => {
            config_check(path.as_deref().or(cli.config.as_deref()))
        }
        Command::Fetch(a) => {
            let Some(cfg) = load_config(cli.config.as_deref()) else {
                return ExitCode::from(EXIT_USAGE);
            };
            let door = match cfg.door(&a.door) {
                Ok(d) => d,
                Err(e) => {
                    eprintln!("maven fetch: --door {}: {e}", a.door);
                    return ExitCode::from(EXIT_USAGE);
                }
            };
            runtime(crate::cmd::fetch::run(&a.url, door, a.json))
        }
        Command::Feeds(FeedsCmd::Parse {
            file,
            url,
            content_type,
        }) => crate::cmd::feeds_parse::run(&file, url.as_deref(), content_type.as_deref()),
        Command::Feeds(FeedsCmd::Status { json }) => client(&data_dir, "feeds", json!({}), |v| {
            if json {
                print_json(v)
            } else {
                print_feeds(v)
            }
        }),
        Command::Mcp(McpCmd::Import { file }) => crate::cmd::mcp_import::run(&file),
        Command::Mcp(McpCmd::Status { json }) => client(&data_dir, "mcp_servers", json!({}), |v| {
            if json {
                print_json(v)
            } else {
                print_mcp_servers(v)
            }
        }),
        Command::Web(WebCmd::Enroll) => crate::web::cli::enroll(&data_dir),
        Command::Web(WebCmd::Passphrase) => crate::web::cli::passphrase(),
        Command::Mcp(McpCmd::Inspect { name, json }) => {
            let Some(cfg) = load_config(cli.config.as_deref()) else {
                return ExitCode::from(EXIT_USAGE);
            };
            let (Some(server), Some(block)) = (cfg.mcp_server(&name), cfg.mcp_servers.get(&name))
            else {
                let known: Vec<&str> = cfg.mcp_servers.keys().map(String::as_str).collect();
                eprintln!(
                    "maven mcp inspect: no MCP server named {name:?} in {} (configured: {})",
                    config_name(&cfg),
                    if known.is_empty() {
                        "none".to_string()
                    } else {
                        known.join(", ")
                    }
                );
                return ExitCode::from(EXIT_USAGE);
            };
            let allow = block.allow_tools.clone();
            let max = usize::try_from(block.max_tools).unwrap_or(usize::MAX);
            runtime(crate::cmd::mcp_inspect::run(server, &allow, max, json))
        }
    }
}

fn config_name(cfg: &Config) -> String {
    cfg.source
        .as_ref()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| "the default configuration (no file)".to_string())
}

/// Loads the configuration for an offline command, printing the problems on failure.
fn load_config(path: Option<&Path>) -> Option<Config> {
    match Config::load(path) {
        Ok(c) => Some(c),
        Err(e) => {
            eprintln!("{e}");
            None
        }
    }
}

fn runtime<F: std::future::Future<Output = ExitCode>>(f: F) -> ExitCode {
    match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt.block_on(f),
        Err(e) => {
            eprintln!("maven: cannot start the async runtime: {e}");
            ExitCode::from(EXIT_FAILED)
        }
    }
}

fn config_check(path: Option<&Path>) -> ExitCode {
    let shown = path
        .map(Path::to_path_buf)
        .unwrap_or_else(config::default_config_path);
    match Config::load(path) {
        Ok(c) => {
            match &c.source {
                Some(p) => println!(
                    "{}: ok ({} feeds, {} MCP servers, {} acts)",
                    p.display(),
                    c.feeds.len(),
                    c.mcp_servers.len(),
                    c.acts.len()
                ),
                None => println!(
                    "{}: no such file; every default applies (nothing external)",
                    shown.display()
                ),
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{e}");
            ExitCode::from(EXIT_FAILED)
        }
    }
}

/// Runs one IPC request against the daemon and hands the result to `show`.
fn client(data_dir: &Path, method: &str, params: Value, show: impl FnOnce(&Value)) -> ExitCode {
    let res = runtime(async {
        match ipc::call(data_dir, method, params).await {
            Ok(v) => {
                show(&v);
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("maven {method}: {e}");
                ExitCode::from(e.exit_code())
            }
        }
    });
    let _ = std::io::stdout().flush();
    res
}

fn say(data_dir: &Path, text: &str, as_json: bool) -> ExitCode {
    runtime(async {
        match ipc::call(data_dir, "turn", json!({ "text": text })).await {
            Ok(v) => {
                if as_json {
                    print_json(&v);
                } else {
                    println!("{}", v["answer"].as_str().unwrap_or(""));
                }
                if v["ok"].as_bool().unwrap_or(false) {
                    ExitCode::SUCCESS
                } else {
                    ExitCode::from(EXIT_FAILED)
                }
            }
            Err(e) => {
                eprintln!("maven say: {e}");
                ExitCode::from(e.exit_code())
            }
        }
    })
}

fn print_json(v: &Value) {
    match serde_json::to_string_pretty(v) {
        Ok(s) => println!("{s}"),
        Err(e) => eprintln!("maven: cannot print JSON: {e}"),
    }
}

fn s<'a>(v: &'a Value, k: &str) -> &'a str {
    v.get(k).and_then(Value::as_str).unwrap_or("-")
}

fn print_status(v: &Value) {
    println!("maven {} — up {}s", s(v, "version"), v["uptime_s"]);
    println!("data: {}", s(v, "data_dir"));
    if let Some(acts) = v.get("acts").and_then(Value::as_object) {
        let parts: Vec<String> = acts.iter().map(|(k, n)| format!("{n} {k}")).collect();
        println!("acts: {}", parts.join(", "));
    }
    let servers = v["mcp_servers"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    println!("MCP servers: {}", servers.len());
    for srv in servers {
        println!(
            "  {:<20} {:<6} {}",
            s(srv, "name"),
            s(srv, "transport"),
            s(srv, "state")
        );
    }
    let feeds = v["feeds"].as_array().map(Vec::as_slice).unwrap_or(&[]);
    println!("feeds: {}", feeds.len());
    for f in feeds {
        println!("  {:<20} {}", s(f, "name"), s(f, "url"));
    }
}

fn print_tools(v: &Value) {
    let rows = v.as_array().map(Vec::as_slice).unwrap_or(&[]);
    if rows.is_empty() {
        println!("no tools yet: acts come from the config and from enabled MCP servers");
        return;
    }
    println!(
        "{:<32} {:<9} {:<11} {:<16} {:<14} description",
        "name", "state", "destructive", "scope", "fingerprint"
    );
    for r in rows {
        let fp = r["fingerprint"].as_str().unwrap_or("-");
        let fp: String = fp
            .rsplit(':')
            .next()
            .unwrap_or(fp)
            .chars()
            .take(12)
            .collect();
        let desc: String = s(r, "description").chars().take(60).collect();
        println!(
            "{:<32} {:<9} {:<11} {:<16} {:<14} {}",
            s(r, "name"),
            s(r, "state"),
            if r["destructive"].as_bool().unwrap_or(true) {
                "yes"
            } else {
                "no"
            },
            s(r, "scope"),
            fp,
            desc
        );
        let prov = s(r, "provenance");
        if prov != "-" && !prov.is_empty() {
            println!("    {prov}");
        }
    }
}

fn print_feeds(v: &Value) {
    let rows = v.as_array().map(Vec::as_slice).unwrap_or(&[]);
    if rows.is_empty() {
        println!("no feeds configured");
        return;
    }
    for f in rows {
        let noted = f["items_noted"]
            .as_u64()
            .map_or("-".to_string(), |n| n.to_string());
        println!(
            "{:<20} {:<12} noted {:<6} last ok {:<20} next {}",
            s(f, "name"),
            s(f, "state"),
            noted,
            s(f, "last_success"),
            s(f, "next_poll")
        );
        println!("    {}", s(f, "url"));
        if let Some(to) = f["moved_to"].as_str() {
            println!("    redirects to {to} (the config is left as it is)");
        }
        if let Some(e) = f["last_error"].as_str() {
            println!("    error: {e}");
        }
        if let Some(w) = f["warning"].as_str() {
            println!("    warning: {w}");
        }
    }
}

fn print_notes(v: &Value) {
    let rows = v.as_array().map(Vec::as_slice).unwrap_or(&[]);
    if rows.is_empty() {
        println!("no notes");
        return;
    }
    for n in rows {
        println!(
            "[{}] {} — {}",
            s(n, "created"),
            s(n, "source"),
            s(n, "text")
        );
        if let Some(l) = n["link"].as_str() {
            println!("    {l}");
        }
    }
}

fn print_mcp_servers(v: &Value) {
    let rows = v.as_array().map(Vec::as_slice).unwrap_or(&[]);
    if rows.is_empty() {
        println!("no MCP servers configured");
        return;
    }
    for r in rows {
        println!(
            "{} ({}, {})",
            s(r, "name"),
            s(r, "transport"),
            s(r, "state")
        );
        println!("  target:   {}", s(r, "target"));
        println!("  trust:    {}", s(r, "trust"));
        if let Some(p) = r["protocol_version"].as_str() {
            println!(
                "  server:   {} {} (protocol {p})",
                s(&r["server_info"], "name"),
                s(&r["server_info"], "version")
            );
        }
        println!(
            "  tools:    {} offered, {} proposed, {} enabled",
            r["tools_offered"], r["tools_proposed"], r["tools_enabled"]
        );
        for t in r["tools_refused"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or(&[])
        {
            println!("  refused:  {} — {}", s(t, "tool"), s(t, "reason"));
        }
        if let Some(e) = r["last_error"].as_str() {
            println!("  error:    {e}");
        }
        if let Some(t) = r["stderr_tail"].as_str().filter(|t| !t.trim().is_empty()) {
            println!(
                "  stderr:   {}",
                t.trim_end().replace('\n', "\n            ")
            );
        }
    }
}
