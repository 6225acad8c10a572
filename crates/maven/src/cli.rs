//! Command-line parsing and dispatch.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, CommandFactory, Parser, Subcommand};

use config::Config;

use crate::cmd::mcp_edit::Change;
use crate::cmd::{runtime, show};
use crate::exit::LogFormat;
use wire::methods::Request;

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
    /// Run the daemon in the foreground until SIGINT or SIGTERM; SIGHUP reloads its
    /// configuration (as `maven reload` does).
    ///
    /// With no config file it starts on embedded defaults and makes no outbound connection.
    Daemon(DaemonArgs),
    /// Say one sentence to the daemon and print its answer (one turn).
    ///
    /// This is the only way anything runs an act; an act that writes asks for a confirmation
    /// first ("About to run X. Run it? (yes/no)"), answered by the next `maven say yes` of the
    /// same conversation. Exit 0 when the turn succeeded, 1 when an act was refused or failed.
    ///
    /// Every `maven say` is one conversation, the owner's terminal's, unless --conversation
    /// NAME names another: the turns of one conversation run in order, those of different
    /// conversations at the same time (a slow act in one never delays another), and a
    /// question waits for a yes of its own conversation only.
    Say(SayArgs),
    /// Talk to Maven: a voice satellite (Wyoming services in `voice`) until Ctrl-C.
    ///
    /// The speech comes from the microphone (--recorder, else arecord or pw-record), after the
    /// wake word (voice.wake) or Enter, up to the end of the utterance; or, for one turn, from
    /// --input FILE.wav (or - for a WAV on stdin). The words come from the speech-to-text
    /// service `voice.asr`; the answer is spoken by `voice.tts` sentence by sentence into the
    /// system player (aplay or pw-play) or --output OUT.wav. A write asks for a one-time word,
    /// "To run it, say: yes, orange.", heard in the follow-up window without the wake word.
    /// Prints what it heard and what Maven answered.
    Listen(ListenArgs),
    /// Show the running daemon's status.
    Status(JsonFlag),
    /// Make the running daemon read its configuration file again and apply the difference,
    /// without a restart (as SIGHUP does): added servers start, removed ones stop, changed ones
    /// restart, unchanged ones keep their connections; feeds, doors, acts, the router, the
    /// page (its sessions end) and the voice listener follow, and rows a narrowed
    /// `allow_tools` no longer allows are withdrawn.
    ///
    /// The daemon reads the file it was started with. Exit 0 when applied; 1 when the file
    /// does not validate (the error `maven config check` gives; the configuration in force
    /// stays) or a reload is already being applied; 2 when no daemon runs.
    Reload(JsonFlag),
    /// List the act allowlist: every tool row with its state (read-only).
    Tools(JsonFlag),
    /// List notes, newest first (read-only).
    Notes(NotesArgs),
    /// List the acts that ran, newest first: when, which, who confirmed, the outcome, how long,
    /// and the first line of what each returned (read-only).
    ///
    /// Asks the running daemon; without one, reads the data directory's store under its lock.
    Acts(ActsArgs),
    /// Check the configuration file.
    #[command(subcommand)]
    Config(ConfigCmd),
    /// Fetch a URL through a webfetch door and print status, headers and body size.
    ///
    /// Exit codes: 0 on a 2xx; 3 when webfetch refused (scheme, forbidden address or name,
    /// allow/deny list, a forbidden redirect, too many redirects); 1 any other failure;
    /// 2 usage error.
    Fetch(FetchArgs),
    /// Feeds: add, import, export, refresh; parse a feed file; show the poller's status.
    #[command(subcommand)]
    Feeds(FeedsCmd),
    /// MCP servers.
    #[command(subcommand)]
    Mcp(McpCmd),
    /// Sentence templates in Home Assistant's format (hassil's): what a sentence matches, which
    /// templates serve an act, whether the owner's files load. No daemon needed.
    ///
    /// The owner's files are `sentences/<lang>/*.yaml` beside the configuration file
    /// (`$XDG_CONFIG_HOME/maven/sentences/en/`, as Home Assistant's `custom_sentences/en/`) and
    /// the files or folders `"sentences"` names; an intent is an act's name, a slot a property
    /// of its input schema. The phrasebook that ships with Maven serves the servers people
    /// install first.
    #[command(subcommand)]
    Sentences(SentencesCmd),
    /// The local page: passkey enrollment and the fallback passphrase.
    #[command(subcommand)]
    Web(WebCmd),
    /// Run the daemon as a systemd user service: write, remove or inspect its unit.
    #[command(subcommand)]
    Service(crate::cmd::service::ServiceCmd),
    /// Check the set-up, changing nothing: the config, the data directory's owner and modes, a
    /// running daemon, each enabled stdio server's command (and, for a root daemon, each write
    /// grant its server's own uid could not use, with the chown line), each HTTP door's URL
    /// (vetted, never requested), the page's port; the model router's endpoint (one GET) and
    /// each speech service of `voice` (a Wyoming describe) are probed; beside a running daemon,
    /// each enabled MCP server's state and last error (failing when one is not ready: crashed,
    /// backing off, not started), each polled feed's, and the router's last error.
    ///
    /// One line per check: `ok|warn|fail  <check>: <what> — <what to do>`. Exit 0, or 1 when
    /// any check fails.
    Doctor(JsonFlag),
    /// Print the shell completion script for bash, zsh or fish on stdout.
    Completions {
        /// The shell
        #[arg(value_enum)]
        shell: crate::cmd::completions::Shell,
    },
    /// Print the man page (roff) on stdout, e.g. `maven man > ~/.local/share/man/man1/maven.1`.
    Man,
}

#[derive(Subcommand, Debug)]
enum SentencesCmd {
    /// Match each SENTENCE and print its intent and slots (as `python -m hassil` does). Exit
    /// 1 when one matched nothing.
    Match {
        /// Only this language (en or ru); else the sentence's own first, then the other
        #[arg(long)]
        lang: Option<String>,
        /// Match these files alone (repeatable); else the owner's files and the phrasebook
        #[arg(long = "file")]
        files: Vec<std::path::PathBuf>,
        /// One JSON line per sentence: {"intent": NAME, "slots": {...}}, or {"intent": null}
        #[arg(long)]
        json: bool,
        /// The sentences
        #[arg(required = true)]
        sentences: Vec<String>,
    },
    /// List the templates that serve ACT (a row name such as time_get_current_time, or a
    /// tool's name), or every template, with the file and line of each.
    List {
        /// The act
        act: Option<String>,
    },
    /// Load the owner's files (or these) and name every problem with FILE:LINE:COL. Exit 1
    /// when one does not load.
    Check {
        /// The files
        files: Vec<std::path::PathBuf>,
    },
}

#[derive(Subcommand, Debug)]
enum WebCmd {
    /// Print a one-time link (valid 10 minutes) that enrolls a passkey on the page. Needs the
    /// daemon running; open the link in a browser on this machine.
    Enroll,
    /// Read a passphrase (from the terminal, or one line of standard input) and print its
    /// argon2id hash for `web.passphrase_hash`: the step-up for machines without a passkey.
    ///
    /// With --write the hash is not printed: it is set as `web.passphrase_hash` in the
    /// configuration file (--config, else the one the running daemon reads, else the default;
    /// validated first, the previous file kept as FILE.bak) and a running daemon reloaded.
    Passphrase {
        /// Write the hash into the configuration file and reload the daemon
        #[arg(long)]
        write: bool,
    },
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
    /// Also say (on stderr, or as "explain" in the JSON) which sentence template matched,
    /// from which file, or why none did
    #[arg(long)]
    explain: bool,
    /// The conversation this turn belongs to, instead of the owner's terminal's own: 1 to 64
    /// letters, digits, '-', '_' or '.'. A question asked in it waits for a yes in it, and
    /// its turns never wait for another conversation's (e.g. a slow act's)
    #[arg(long, value_name = "NAME", value_parser = conversation_name)]
    conversation: Option<String>,
}

/// A terminal conversation's name, as the daemon takes it.
fn conversation_name(name: &str) -> Result<String, String> {
    wire::methods::check_conversation_name(name).map(|()| name.to_owned())
}

#[derive(Args, Debug)]
#[command(
    after_help = "Without --input, it listens until Ctrl-C: a turn starts on the wake word \
(voice.wake) or, without one, on Enter; after an answer that asks something (a yes, a server's \
question) it listens again at once, without the wake word, for the follow-up window (8 s of \
audio unless --follow-up). The whole run is one conversation, so \"yes, WORD\" confirms the \
question it heard. It says on stderr what it is doing, and each turn's timings."
)]
struct ListenArgs {
    /// One turn from a WAV file of speech (16-bit; any rate, mono or stereo), or - for stdin,
    /// then exit
    #[arg(long)]
    input: Option<String>,
    /// Where to write the spoken answer (a WAV file; in a session each answer replaces the
    /// last), instead of playing it
    #[arg(long)]
    output: Option<PathBuf>,
    /// The microphone: a command (run by sh -c) that writes raw 16 kHz mono S16_LE audio on
    /// its stdout, instead of arecord or pw-record
    #[arg(long, value_name = "COMMAND", conflicts_with = "input")]
    recorder: Option<String>,
    /// The follow-up window: seconds of audio in which the answer to Maven's question must
    /// begin, without the wake word (1 to 120)
    #[arg(long, value_name = "SECONDS",
          default_value_t = crate::cmd::listen::FOLLOW_UP.as_secs(),
          value_parser = clap::value_parser!(u64).range(1..=crate::cmd::listen::MAX_FOLLOW_UP.as_secs()))]
    follow_up: u64,
    /// Speak the answer in one synthesize, played once its audio is whole, instead of sentence
    /// by sentence as it is made
    #[arg(long)]
    speak_whole: bool,
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

#[derive(Args, Debug)]
struct ActsArgs {
    /// At most this many acts (1 to 1000)
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u32).range(1..=1000))]
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
    /// Parse a feed (RSS, Atom, JSON Feed, Microsoft CDF) from a file or stdin and print it as
    /// JSON (`format`: rss2.0, rss1.0, rss0.9x, atom1.0, atom0.3, json1.x or cdf).
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
        /// The HTTP Content-Location it came with (resolved against --url; relative links are
        /// resolved against it, an xml:base still wins)
        #[arg(long)]
        content_location: Option<String>,
    },
    /// Add a feed: URL is the feed, or a site's page whose <link rel="alternate"> names it.
    ///
    /// The feed is fetched and parsed through the door the poller uses before its block is
    /// written to the config file (validated first, the old file kept as config.json.bak);
    /// a running daemon is then asked to reload. Exit 0 added, 1 not added (no feed there, a
    /// duplicate name or URL), 2 usage, 3 the address was refused (see --allow-private).
    Add {
        /// The feed's URL, or a page that links to it
        url: String,
        /// The feed's name [default: made of its title, else its host]
        #[arg(long)]
        name: Option<String>,
        /// Let the feed be on a private or loopback address (its block gets "allow_private": true)
        #[arg(long)]
        allow_private: bool,
    },
    /// Add every feed of an OPML subscription list (OPML 1.0 or 2.0, folders read through);
    /// feeds already configured or listed twice are skipped and named. Nothing is fetched.
    Import {
        /// The OPML file
        file: std::path::PathBuf,
    },
    /// Print the configured feeds as an OPML 2.0 subscription list on stdout.
    Export,
    /// Ask the running daemon to poll now (one feed, or every enabled feed), within the
    /// per-host spacing and a failing feed's backoff: a spacing that ends within 5 s is waited
    /// out; a feed they hold back longer is named, with when.
    Refresh {
        /// The feed's name [default: every enabled feed]
        name: Option<String>,
        /// Print JSON: [{"name", "polled", "noted", "error", "held_back", "until"}]
        #[arg(long)]
        json: bool,
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
    /// Cursor, VS Code…) into Maven `mcp_servers` blocks: printed on stdout, or with --write
    /// merged into the configuration file.
    ///
    /// Every server comes out `"enabled": false`. Header values, and environment values that
    /// look secret (a name with TOKEN, KEY, SECRET, PASSWORD, PASS, AUTH or CREDENTIAL, or a
    /// token-shaped value), are never written: they become `${NAME}` references, and stderr
    /// names the variables to set. Any other environment value stays as written; a path in it
    /// gets the sandbox grant it needs. Each server's sandbox is said on stderr.
    ///
    /// With --write: the file (--config, else the default) is validated with the blocks merged
    /// before anything is written, the previous one kept as FILE.bak, and a running daemon
    /// reloaded. A block of the same name is refused (exit 1, naming it) unless --replace.
    /// Exit 0 on success, 1 when the merge was refused or the daemon refused the file, 2 when
    /// the input cannot be read or has another shape.
    Import {
        /// The file, or - for standard input
        file: String,
        /// Merge the blocks into the configuration file and reload a running daemon
        #[arg(long)]
        write: bool,
        /// With --write: replace blocks of the same name
        #[arg(long, requires = "write")]
        replace: bool,
    },
    /// Switch a configured server on (`"enabled": true` in its block), then reload a running
    /// daemon, which starts it. Through the one config writer: validated first, the previous
    /// file kept as FILE.bak.
    ///
    /// Exit 0 when written (or already enabled), 1 when there is no such server or the daemon
    /// refused the file.
    Enable {
        /// The server's name in mcp_servers
        name: String,
    },
    /// Switch a configured server off (`"enabled": false`), then reload a running daemon,
    /// which stops it. Exit codes as `enable`.
    Disable {
        /// The server's name in mcp_servers
        name: String,
    },
    /// Name tools in a server's `allow_tools` (added to those it names), then reload a running
    /// daemon: only the named tools are proposed, whatever their number, and a read-only tool
    /// named there with one argument takes the rest of the sentence as it (`maven mcp allow
    /// time get_current_time`, then `maven say time get current time Asia/Tokyo`).
    ///
    /// A tool the running daemon's listing of the server does not have is refused, naming
    /// what it offers. Exit 0 when written (or already named), 1 when refused.
    Allow {
        /// The server's name in mcp_servers
        name: String,
        /// The tools, as the server names them (`maven mcp status` and `maven mcp inspect`
        /// show them)
        #[arg(required = true)]
        tools: Vec<String>,
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
    /// Authorize an HTTP server that asks for OAuth: asks the running daemon for a one-time
    /// link to its page (valid 10 minutes), to open in a browser on this machine. The page asks
    /// for a fresh step-up (passkey or passphrase), sends the browser to the authorization
    /// server, and takes it back at its own `/oauth/callback`; the daemon keeps the tokens and
    /// dials the server again.
    ///
    /// Exit 0 when the link is printed, 1 when the daemon is not running or refused, 2 for a
    /// usage or configuration error.
    Login {
        /// The server's name in mcp_servers
        name: String,
    },
    /// Forget an HTTP server's OAuth tokens and registration (revoked first where the
    /// authorization server offers revocation). Through the running daemon when there is
    /// one, else in the data directory's store.
    ///
    /// Exit 0 when forgotten, 1 when it failed, 2 for a usage or configuration error.
    Logout {
        /// The server's name in mcp_servers
        name: String,
    },
}

/// `maven mcp enable|disable|allow`: the block changed in `--config`'s file (else the
/// default), and the daemon reloaded.
fn mcp_edit(
    config: Option<&std::path::Path>,
    data_dir: &std::path::Path,
    name: String,
    change: Change,
) -> ExitCode {
    let config = crate::cmd::config_edit::target(config);
    runtime(crate::cmd::mcp_edit::run(&config, data_dir, &name, change))
}

pub(crate) fn main() -> ExitCode {
    let cli = Cli::parse();
    let data_dir = cli.data.clone().unwrap_or_else(config::default_data_dir);
    match cli.command {
        Command::Doctor(f) => runtime(crate::cmd::doctor::run(
            cli.config.as_deref(),
            &data_dir,
            f.json,
        )),
        Command::Completions { shell } => crate::cmd::completions::run(Cli::command(), shell),
        Command::Man => crate::cmd::man::run(Cli::command()),
        Command::Daemon(a) => {
            let ran = daemon::main(daemon::Options {
                config: cli.config,
                data_dir,
                log_format: match a.log_format {
                    LogFormat::Human => daemon::LogFormat::Human,
                    LogFormat::Json => daemon::LogFormat::Json,
                },
                log_filter: a.log,
            });
            match ran {
                Ok(()) => ExitCode::SUCCESS,
                Err(daemon::Failed::Config) => ExitCode::from(crate::exit::EXIT_USAGE),
                Err(daemon::Failed::Run) => ExitCode::from(crate::exit::EXIT_FAILED),
            }
        }
        Command::Say(a) => crate::cmd::say::run(
            &data_dir,
            &a.text.join(" "),
            a.json,
            a.explain,
            a.conversation,
        ),
        Command::Listen(a) => crate::cmd::listen::run(crate::cmd::listen::Listen {
            config: cli.config.as_deref(),
            data_dir: &data_dir,
            input: a.input.as_deref(),
            output: a.output.as_deref(),
            recorder: a.recorder.as_deref(),
            follow_up: std::time::Duration::from_secs(a.follow_up),
            speak_whole: a.speak_whole,
        }),
        Command::Status(f) => show::client(&data_dir, Request::Status, f.json, show::print_status),
        Command::Reload(f) => crate::cmd::reload::run(&data_dir, f.json),
        Command::Tools(f) => show::client(&data_dir, Request::Tools, f.json, show::print_tools),
        Command::Notes(a) => {
            // The limit is the daemon's to check: one out of range is its error.
            let req = Request::Notes {
                source: a.source,
                limit: a.limit,
            };
            show::client(&data_dir, req, a.json, show::print_notes)
        }
        Command::Acts(a) => crate::cmd::acts::run(&data_dir, a.limit, a.json),
        Command::Sentences(SentencesCmd::Match {
            lang,
            files,
            json,
            sentences,
        }) => crate::cmd::sentences::matching(
            cli.config.as_deref(),
            &files,
            lang.as_deref(),
            json,
            &sentences,
        ),
        Command::Sentences(SentencesCmd::List { act }) => {
            crate::cmd::sentences::list(cli.config.as_deref(), act.as_deref())
        }
        Command::Sentences(SentencesCmd::Check { files }) => {
            crate::cmd::sentences::check(cli.config.as_deref(), &files)
        }
        Command::Config(ConfigCmd::Check { path }) => {
            crate::cmd::config_check::run(path.as_deref().or(cli.config.as_deref()), &data_dir)
        }
        Command::Fetch(a) => {
            crate::cmd::fetch::main(cli.config.as_deref(), &a.url, &a.door, a.json)
        }
        Command::Feeds(FeedsCmd::Parse {
            file,
            url,
            content_type,
            content_location,
        }) => crate::cmd::feeds_parse::run(
            &file,
            url.as_deref(),
            content_type.as_deref(),
            content_location.as_deref(),
        ),
        Command::Feeds(FeedsCmd::Add {
            url,
            name,
            allow_private,
        }) => runtime(crate::cmd::feeds_add::run(
            cli.config.as_deref(),
            &data_dir,
            &url,
            name.as_deref(),
            allow_private,
        )),
        Command::Feeds(FeedsCmd::Import { file }) => runtime(crate::cmd::feeds_opml::import(
            cli.config.as_deref(),
            &data_dir,
            &file,
        )),
        Command::Feeds(FeedsCmd::Export) => crate::cmd::feeds_opml::export(cli.config.as_deref()),
        Command::Feeds(FeedsCmd::Refresh { name, json }) => show::client(
            &data_dir,
            Request::FeedsRefresh { name },
            json,
            show::print_refresh,
        ),
        Command::Feeds(FeedsCmd::Status { json }) => {
            show::client(&data_dir, Request::Feeds, json, show::print_feeds)
        }
        Command::Mcp(McpCmd::Import {
            file,
            write,
            replace,
        }) => {
            let config = crate::cmd::config_edit::target(cli.config.as_deref());
            let to = write.then_some(crate::cmd::mcp_import::WriteTo {
                config: &config,
                replace,
                data_dir: &data_dir,
            });
            crate::cmd::mcp_import::run(&file, to, &data_dir)
        }
        Command::Mcp(McpCmd::Enable { name }) => {
            mcp_edit(cli.config.as_deref(), &data_dir, name, Change::Enable)
        }
        Command::Mcp(McpCmd::Disable { name }) => {
            mcp_edit(cli.config.as_deref(), &data_dir, name, Change::Disable)
        }
        Command::Mcp(McpCmd::Allow { name, tools }) => {
            mcp_edit(cli.config.as_deref(), &data_dir, name, Change::Allow(tools))
        }
        Command::Mcp(McpCmd::Status { json }) => show::client(
            &data_dir,
            Request::McpServers,
            json,
            show::print_mcp_servers,
        ),
        Command::Web(WebCmd::Enroll) => crate::cmd::web::enroll(&data_dir),
        Command::Web(WebCmd::Passphrase { write }) => {
            crate::cmd::web::passphrase(cli.config.as_deref(), &data_dir, write)
        }
        Command::Service(c) => {
            crate::cmd::service::run(c, cli.config.as_deref(), cli.data.as_deref())
        }
        Command::Mcp(McpCmd::Login { name }) => {
            // The daemon has the configuration; this shell may not resolve all of it.
            let cfg = Config::load(cli.config.as_deref()).ok();
            runtime(crate::cmd::mcp_login::login(cfg, name, data_dir))
        }
        Command::Mcp(McpCmd::Logout { name }) => {
            let cfg = Config::load(cli.config.as_deref())
                .map_err(|e| shown::block(&e.to_string()).into_owned());
            let db = data_dir.join(daemon::DB_NAME);
            runtime(crate::cmd::mcp_login::logout(cfg, name, data_dir, db))
        }
        Command::Mcp(McpCmd::Inspect { name, json }) => {
            crate::cmd::mcp_inspect::main(cli.config.as_deref(), &data_dir, name, json)
        }
    }
}
