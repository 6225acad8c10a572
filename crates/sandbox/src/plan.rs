//! The policy a block asks for and the plan resolved from it (see the crate docs).

use std::ffi::OsStr;
use std::io::Read as _;
use std::os::unix::fs::{DirBuilderExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::net::Network;

use crate::nolink::{self, normal, shown};

/// The hidden subcommand of the `maven` binary that runs the launcher.
pub const LAUNCHER_ARG: &str = "__sandbox-exec";
/// The hidden subcommand that starts an unsandboxed server in a PID namespace of its own.
pub const GROUP_ARG: &str = "__group-exec";
/// The hidden subcommand that is pid 1 of a server's PID namespace.
pub const INIT_ARG: &str = "__sandbox-init";

/// Default bound of the address space (`memory`): 16 GiB. JavaScript and WebAssembly engines
/// reserve far more address space than they use, so this bounds a runaway, not a working set:
/// Node's own `fetch` compiles its HTTP parser to WebAssembly, whose memory reserves about
/// 10 GiB of address space (under 8 GiB its first request fails with "Out of memory: Cannot
/// allocate Wasm memory").
pub const DEFAULT_MEMORY: u64 = 16 * 1024 * 1024 * 1024;
/// Default bound of processes and threads (`processes`) inside one sandbox: 256. The kernel
/// counts them per user namespace, so only the server's own tasks count.
pub const DEFAULT_PROCESSES: u64 = 256;
/// Smallest `memory` a block may set: 64 MiB (below it no interpreter starts).
pub const MIN_MEMORY: u64 = 64 * 1024 * 1024;
/// Default bound of a server's private directory (`disk`): 1 GiB.
pub const DEFAULT_DISK: u64 = 1024 * 1024 * 1024;
/// Smallest `disk` a block may set: 16 MiB.
pub const MIN_DISK: u64 = 16 * 1024 * 1024;
/// Largest `processes` a block may set.
pub const MAX_PROCESSES: u64 = 100_000;

/// The directories every program may read and execute: what a dynamically linked program
/// or an interpreter needs to start. Only those that exist are used.
pub const SYSTEM_READ: &[&str] = &[
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/etc",
    "/proc",
    "/sys/devices/system/cpu",
    "/sys/fs/cgroup",
    "/run/systemd/resolve",
];

/// Directories covered by an empty tmpfs in every sandbox, besides the data directory and the
/// owner's home: where the UNIX sockets of other programs live (Landlock does not mediate
/// `connect()` to a pathname socket on every kernel).
pub const HIDDEN: &[&str] = &["/tmp", "/var/tmp", "/run", "/dev/shm"];

/// Device files a program may read and write.
pub const DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
];

/// What the owner asked for in a block's `sandbox` key (`true` is [`Policy::default`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Policy {
    /// Paths the server may read (and execute), beyond the system's and its command's.
    pub read: Vec<PathBuf>,
    /// Paths the server may write (and read), beyond its private directory.
    pub write: Vec<PathBuf>,
    /// How the server reaches the network (`network`, `hosts`, `connect`; default: through
    /// Maven's proxy, public addresses only).
    #[serde(default)]
    pub network: Network,
    /// Bound of its address space, in bytes.
    pub memory: u64,
    /// Bound of its processes and threads.
    pub processes: u64,
    /// Bound of its private directory, in bytes (`disk`, default 1 GiB).
    #[serde(default = "default_disk")]
    pub disk: u64,
    /// Whether `write` may cover a directory other programs load code from (the owner's
    /// explicit choice, `allow_shared_code`).
    #[serde(default)]
    pub allow_shared_code: bool,
}

fn default_disk() -> u64 {
    DEFAULT_DISK
}

impl Policy {
    /// The trust line of a block not yet resolved (a dark block): what the owner granted, and
    /// that its program's own directories are readable too.
    pub fn trust(&self) -> String {
        let read: Vec<Grant> = self
            .read
            .iter()
            .map(|p| Grant::new(p.clone(), Why::Granted))
            .collect();
        let owner_home = std::env::var_os("HOME").map(PathBuf::from);
        let mut line = trust_line(
            &read,
            &self.write,
            &[],
            &self.network,
            None,
            owner_home.as_deref(),
        );
        if let Some(rest) = line.strip_prefix("sandboxed local process: reads none of your files") {
            line = format!("sandboxed local process: reads only its program's directories{rest}");
        } else {
            line = line.replacen(
                "sandboxed local process: reads ",
                "sandboxed local process: reads its program's directories, ",
                1,
            );
        }
        line
    }
}

impl Policy {
    /// The first of the owner's `read` and `write` paths that is a link or passes through one
    /// (in the owner's words, `~` below `home`): such a block is not started. `None` when every
    /// grant is a real path or absent.
    pub fn refused_grant(&self, home: Option<&Path>) -> Option<String> {
        self.read
            .iter()
            .chain(&self.write)
            .filter(|p| p.is_absolute())
            .find_map(|p| nolink::check(&normal(p)).err())
            .map(|r| r.words(home))
    }
}

/// Why a path outside the system's directories is readable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Why {
    /// The directory that holds the program (or the program itself).
    Program,
    /// The library directories of the program's installation prefix.
    Libraries,
    /// The directory of the interpreter a script names.
    Interpreter,
    /// The library directories of the interpreter's prefix.
    InterpreterLibraries,
    /// An existing file named in the server's arguments.
    Argument,
    /// The outermost `node_modules` directory that holds its program or a script named in its
    /// arguments: the packages that program imports.
    Packages,
    /// The owner's `read` list.
    Granted,
}

impl Why {
    fn words(self) -> &'static str {
        match self {
            Why::Program => "its program",
            Why::Libraries => "its program's libraries",
            Why::Interpreter => "its interpreter",
            Why::InterpreterLibraries => "its interpreter's libraries",
            Why::Argument => "named in its arguments",
            Why::Packages => "its packages",
            Why::Granted => "granted",
        }
    }
}

/// A readable path and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Grant {
    /// The path.
    pub path: PathBuf,
    /// Why it is readable.
    pub why: Why,
}

impl Grant {
    fn new(path: PathBuf, why: Why) -> Grant {
        Grant { path, why }
    }
}

/// Files and directories below the owner's home that hold credentials or what the owner
/// typed: no implicit grant may cover one (a prefix that holds one is narrowed to its `bin`
/// and library directories).
pub const CREDENTIALS: &[&str] = &[
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".kube",
    ".config/gh",
    ".config/gcloud",
    ".config/git/credentials",
    ".git-credentials",
    ".netrc",
    ".npmrc",
    ".pypirc",
    ".docker/config.json",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".bash_history",
    ".zsh_history",
    ".python_history",
    ".node_repl_history",
    ".psql_history",
    ".mysql_history",
    ".sqlite_history",
    ".lesshst",
    ".local/share/fish",
    ".local/share/keyrings",
    ".password-store",
];

/// What the trust line says of a granted path that does not exist: it is left out (neither
/// created nor bound), so the server gets nothing there.
const ABSENT: &str = "granted, absent: left out";

/// The trust line. `home` shortens paths to `~/…` when given; `code_home` is the home whose
/// shared code a write is judged against (the owner's, even where paths are shown whole).
fn trust_line(
    read: &[Grant],
    write: &[PathBuf],
    absent: &[PathBuf],
    network: &Network,
    home: Option<&Path>,
    code_home: Option<&Path>,
) -> String {
    let reads = if read.is_empty() {
        "reads none of your files".to_owned()
    } else {
        let mut list: Vec<String> = Vec::new();
        for g in read {
            let why = if absent.contains(&g.path) {
                ABSENT
            } else {
                g.why.words()
            };
            let item = format!("{} ({why})", shown(&g.path, home));
            if !list.contains(&item) {
                list.push(item);
            }
        }
        format!("reads {}", list.join(", "))
    };
    let writes = if write.is_empty() {
        "writes only its own directory".to_owned()
    } else if absent.iter().any(|a| write.contains(a)) {
        let list: Vec<String> = write
            .iter()
            .map(|p| {
                let why = if absent.contains(p) {
                    ABSENT
                } else {
                    "granted"
                };
                format!("{} ({why})", shown(p, home))
            })
            .collect();
        format!("writes {}", list.join(", "))
    } else if write
        .iter()
        .any(|p| crate::shared::shared_code(p, code_home, None).is_some())
    {
        // A write the block opted into where other programs run code is said in words.
        let list: Vec<String> = write
            .iter()
            .map(|p| match crate::shared::shared_code(p, code_home, None) {
                Some(_) => format!(
                    "{} (granted: where other programs run code)",
                    shown(p, home)
                ),
                None => format!("{} (granted)", shown(p, home)),
            })
            .collect();
        format!("writes {}", list.join(", "))
    } else {
        let list: Vec<String> = write.iter().map(|p| shown(p, home)).collect();
        format!("writes {} (granted)", list.join(", "))
    };
    let net = network_words(network);
    format!("sandboxed local process: {reads}, {writes}, {net}, memory bounded per process")
}

/// What the trust line says of the network.
fn network_words(network: &Network) -> String {
    match network {
        Network::None => "no network".to_owned(),
        Network::Direct => {
            "reaches every address of this machine and beyond but the page".to_owned()
        }
        Network::Proxy { hosts, connect } => {
            let mut s = "network through Maven: public addresses only".to_owned();
            if !hosts.is_empty() {
                s = format!(
                    "network through Maven: public addresses of {} only",
                    hosts.join(", ")
                );
            }
            if !connect.is_empty() {
                let list: Vec<&str> = connect.iter().map(|e| e.written.as_str()).collect();
                s = format!("{s}; {} granted", list.join(", "));
            }
            s
        }
    }
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            read: Vec::new(),
            write: Vec::new(),
            network: Network::default(),
            memory: DEFAULT_MEMORY,
            processes: DEFAULT_PROCESSES,
            disk: DEFAULT_DISK,
            allow_shared_code: false,
        }
    }
}

/// What a plan is resolved against.
#[derive(Debug, Clone)]
pub struct Context<'a> {
    /// Maven's data directory: hidden from the server, which gets `DATA/sandbox/<name>`.
    pub data_dir: &'a Path,
    /// The `PATH` the command is looked up in.
    pub path: Option<&'a OsStr>,
    /// TCP ports of this machine the server may never connect to even with network (the
    /// page's).
    pub deny_ports: Vec<u16>,
    /// The owner's home (`$HOME` of the daemon): hidden like the data directory.
    pub owner_home: Option<PathBuf>,
}

/// A policy resolved for one server: everything the launcher applies.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Plan {
    /// The server's name (for messages).
    pub server: String,
    /// The program executed (absolute).
    pub program: PathBuf,
    /// Read and execute: the system's directories, the command's and its interpreter's, and
    /// the policy's `read`.
    pub read: Vec<PathBuf>,
    /// Read and write: the private directory and the policy's `write`.
    pub write: Vec<PathBuf>,
    /// Device files, read and write.
    pub devices: Vec<PathBuf>,
    /// The private directory: `HOME` and working directory.
    pub home: PathBuf,
    /// `TMPDIR`, inside `home`.
    pub tmp: PathBuf,
    /// Directories covered by an empty read-only tmpfs ([`HIDDEN`], the owner's home, the data
    /// directory); every granted path inside them is mounted back at its place.
    pub hide: Vec<PathBuf>,
    /// How the server reaches the network.
    pub network: Network,
    /// The daemon's door socket, where the launcher of a proxied server hands over the
    /// listeners of its namespace (`None`: no proxy).
    #[serde(default)]
    pub door: Option<PathBuf>,
    /// With the `direct` network: TCP ports it may not connect to.
    pub deny_ports: Vec<u16>,
    /// Bound of its address space, in bytes.
    pub memory: u64,
    /// Bound of its processes and threads.
    pub processes: u64,
    /// Bound of its private directory, in bytes.
    #[serde(default = "default_disk")]
    pub disk: u64,
    /// Every readable path outside the system's directories, and why: the trust line.
    pub shown_read: Vec<Grant>,
    /// The owner's `write` list as written, for the trust line.
    pub owner_write: Vec<PathBuf>,
    /// The owner's home as the daemon knows it (`~` in the trust line).
    pub owner_home: Option<PathBuf>,
    /// The owner's `read` and `write` paths that did not exist when the plan was made: left
    /// out (neither created nor bound), and the trust line says so.
    #[serde(default)]
    pub absent: Vec<PathBuf>,
    /// For a daemon running as root: the uid and gid of this server's own (allocated by
    /// [`prepare`]); the server runs as it, real, effective and saved, with no capability.
    #[serde(default)]
    pub uid: Option<u32>,
}

/// A command that cannot be run because there is no such program: not a sandbox matter.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum CommandNotFound {
    /// A name (no `/`) that is no executable file in any directory of `PATH`.
    #[error("command not found: {command} (not on PATH: {path})")]
    NotOnPath {
        /// The command as written.
        command: String,
        /// The `PATH` searched, as it was (`unset` when there was none).
        path: String,
    },
    /// A path (with a `/`) that is no executable file.
    #[error("command not found: {command} (no such executable file)")]
    NoSuchFile {
        /// The command as written.
        command: String,
    },
}

/// `command` as an absolute path — as given when it names a path (relative to the working
/// directory), else the first executable file of that name in a directory of `path` — or why
/// there is none, naming the `PATH` searched.
pub fn find_command(command: &str, path: Option<&OsStr>) -> Result<PathBuf, CommandNotFound> {
    find_program(command, path).ok_or_else(|| {
        if command.contains('/') || command.is_empty() {
            CommandNotFound::NoSuchFile {
                command: command.to_owned(),
            }
        } else {
            CommandNotFound::NotOnPath {
                command: command.to_owned(),
                path: path.map_or_else(|| "unset".to_owned(), |p| p.to_string_lossy().into_owned()),
            }
        }
    })
}

/// Why a plan cannot be made.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PlanError {
    /// The command is not an executable file, or not on `PATH`: no program to confine.
    #[error(transparent)]
    NotFound(CommandNotFound),
    /// A path of the policy is inside Maven's data directory.
    #[error("sandbox: {0} is inside Maven's data directory, which no server may reach")]
    InsideData(PathBuf),
    /// A path of the policy is not absolute.
    #[error("sandbox: {0} is not an absolute path")]
    Relative(PathBuf),
    /// A granted path (`read`, `write`, a file named in the arguments) is a link or passes
    /// through one, or cannot be opened: the owner's words, naming it and what it points to.
    #[error("sandbox: {0}")]
    Grant(String),
}

impl Plan {
    /// Resolves `policy` for the server `name` running `command args…`: finds the program on
    /// `PATH`, adds the directory that holds it and, for a script, its interpreter's, both as
    /// named and with symbolic links resolved. For a program in a `bin` directory its
    /// installation prefix is readable, unless the prefix holds one of the owner's
    /// [`CREDENTIALS`] (or is the home itself): then only `bin` and the prefix's library
    /// directories are. An existing file named by an absolute path in `args` is readable.
    /// Reads at most the first bytes of the program and its interpreter.
    pub fn resolve(
        name: &str,
        policy: &Policy,
        command: &str,
        args: &[String],
        ctx: &Context<'_>,
    ) -> Result<Plan, PlanError> {
        let data = normal(ctx.data_dir);
        for p in policy.read.iter().chain(&policy.write) {
            if !p.is_absolute() {
                return Err(PlanError::Relative(p.clone()));
            }
            let n = normal(p);
            if n.starts_with(&data) {
                return Err(PlanError::InsideData(p.clone()));
            }
        }
        let program = find_command(command, ctx.path).map_err(PlanError::NotFound)?;
        if normal(&program).starts_with(&data) {
            return Err(PlanError::InsideData(program));
        }
        let home_dir = ctx
            .owner_home
            .as_deref()
            .filter(|h| h.is_absolute() && h.parent().is_some());
        // No grant of the owner's follows a link (one a server planted where it may write
        // turns a grant into another place): a link on the way refuses the plan, naming it; a
        // path that does not exist is left out, and the trust line says so.
        let refuse = |r: nolink::Refusal| PlanError::Grant(r.words(home_dir));
        let mut absent: Vec<PathBuf> = Vec::new();
        for p in policy.read.iter().chain(&policy.write) {
            if !nolink::check(&normal(p)).map_err(refuse)? {
                push_unique(&mut absent, p.clone());
            }
        }
        let mut read: Vec<PathBuf> = SYSTEM_READ.iter().map(PathBuf::from).collect();
        let mut shown_read: Vec<Grant> = Vec::new();
        let mut add = |read: &mut Vec<PathBuf>, g: Grant| {
            if normal(&g.path).starts_with(&data) {
                return;
            }
            // A directory the program implies is granted only as a path without links (the
            // same directory with its links resolved is granted too).
            if !system(&g.path) && !matches!(nolink::check(&g.path), Ok(true)) {
                return;
            }
            // Each path is named once in the trust line, with the first reason it has.
            if !system(&g.path) && !shown_read.iter().any(|s| s.path == g.path) {
                shown_read.push(g.clone());
            }
            push_unique(read, g.path);
        };
        let mut seen = program.clone();
        let mut first = true;
        for _ in 0..4 {
            let (own, libs) = if first {
                (Why::Program, Why::Libraries)
            } else {
                (Why::Interpreter, Why::InterpreterLibraries)
            };
            for (d, lib) in program_dirs(&seen, home_dir) {
                add(&mut read, Grant::new(d, if lib { libs } else { own }));
            }
            first = false;
            match interpreter(&seen, ctx.path) {
                Some(next) if next != seen => seen = next,
                _ => break,
            }
        }
        // What npm installed beside it: the outermost `node_modules` above its program or a
        // script named in its arguments, whence that program imports its dependencies.
        let scripts = args
            .iter()
            .map(Path::new)
            .filter(|p| p.is_absolute() && std::fs::metadata(p).is_ok_and(|m| m.is_file()));
        for p in std::iter::once(program.as_path()).chain(scripts) {
            for d in packages(p, home_dir) {
                add(&mut read, Grant::new(d, Why::Packages));
            }
        }
        for a in args {
            let p = normal(Path::new(a));
            // A file named in the arguments is readable as itself, never through a link.
            if p.is_absolute()
                && !system(&p)
                && nolink::check(&p).map_err(refuse)?
                && std::fs::metadata(&p).is_ok_and(|m| m.is_file())
            {
                add(&mut read, Grant::new(p, Why::Argument));
            }
        }
        for p in policy.read.iter().filter(|p| !absent.contains(p)) {
            add(&mut read, Grant::new(p.clone(), Why::Granted));
        }
        // Named in the trust line, never bound.
        for p in policy.read.iter().filter(|p| absent.contains(p)) {
            shown_read.push(Grant::new(p.clone(), Why::Granted));
        }
        let home = private_dir(ctx.data_dir, name);
        let mut write = vec![home.clone()];
        for p in policy.write.iter().filter(|p| !absent.contains(p)) {
            push_unique(&mut write, p.clone());
        }
        Ok(Plan {
            server: name.to_owned(),
            program,
            read,
            write,
            devices: DEVICES.iter().map(PathBuf::from).collect(),
            tmp: home.join("tmp"),
            home,
            hide: {
                let mut h: Vec<PathBuf> = HIDDEN.iter().map(PathBuf::from).collect();
                if let Some(home) = home_dir {
                    // Never `/` itself: that would hide the system.
                    push_unique(&mut h, home.to_path_buf());
                }
                push_unique(&mut h, ctx.data_dir.to_path_buf());
                h
            },
            network: policy.network.clone(),
            door: None,
            deny_ports: if policy.network == Network::Direct {
                ctx.deny_ports.clone()
            } else {
                Vec::new()
            },
            memory: policy.memory,
            processes: policy.processes,
            disk: policy.disk,
            shown_read,
            owner_write: policy.write.clone(),
            owner_home: home_dir.map(Path::to_path_buf),
            absent,
            uid: None,
        })
    }

    /// The trust line (see [`Policy::trust`]).
    pub fn trust(&self) -> String {
        trust_line(
            &self.shown_read,
            &self.owner_write,
            &self.absent,
            &self.network,
            self.owner_home.as_deref(),
            self.owner_home.as_deref(),
        )
    }

    /// What to tell the owner when a server's last words (`stderr`) name a path this plan
    /// denies: a refusal (`Permission denied`, `EACCES`) of a path outside every grant, or a
    /// missing file inside a hidden directory. "the sandbox denied /x/y: add it to
    /// sandbox.read (or sandbox.write if it must write there)". A package Node cannot find
    /// (`ERR_MODULE_NOT_FOUND`, `Cannot find package 'P' imported from /x/y.js`, `Cannot find
    /// module 'P'` and its require stack) or a module Python cannot (`ModuleNotFoundError: No
    /// module named 'm'`) that is installed where the plan grants nothing names that place:
    /// "the sandbox denied /p/node_modules, where the package P is installed: add
    /// /p/node_modules to sandbox.read". No hint ever names a path that covers the owner's
    /// [`CREDENTIALS`].
    pub fn denial_hint(&self, stderr: &str) -> Option<String> {
        const DENIED: &[&str] = &["permission denied", "eacces", "operation not permitted"];
        const MISSING: &[&str] = &[
            "no such file or directory",
            "enoent",
            "not found",
            "cannot find module",
        ];
        if let Some(h) = self.import_hint(stderr) {
            return Some(h);
        }
        for line in stderr.lines().rev() {
            let lower = line.to_ascii_lowercase();
            let denied = DENIED.iter().any(|d| lower.contains(d));
            let missing = MISSING.iter().any(|d| lower.contains(d));
            if !denied && !missing {
                continue;
            }
            for word in line.split(|c: char| c.is_whitespace() || "'\"`,;()[]<>".contains(c)) {
                let word = word.trim_end_matches([':', '.']);
                let p = Path::new(word);
                if !p.is_absolute() || word.len() < 2 || p.starts_with(&self.home) {
                    continue;
                }
                let granted = self
                    .read
                    .iter()
                    .chain(&self.write)
                    .any(|g| p.starts_with(g));
                let hidden = self.hide.iter().any(|h| p.starts_with(h));
                if self.credential(p) {
                    continue;
                }
                if (denied && !granted) || (missing && hidden && !granted) {
                    return Some(format!(
                        "the sandbox denied {word}: add it to sandbox.read (or sandbox.write if it must write there)"
                    ));
                }
            }
        }
        None
    }

    /// Whether `p` is granted (read or write) by this plan.
    fn granted(&self, p: &Path) -> bool {
        self.read
            .iter()
            .chain(&self.write)
            .any(|g| p.starts_with(g))
    }

    /// Whether `p` is one of the owner's [`CREDENTIALS`], inside one, or covers one.
    fn credential(&self, p: &Path) -> bool {
        let home = self.owner_home.as_deref();
        holds_credentials(p, home)
            || home.is_some_and(|h| CREDENTIALS.iter().any(|c| p.starts_with(h.join(c))))
    }

    /// The hint of [`Plan::denial_hint`] for a package or module the server could not import
    /// because the plan grants nothing where it is installed.
    fn import_hint(&self, stderr: &str) -> Option<String> {
        let lines: Vec<&str> = stderr.lines().collect();
        for (i, line) in lines.iter().enumerate().rev() {
            let found = if let Some((pkg, from)) = node_missing(line, &lines[i + 1..]) {
                self.node_place(pkg, from)
                    .map(|d| (d, format!("the package {pkg}")))
            } else if let Some(m) = python_missing(line) {
                self.python_place(m).map(|d| (d, format!("the module {m}")))
            } else {
                None
            };
            if let Some((dir, what)) = found {
                let dir = dir.display();
                return Some(format!(
                    "the sandbox denied {dir}, where {what} is installed: add {dir} to sandbox.read"
                ));
            }
        }
        None
    }

    /// Where Node finds `pkg` imported from `from`: the first `node_modules` above it that
    /// holds it (Node's own order), as its outermost `node_modules` — when the plan grants
    /// nothing there.
    fn node_place(&self, pkg: &str, from: &str) -> Option<PathBuf> {
        let from = normal(Path::new(from.strip_prefix("file://").unwrap_or(from)));
        if !from.is_absolute() {
            return None;
        }
        let target = from
            .ancestors()
            .skip(1)
            .filter(|a| a.file_name() != Some(OsStr::new("node_modules")))
            .map(|a| a.join("node_modules").join(pkg))
            .find(|t| t.exists())?;
        let dir = outermost_node_modules(&target)?;
        (!self.granted(&target) && !self.credential(&dir)).then_some(dir)
    }

    /// Where Python would find module `m` were it granted: the owner's user site-packages
    /// (`~/.local/lib/pythonX.Y/site-packages`), or a directory an installed `.pth` file (an
    /// editable install) adds to the path — when the plan grants nothing there.
    fn python_place(&self, m: &str) -> Option<PathBuf> {
        let mut places: Vec<PathBuf> = Vec::new();
        if let Some(home) = self.owner_home.as_deref() {
            places.extend(site_packages(&home.join(".local/lib")));
        }
        for g in &self.shown_read {
            if matches!(g.why, Why::Granted | Why::Argument) {
                continue;
            }
            let mut sites = site_packages(&g.path.join("lib"));
            sites.extend(site_packages(&g.path));
            for site in sites {
                places.extend(pth_dirs(&site));
            }
        }
        places
            .into_iter()
            .find(|d| holds_module(d, m) && !self.granted(&d.join(m)) && !self.credential(d))
    }

    /// The launcher's arguments that run `command args…` inside this plan:
    /// `__sandbox-exec PLAN -- command args…`.
    pub fn launcher_args(&self, command: &str, args: &[String]) -> Vec<String> {
        // A plan is paths, numbers and strings: it always serialises.
        let plan = serde_json::to_string(self).unwrap_or_default();
        let mut v = Vec::with_capacity(args.len() + 4);
        v.push(LAUNCHER_ARG.to_owned());
        v.push(plan);
        v.push("--".to_owned());
        v.push(command.to_owned());
        v.extend(args.iter().cloned());
        v
    }
}

/// The private directory of server `name`: `DATA/sandbox/<name>`.
pub fn private_dir(data_dir: &Path, name: &str) -> PathBuf {
    data_dir.join("sandbox").join(name)
}

/// Creates the plan's private directory and its `tmp` (mode 0700), as the daemon does before
/// starting the server. The server writes inside its private directory, so nothing in it is
/// followed: each level is created and opened relative to its parent without following a
/// symbolic link, and its mode set on the opened descriptor. A link found there (planted by an
/// earlier run) is refused with a message naming it; the server is not started until the owner
/// removes it. For a daemon running as root, it also gives the server a uid and gid of its own
/// (`plan.uid`) and the private directory to it.
pub fn prepare(plan: &mut Plan) -> std::io::Result<()> {
    use rustix::fs::{Mode, OFlags};
    let parent = plan
        .home
        .parent()
        .ok_or_else(|| std::io::Error::other(format!("{} has no parent", plan.home.display())))?;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(parent)?;
    let flags = OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::RDONLY;
    let mut dir = rustix::fs::open(parent, flags, Mode::empty())
        .map_err(|e| std::io::Error::other(format!("{}: {e}", parent.display())))?;
    let mut path = parent.to_path_buf();
    let home_name = plan.home.file_name().map(PathBuf::from);
    let tmp_rel = plan
        .tmp
        .strip_prefix(&plan.home)
        .ok()
        .map(Path::to_path_buf);
    let (Some(home_name), Some(tmp_rel)) = (home_name, tmp_rel) else {
        return Err(std::io::Error::other(format!(
            "{} is not inside {}",
            plan.tmp.display(),
            plan.home.display()
        )));
    };
    for name in std::iter::once(home_name.as_path()).chain(tmp_rel.iter().map(Path::new)) {
        path.push(name);
        match rustix::fs::mkdirat(&dir, name, Mode::from_raw_mode(0o700)) {
            Ok(()) | Err(rustix::io::Errno::EXIST) => {}
            Err(e) => return Err(std::io::Error::other(format!("{}: {e}", path.display()))),
        }
        dir = rustix::fs::openat(&dir, name, flags, Mode::empty()).map_err(|e| {
            if matches!(e, rustix::io::Errno::LOOP | rustix::io::Errno::NOTDIR) {
                std::io::Error::other(format!(
                    "{} is not a directory but a link or a file (left by an earlier run of the server?); remove it to start the server",
                    path.display()
                ))
            } else {
                std::io::Error::other(format!("{}: {e}", path.display()))
            }
        })?;
        rustix::fs::fchmod(&dir, Mode::from_raw_mode(0o700))
            .map_err(|e| std::io::Error::other(format!("{}: {e}", path.display())))?;
    }
    // A root daemon's server runs as a uid of its own, which owns its private directory.
    if rustix::process::geteuid().is_root() {
        plan.uid = Some(crate::ids::allocate(&plan.home)?);
    }
    Ok(())
}

fn push_unique(v: &mut Vec<PathBuf>, p: PathBuf) {
    if !v.contains(&p) {
        v.push(p);
    }
}

fn is_executable(p: &Path) -> bool {
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// `command` as an absolute path: as given when it names a path, else the first executable
/// of that name on `path`.
fn find_program(command: &str, path: Option<&OsStr>) -> Option<PathBuf> {
    if command.is_empty() {
        return None;
    }
    if command.contains('/') {
        let p = Path::new(command);
        let abs = if p.is_absolute() {
            p.to_path_buf()
        } else {
            std::env::current_dir().ok()?.join(p)
        };
        return is_executable(&abs).then(|| normal(&abs));
    }
    std::env::split_paths(path?)
        .filter(|d| d.is_absolute())
        .map(|d| d.join(command))
        .find(|p| is_executable(p))
}

/// Whether `p` is one of the system's directories (or below one), readable by every sandbox.
pub(crate) fn system(p: &Path) -> bool {
    SYSTEM_READ.iter().any(|s| p.starts_with(s))
}

/// Whether granting `dir` would let a server read the owner's credentials: it is the home,
/// above it, or holds one of [`CREDENTIALS`].
fn holds_credentials(dir: &Path, home: Option<&Path>) -> bool {
    let Some(home) = home else {
        return false;
    };
    let dir = normal(dir);
    home.starts_with(&dir) || CREDENTIALS.iter().any(|c| home.join(c).starts_with(&dir))
}

/// The directories a program needs, each with whether it is a library directory: the one that
/// holds it, or its installation prefix when that is a `bin` directory — narrowed to `bin` and
/// the prefix's `lib`, `lib64` and `libexec` when the prefix holds credentials; the program
/// file alone when even its directory does. The same again for the program with its links
/// resolved.
fn program_dirs(program: &Path, home: Option<&Path>) -> Vec<(PathBuf, bool)> {
    let mut out: Vec<(PathBuf, bool)> = Vec::new();
    let mut push = |p: PathBuf, lib: bool| {
        if !out.iter().any(|(q, _)| *q == p) {
            out.push((p, lib));
        }
    };
    let real = std::fs::canonicalize(program).ok();
    for p in std::iter::once(program.to_path_buf()).chain(real) {
        let Some(dir) = p.parent() else { continue };
        if holds_credentials(dir, home) {
            push(p.clone(), false);
            continue;
        }
        match (dir.file_name(), dir.parent()) {
            (Some(n), Some(prefix)) if n == "bin" && prefix != Path::new("/") => {
                if !holds_credentials(prefix, home) {
                    push(prefix.to_path_buf(), false);
                    continue;
                }
                push(dir.to_path_buf(), false);
                for lib in ["lib", "lib64", "libexec"] {
                    let l = prefix.join(lib);
                    if l.is_dir() && !holds_credentials(&l, home) {
                        push(l, true);
                    }
                }
            }
            _ => push(dir.to_path_buf(), false),
        }
    }
    out
}

/// The outermost `node_modules` directory above `p`, as named and with links resolved: what a
/// program installed by npm (`PREFIX/node_modules/.bin/NAME`, a link to
/// `PREFIX/node_modules/PACKAGE/…`) imports its dependencies from. None that would cover the
/// owner's credentials.
fn packages(p: &Path, home: Option<&Path>) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    let real = std::fs::canonicalize(p).ok();
    for p in std::iter::once(normal(p)).chain(real) {
        if let Some(d) = outermost_node_modules(&p) {
            if !holds_credentials(&d, home) {
                push_unique(&mut out, d);
            }
        }
    }
    out
}

/// The outermost directory named `node_modules` among `p`'s ancestors (not `p` itself).
fn outermost_node_modules(p: &Path) -> Option<PathBuf> {
    p.ancestors()
        .skip(1)
        .filter(|a| a.file_name() == Some(OsStr::new("node_modules")))
        .last()
        .map(Path::to_path_buf)
}

/// Node's words for a package it cannot find, and the file that imports it: `Cannot find
/// package 'P' imported from /x/y.js` (ESM), or `Cannot find module 'P'` with ` imported from`
/// or the first line of the `Require stack` that follows (CommonJS). `P` is the package's name
/// (`@scope/name` or `name`, without a path inside it), and only a well-formed one.
fn node_missing<'a>(line: &'a str, after: &[&'a str]) -> Option<(&'a str, &'a str)> {
    let (_, rest) = line
        .split_once("Cannot find package '")
        .or_else(|| line.split_once("Cannot find module '"))?;
    let (spec, tail) = rest.split_once('\'')?;
    let from = match tail.split_once(" imported from ") {
        Some((_, f)) => f.trim(),
        None => after
            .iter()
            .take(4)
            .find_map(|l| l.trim().strip_prefix("- "))?
            .trim(),
    };
    let segments = if spec.starts_with('@') { 2 } else { 1 };
    let end = spec
        .match_indices('/')
        .nth(segments - 1)
        .map_or(spec.len(), |(i, _)| i);
    let pkg = &spec[..end];
    let well_formed = pkg.split('/').count() == segments
        && pkg.split('/').enumerate().all(|(i, s)| {
            let s = if i == 0 && segments == 2 {
                s.strip_prefix('@').unwrap_or("")
            } else {
                s
            };
            !s.is_empty()
                && !s.starts_with('.')
                && s.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-._~".contains(&b))
        });
    well_formed.then_some((pkg, from))
}

/// The top-level module Python's `ModuleNotFoundError: No module named 'a.b'` names (`a`),
/// when it is an identifier.
fn python_missing(line: &str) -> Option<&str> {
    let (_, rest) = line.split_once("ModuleNotFoundError: No module named '")?;
    let (name, _) = rest.split_once('\'')?;
    let top = name.split('.').next()?;
    let ok = !top.is_empty()
        && !top.starts_with(|c: char| c.is_ascii_digit())
        && top.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    ok.then_some(top)
}

/// The `pythonX.Y/site-packages` directories in `lib`.
fn site_packages(lib: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(lib) else {
        return Vec::new();
    };
    entries
        .flatten()
        .take(256)
        .filter(|e| e.file_name().to_string_lossy().starts_with("python"))
        .map(|e| e.path().join("site-packages"))
        .filter(|p| p.is_dir())
        .collect()
}

/// The absolute directories the `.pth` files of `site` add to Python's path (an editable
/// install's source), each file read up to 16 KiB.
fn pth_dirs(site: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(site) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for e in entries.flatten().take(4096) {
        let p = e.path();
        if p.extension() != Some(OsStr::new("pth")) {
            continue;
        }
        let mut text = String::new();
        let read =
            std::fs::File::open(&p).and_then(|f| f.take(16 * 1024).read_to_string(&mut text));
        if read.is_err() {
            continue;
        }
        for l in text.lines().map(str::trim) {
            if l.starts_with('/') {
                push_unique(&mut out, normal(Path::new(l)));
            }
        }
    }
    out
}

/// Whether directory `d` holds Python module `m`: a package, a `.py` file or an extension.
fn holds_module(d: &Path, m: &str) -> bool {
    if d.join(m).is_dir() || d.join(format!("{m}.py")).is_file() {
        return true;
    }
    let Ok(entries) = std::fs::read_dir(d) else {
        return false;
    };
    let prefix = format!("{m}.");
    entries.flatten().take(4096).any(|e| {
        let n = e.file_name();
        let n = n.to_string_lossy();
        n.starts_with(&prefix) && n.ends_with(".so")
    })
}

/// The interpreter a script names on its `#!` line (through `env`, looked up on `path`).
fn interpreter(program: &Path, path: Option<&OsStr>) -> Option<PathBuf> {
    let mut head = [0u8; 256];
    let n = std::fs::File::open(program).ok()?.read(&mut head).ok()?;
    let line = head[..n].strip_prefix(b"#!")?;
    let line = &line[..line.iter().position(|&b| b == b'\n').unwrap_or(line.len())];
    let line = std::str::from_utf8(line).ok()?;
    let mut words = line.split_whitespace();
    let first = words.next()?;
    if Path::new(first).file_name() == Some(OsStr::new("env")) {
        let name = words.find(|w| !w.starts_with('-') && !w.contains('='))?;
        find_program(name, path)
    } else {
        Some(PathBuf::from(first))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_script_brings_its_interpreter_and_prefix() {
        let t = tempfile::tempdir().unwrap();
        let notes = t.path().join("notes");
        std::fs::create_dir_all(notes.join("out")).unwrap();
        let bin = t.path().join("prefix/bin");
        std::fs::create_dir_all(&bin).unwrap();
        let interp = bin.join("interp");
        std::fs::write(&interp, "").unwrap();
        std::fs::set_permissions(&interp, std::fs::Permissions::from_mode(0o755)).unwrap();
        let tools = t.path().join("tools");
        std::fs::create_dir_all(&tools).unwrap();
        let script = tools.join("srv");
        std::fs::write(&script, "#!/usr/bin/env -S interp --flag\n").unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        let data = t.path().join("data");
        let path = std::env::join_paths([&tools, &bin]).unwrap();
        let ctx = Context {
            data_dir: &data,
            path: Some(&path),
            deny_ports: vec![8765],
            owner_home: Some("/home/me".into()),
        };
        let policy = Policy {
            read: vec![notes.clone()],
            write: vec![notes.join("out"), notes.join("later")],
            network: crate::Network::None,
            ..Policy::default()
        };
        let plan = Plan::resolve("notes", &policy, "srv", &[], &ctx).unwrap();
        assert_eq!(plan.program, script);
        assert!(plan.read.contains(&tools));
        assert!(
            plan.read.contains(&t.path().join("prefix")),
            "{:?}",
            plan.read
        );
        assert!(plan.read.contains(&notes));
        // A granted path that does not exist is left out, not bound, and said so.
        assert!(!plan.write.contains(&notes.join("later")));
        assert_eq!(plan.absent, [notes.join("later")]);
        assert_eq!(plan.write[0], data.join("sandbox/notes"));
        assert_eq!(plan.home, data.join("sandbox/notes"));
        assert_eq!(plan.tmp, data.join("sandbox/notes/tmp"));
        assert_eq!(
            plan.hide,
            ["/tmp", "/var/tmp", "/run", "/dev/shm", "/home/me"]
                .iter()
                .map(PathBuf::from)
                .chain([data.clone()])
                .collect::<Vec<_>>()
        );
        assert!(
            plan.deny_ports.is_empty(),
            "no network: no port list needed"
        );
        assert_eq!(
            plan.trust(),
            format!(
                "sandboxed local process: reads {} (its program), {} (its interpreter), {n} (granted), writes {n}/out (granted), {n}/later (granted, absent: left out), no network, memory bounded per process",
                tools.display(),
                t.path().join("prefix").display(),
                n = notes.display()
            )
        );
        let args = plan.launcher_args("srv", &["a".into()]);
        assert_eq!(args[0], LAUNCHER_ARG);
        assert_eq!(serde_json::from_str::<Plan>(&args[1]).unwrap(), plan);
        assert_eq!(&args[2..], ["--", "srv", "a"]);
    }

    /// Makes an executable file at `p` (and its directories).
    /// The plan of `program` (no arguments) under the default policy.
    fn default_plan(program: &Path, ctx: &Context<'_>) -> Plan {
        Plan::resolve(
            "s",
            &Policy::default(),
            &program.display().to_string(),
            &[],
            ctx,
        )
        .unwrap()
    }

    fn program_at(p: &Path) {
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, "").unwrap();
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    #[test]
    fn no_implicit_grant_covers_the_owners_credentials() {
        let t = tempfile::tempdir().unwrap();
        let home = t.path().join("home/me");
        for c in CREDENTIALS {
            let p = home.join(c);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, "secret").unwrap();
        }
        std::fs::create_dir_all(home.join(".local/lib/python3.11")).unwrap();
        let data = t.path().join("data");
        let ctx = Context {
            data_dir: &data,
            path: None,
            deny_ports: vec![],
            owner_home: Some(home.clone()),
        };
        let cases = [
            (".cargo/bin/srv", vec![".cargo/bin"]),
            (".local/bin/srv", vec![".local/bin", ".local/lib"]),
            ("bin/srv", vec!["bin"]),
            (
                ".pyenv/versions/3.11.7/bin/srv",
                vec![".pyenv/versions/3.11.7"],
            ),
            (
                ".nvm/versions/node/v22.1.0/bin/srv",
                vec![".nvm/versions/node/v22.1.0"],
            ),
            ("srv", vec!["srv"]),
        ];
        for (program, want) in cases {
            let program = home.join(program);
            program_at(&program);
            let plan = default_plan(&program, &ctx);
            let granted: Vec<&PathBuf> =
                plan.read.iter().filter(|p| p.starts_with(&home)).collect();
            let want: Vec<PathBuf> = want.iter().map(|w| home.join(w)).collect();
            assert_eq!(
                granted,
                want.iter().collect::<Vec<_>>(),
                "{}",
                program.display()
            );
            for c in CREDENTIALS {
                let c = home.join(c);
                assert!(
                    !plan
                        .read
                        .iter()
                        .chain(&plan.write)
                        .any(|g| c.starts_with(g)),
                    "{} reaches {}",
                    program.display(),
                    c.display()
                );
            }
        }
        // The trust line names each, in the owner's words.
        let plan = default_plan(&home.join(".local/bin/srv"), &ctx);
        assert_eq!(
            plan.trust(),
            "sandboxed local process: reads ~/.local/bin (its program), ~/.local/lib (its program's libraries), writes only its own directory, network through Maven: public addresses only, memory bounded per process"
        );
    }

    #[test]
    fn a_file_named_in_the_arguments_is_readable_and_listed() {
        let t = tempfile::tempdir().unwrap();
        let script = t.path().join("srv/server.py");
        program_at(&script);
        let data = t.path().join("data");
        let ctx = Context {
            data_dir: &data,
            path: None,
            deny_ports: vec![],
            owner_home: None,
        };
        let args = [
            script.display().to_string(),
            "--flag".to_owned(),
            t.path().join("missing.txt").display().to_string(),
            t.path().display().to_string(),
        ];
        let plan = Plan::resolve("s", &Policy::default(), "/bin/sh", &args, &ctx).unwrap();
        assert!(plan.read.contains(&script));
        // Neither a file that does not exist nor a directory is read implicitly.
        assert!(!plan.read.contains(&t.path().join("missing.txt")));
        assert!(!plan.read.contains(&t.path().to_path_buf()));
        assert_eq!(
            plan.trust(),
            format!(
                "sandboxed local process: reads {} (named in its arguments), writes only its own directory, network through Maven: public addresses only, memory bounded per process",
                script.display()
            )
        );
        // Granted as well (what `maven mcp import` writes for a server's own script): named
        // once, with the first reason.
        let policy = Policy {
            read: vec![script.clone()],
            ..Policy::default()
        };
        let plan = Plan::resolve("s", &policy, "/bin/sh", &args, &ctx).unwrap();
        assert_eq!(
            plan.trust(),
            format!(
                "sandboxed local process: reads {} (named in its arguments), writes only its own directory, network through Maven: public addresses only, memory bounded per process",
                script.display()
            )
        );
    }

    #[test]
    fn a_denied_path_in_the_last_words_names_the_key_to_add() {
        let t = tempfile::tempdir().unwrap();
        let data = t.path().join("data");
        let ctx = Context {
            data_dir: &data,
            path: None,
            deny_ports: vec![],
            owner_home: Some("/home/me".into()),
        };
        let policy = Policy {
            read: vec!["/var".into()],
            ..Policy::default()
        };
        let plan = Plan::resolve("s", &policy, "/bin/sh", &[], &ctx).unwrap();
        let hint = |s: &str| plan.denial_hint(s);
        assert_eq!(
            hint("Error: EACCES: permission denied, open '/srv/other/db.sqlite'").as_deref(),
            Some("the sandbox denied /srv/other/db.sqlite: add it to sandbox.read (or sandbox.write if it must write there)")
        );
        assert_eq!(
            hint("FileNotFoundError: [Errno 2] No such file or directory: '/home/me/notes.md'").as_deref(),
            Some("the sandbox denied /home/me/notes.md: add it to sandbox.read (or sandbox.write if it must write there)")
        );
        // Granted, or simply missing outside any hidden directory: not the sandbox's doing.
        assert_eq!(
            hint("PermissionError: [Errno 13] Permission denied: '/var/notes/a'"),
            None
        );
        assert_eq!(hint("No such file or directory: '/srv/gone'"), None);
        assert_eq!(hint("listening on stdio"), None);
    }

    /// Makes a link at `link` to `to` (and `link`'s directories).
    fn link_at(link: &Path, to: &str) {
        std::fs::create_dir_all(link.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(to, link).unwrap();
    }

    #[test]
    fn a_program_installed_by_npm_reads_its_packages() {
        let t = tempfile::tempdir().unwrap();
        let data = t.path().join("data");
        let ctx = Context {
            data_dir: &data,
            path: None,
            deny_ports: vec![],
            owner_home: Some(t.path().join("home/me")),
        };
        // `npm install --prefix P @scope/srv`: P/node_modules/.bin/srv links to the package's
        // entry point, which imports P/node_modules/dep.
        let prefix = t.path().join("plain");
        let nm = prefix.join("node_modules");
        program_at(&nm.join("@scope/srv/dist/index.js"));
        std::fs::create_dir_all(nm.join("dep")).unwrap();
        link_at(&nm.join(".bin/srv"), "../@scope/srv/dist/index.js");
        let bin = nm.join(".bin/srv").display().to_string();
        let plan = Plan::resolve("s", &Policy::default(), &bin, &[], &ctx).unwrap();
        assert!(plan.read.contains(&nm), "{:?}", plan.read);
        assert!(
            !plan.read.contains(&prefix),
            "only node_modules: {:?}",
            plan.read
        );
        assert!(
            plan.trust()
                .contains(&format!("{} (its packages)", nm.display())),
            "{}",
            plan.trust()
        );
        // A package's own node_modules inside another: the outermost one.
        let nested = nm.join("@scope/srv/node_modules/inner/bin.js");
        program_at(&nested);
        let plan = default_plan(&nested, &ctx);
        assert!(plan.read.contains(&nm), "{:?}", plan.read);
        // A script named in the arguments (`node P/node_modules/pkg/index.js`).
        let other = t.path().join("other/node_modules/pkg/index.js");
        program_at(&other);
        let args = [other.display().to_string()];
        let plan = Plan::resolve("s", &Policy::default(), "/bin/sh", &args, &ctx).unwrap();
        assert!(
            plan.read.contains(&t.path().join("other/node_modules")),
            "{:?}",
            plan.read
        );
        // Neither a missing file in the arguments nor a program elsewhere brings one.
        let args = [t
            .path()
            .join("x/node_modules/none.js")
            .display()
            .to_string()];
        let plan = Plan::resolve("s", &Policy::default(), "/bin/sh", &args, &ctx).unwrap();
        assert!(!plan.read.iter().any(|p| p.ends_with("node_modules")));
        assert!(!plan.trust().contains("its packages"), "{}", plan.trust());
    }

    #[test]
    fn no_node_modules_grant_covers_the_owners_credentials() {
        let t = tempfile::tempdir().unwrap();
        // A home inside a node_modules tree: granting that tree would grant the home.
        let nm = t.path().join("node_modules");
        let home = nm.join("me");
        std::fs::create_dir_all(home.join(".ssh")).unwrap();
        let program = nm.join("pkg/cli.js");
        program_at(&program);
        let data = t.path().join("data");
        let ctx = Context {
            data_dir: &data,
            path: None,
            deny_ports: vec![],
            owner_home: Some(home.clone()),
        };
        let plan = default_plan(&program, &ctx);
        assert!(!plan.read.contains(&nm), "{:?}", plan.read);
        assert!(
            !plan.read.iter().any(|g| home.starts_with(g)),
            "{:?}",
            plan.read
        );
    }

    #[test]
    fn python_environments_are_readable_through_their_bin() {
        let t = tempfile::tempdir().unwrap();
        let home = t.path().join("home/me");
        std::fs::create_dir_all(home.join(".ssh")).unwrap();
        std::fs::create_dir_all(home.join(".local/share/fish")).unwrap();
        let data = t.path().join("data");
        let ctx = Context {
            data_dir: &data,
            path: None,
            deny_ports: vec![],
            owner_home: Some(home.clone()),
        };
        let venv = |dir: &Path| {
            program_at(&dir.join("bin/srv"));
            std::fs::write(dir.join("pyvenv.cfg"), "home = /usr/bin\n").unwrap();
            std::fs::create_dir_all(dir.join("lib/python3.12/site-packages/srv")).unwrap();
        };
        // A project's venv, pipx's and `uv tool`'s (whose program in ~/.local/bin is a link
        // into the environment).
        let project = home.join("src/srv/.venv");
        venv(&project);
        let pipx = home.join(".local/share/pipx/venvs/srv");
        venv(&pipx);
        link_at(
            &home.join(".local/bin/pipx-srv"),
            &pipx.join("bin/srv").display().to_string(),
        );
        let uv = home.join(".local/share/uv/tools/srv");
        venv(&uv);
        link_at(
            &home.join(".local/bin/uv-srv"),
            &uv.join("bin/srv").display().to_string(),
        );
        for (command, env) in [
            (project.join("bin/srv"), &project),
            (home.join(".local/bin/pipx-srv"), &pipx),
            (home.join(".local/bin/uv-srv"), &uv),
        ] {
            let plan = default_plan(&command, &ctx);
            // The whole environment: pyvenv.cfg and site-packages with it.
            assert!(
                plan.read.contains(env),
                "{}: {:?}",
                command.display(),
                plan.read
            );
            assert!(!plan.read.iter().any(|g| home.join(".ssh").starts_with(g)));
        }
    }

    #[test]
    fn a_package_the_sandbox_hides_names_where_it_is_installed() {
        let t = tempfile::tempdir().unwrap();
        let home = t.path().join("home/me");
        let data = t.path().join("data");
        let ctx = Context {
            data_dir: &data,
            path: None,
            deny_ports: vec![],
            owner_home: Some(home.clone()),
        };
        // A server started as `node /srv/app/index.js` whose dependencies are in a
        // node_modules the plan does not grant (`/srv/app` is no node_modules tree).
        let app = t.path().join("app");
        program_at(&app.join("index.js"));
        std::fs::create_dir_all(app.join("node_modules/@modelcontextprotocol/sdk")).unwrap();
        std::fs::create_dir_all(app.join("node_modules/express")).unwrap();
        let plan = Plan::resolve("s", &Policy::default(), "/bin/sh", &[], &ctx).unwrap();
        let from = app.join("index.js").display().to_string();
        let nm = app.join("node_modules").display().to_string();
        let want = |what: &str| {
            Some(format!(
                "the sandbox denied {nm}, where the package {what} is installed: add {nm} to sandbox.read"
            ))
        };
        let esm = format!(
            "node:internal/modules/esm/resolve:873\n  throw new ERR_MODULE_NOT_FOUND(packageName, fileURLToPath(base), null);\n        ^\n\nError [ERR_MODULE_NOT_FOUND]: Cannot find package '@modelcontextprotocol/sdk' imported from {from}\n    at packageResolve (node:internal/modules/esm/resolve:873:9) {{\n  code: 'ERR_MODULE_NOT_FOUND'\n}}\n\nNode.js v22.23.3"
        );
        assert_eq!(plan.denial_hint(&esm), want("@modelcontextprotocol/sdk"));
        let deep = format!(
            "Error [ERR_MODULE_NOT_FOUND]: Cannot find package '@modelcontextprotocol/sdk/server/mcp.js' imported from file://{from}"
        );
        assert_eq!(plan.denial_hint(&deep), want("@modelcontextprotocol/sdk"));
        let cjs = format!(
            "node:internal/modules/cjs/loader:1228\n  throw err;\n  ^\n\nError: Cannot find module 'express'\nRequire stack:\n- {from}\n    at Module._resolveFilename (node:internal/modules/cjs/loader:1225:15) {{\n  code: 'MODULE_NOT_FOUND',\n  requireStack: [ '{from}' ]\n}}"
        );
        assert_eq!(plan.denial_hint(&cjs), want("express"));
        // Granted: a package that is not installed is not the sandbox's doing.
        let granted = Policy {
            read: vec![app.join("node_modules")],
            ..Policy::default()
        };
        let plan2 = Plan::resolve("s", &granted, "/bin/sh", &[], &ctx).unwrap();
        assert_eq!(plan2.denial_hint(&esm), None);
        // Installed nowhere: no hint.
        assert_eq!(
            plan.denial_hint(&format!(
                "Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'left-pad' imported from {from}"
            )),
            None
        );
        // Hostile words: traversal, relative importers, garbage: no hint, no panic.
        for words in [
            format!("Cannot find package '../../etc' imported from {from}"),
            format!("Cannot find package '@x/../../y' imported from {from}"),
            format!("Cannot find package '@/x' imported from {from}"),
            format!("Cannot find package '.hidden' imported from {from}"),
            "Cannot find package 'express' imported from app/index.js".to_owned(),
            "Cannot find package 'express' imported from ".to_owned(),
            "Cannot find package '".to_owned(),
            "Cannot find module 'express'\nRequire stack:\n-".to_owned(),
            "ModuleNotFoundError: No module named '../x'".to_owned(),
            "ModuleNotFoundError: No module named ''".to_owned(),
            "ModuleNotFoundError: No module named '".to_owned(),
            "\u{0}'\u{7f}' imported from /\n- /".to_owned(),
        ] {
            assert_eq!(plan.denial_hint(&words), None, "{words}");
        }

        // Python: a module installed in the owner's user site-packages (`pip install --user`),
        // hidden with the home from a server run by the system's python3.
        let site = home.join(".local/lib/python3.12/site-packages");
        std::fs::create_dir_all(site.join("mcp")).unwrap();
        std::fs::write(site.join("yaml.py"), "").unwrap();
        let traceback = |m: &str| {
            format!(
                "Traceback (most recent call last):\n  File \"/srv/server.py\", line 1, in <module>\n    import {m}\nModuleNotFoundError: No module named '{m}'"
            )
        };
        let site_s = site.display().to_string();
        for (m, what) in [("mcp.server", "mcp"), ("mcp", "mcp"), ("yaml", "yaml")] {
            assert_eq!(
                plan.denial_hint(&traceback(m)),
                Some(format!(
                    "the sandbox denied {site_s}, where the module {what} is installed: add {site_s} to sandbox.read"
                ))
            );
        }
        assert_eq!(plan.denial_hint(&traceback("numpy")), None);
        // An editable install in a granted environment whose source is elsewhere.
        let venv = t.path().join("venv");
        program_at(&venv.join("bin/python"));
        let vsite = venv.join("lib/python3.12/site-packages");
        std::fs::create_dir_all(&vsite).unwrap();
        let src = t.path().join("src/tool");
        std::fs::create_dir_all(src.join("tool")).unwrap();
        std::fs::write(
            vsite.join("__editable__.tool-1.0.pth"),
            format!("{}\n", src.display()),
        )
        .unwrap();
        let plan = default_plan(&venv.join("bin/python"), &ctx);
        let src_s = src.display().to_string();
        assert_eq!(
            plan.denial_hint(&traceback("tool")),
            Some(format!(
                "the sandbox denied {src_s}, where the module tool is installed: add {src_s} to sandbox.read"
            ))
        );
    }

    #[test]
    fn no_hint_names_the_owners_credentials() {
        let t = tempfile::tempdir().unwrap();
        let data = t.path().join("data");
        let ctx = Context {
            data_dir: &data,
            path: None,
            deny_ports: vec![],
            owner_home: Some("/home/me".into()),
        };
        let plan = Plan::resolve("s", &Policy::default(), "/bin/sh", &[], &ctx).unwrap();
        for words in [
            "Error: EACCES: permission denied, open '/home/me/.ssh/id_ed25519'",
            "PermissionError: [Errno 13] Permission denied: '/home/me/.aws'",
            "No such file or directory: '/home/me/.netrc'",
            "Error: EACCES: permission denied, open '/home'",
        ] {
            assert_eq!(plan.denial_hint(words), None, "{words}");
        }
    }

    #[test]
    fn refusals_are_specific() {
        let t = tempfile::tempdir().unwrap();
        let data = t.path().join("data");
        let ctx = Context {
            data_dir: &data,
            path: Some(OsStr::new("/nonexistent")),
            deny_ports: vec![],
            owner_home: None,
        };
        let p = Policy::default();
        assert_eq!(
            Plan::resolve("a", &p, "no-such-server", &[], &ctx),
            Err(PlanError::NotFound(CommandNotFound::NotOnPath {
                command: "no-such-server".into(),
                path: "/nonexistent".into()
            }))
        );
        // Not the sandbox's business: the words say only that there is no such program.
        for (command, path, words) in [
            (
                "no-such-server",
                Some("/nonexistent:/usr/bin"),
                "command not found: no-such-server (not on PATH: /nonexistent:/usr/bin)",
            ),
            (
                "no-such-server",
                None,
                "command not found: no-such-server (not on PATH: unset)",
            ),
            (
                "/opt/none/srv",
                Some("/usr/bin"),
                "command not found: /opt/none/srv (no such executable file)",
            ),
            (
                "bin/none/srv",
                Some("/usr/bin"),
                "command not found: bin/none/srv (no such executable file)",
            ),
            (
                "",
                Some("/usr/bin"),
                "command not found:  (no such executable file)",
            ),
        ] {
            let e = Plan::resolve(
                "a",
                &p,
                command,
                &[],
                &Context {
                    path: path.map(OsStr::new),
                    ..ctx.clone()
                },
            )
            .unwrap_err()
            .to_string();
            assert_eq!(e, words);
            assert!(!e.contains("sandbox"), "{e}");
        }
        // A directory is no program.
        assert_eq!(
            find_command(&t.path().display().to_string(), None),
            Err(CommandNotFound::NoSuchFile {
                command: t.path().display().to_string()
            })
        );
        assert_eq!(
            find_command("sh", Some(OsStr::new("/bin"))),
            Ok("/bin/sh".into())
        );
        let inside = Policy {
            read: vec![data.join("x/../maven.db")],
            ..Policy::default()
        };
        assert_eq!(
            Plan::resolve("a", &inside, "/bin/sh", &[], &ctx),
            Err(PlanError::InsideData(data.join("x/../maven.db")))
        );
        let rel = Policy {
            write: vec!["notes".into()],
            ..Policy::default()
        };
        assert_eq!(
            Plan::resolve("a", &rel, "/bin/sh", &[], &ctx),
            Err(PlanError::Relative("notes".into()))
        );
        let plan = Plan::resolve("a", &p, "/bin/sh", &[], &ctx).unwrap();
        assert_eq!(
            plan.trust(),
            "sandboxed local process: reads none of your files, writes only its own directory, network through Maven: public addresses only, memory bounded per process"
        );
    }
}
