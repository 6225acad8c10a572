//! The policy a block asks for and the plan resolved from it (see the crate docs).

use std::ffi::OsStr;
use std::io::Read as _;
use std::os::unix::fs::{DirBuilderExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The hidden subcommand of the `maven` binary that runs the launcher.
pub const LAUNCHER_ARG: &str = "__sandbox-exec";
/// The hidden subcommand that starts an unsandboxed server in a PID namespace of its own.
pub const GROUP_ARG: &str = "__group-exec";
/// The hidden subcommand that is pid 1 of a server's PID namespace.
pub const INIT_ARG: &str = "__sandbox-init";

/// Default bound of the address space (`memory`): 8 GiB. JavaScript and WebAssembly engines
/// reserve far more address space than they use, so this bounds a runaway, not a working set.
pub const DEFAULT_MEMORY: u64 = 8 * 1024 * 1024 * 1024;
/// Default bound of processes and threads (`processes`) inside one sandbox: 256. The kernel
/// counts them per user namespace, so only the server's own tasks count.
pub const DEFAULT_PROCESSES: u64 = 256;
/// Smallest `memory` a block may set: 64 MiB (below it no interpreter starts).
pub const MIN_MEMORY: u64 = 64 * 1024 * 1024;
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
    /// Whether the server shares this machine's network (default true). False: a network
    /// namespace with nothing in it, and no TCP at all.
    pub network: bool,
    /// Bound of its address space, in bytes.
    pub memory: u64,
    /// Bound of its processes and threads.
    pub processes: u64,
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
        let mut line = trust_line(&read, &self.write, self.network, None);
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

/// `p` as the owner reads it: `~/…` below the owner's home.
fn shown(p: &Path, home: Option<&Path>) -> String {
    match home.and_then(|h| p.strip_prefix(h).ok()) {
        Some(rest) if rest.as_os_str().is_empty() => "~".to_owned(),
        Some(rest) => format!("~/{}", rest.display()),
        None => p.display().to_string(),
    }
}

fn trust_line(read: &[Grant], write: &[PathBuf], network: bool, home: Option<&Path>) -> String {
    let reads = if read.is_empty() {
        "reads none of your files".to_owned()
    } else {
        let mut list: Vec<String> = Vec::new();
        for g in read {
            let item = format!("{} ({})", shown(&g.path, home), g.why.words());
            if !list.contains(&item) {
                list.push(item);
            }
        }
        format!("reads {}", list.join(", "))
    };
    let writes = if write.is_empty() {
        "writes only its own directory".to_owned()
    } else {
        let list: Vec<String> = write.iter().map(|p| shown(p, home)).collect();
        format!("writes {} (granted)", list.join(", "))
    };
    let net = if network {
        "network (not Maven's page or socket)"
    } else {
        "no network"
    };
    format!("sandboxed local process: {reads}, {writes}, {net}, memory bounded per process")
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            read: Vec::new(),
            write: Vec::new(),
            network: true,
            memory: DEFAULT_MEMORY,
            processes: DEFAULT_PROCESSES,
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
    /// Whether the server shares this machine's network.
    pub network: bool,
    /// With network: TCP ports it may not connect to.
    pub deny_ports: Vec<u16>,
    /// Bound of its address space, in bytes.
    pub memory: u64,
    /// Bound of its processes and threads.
    pub processes: u64,
    /// Every readable path outside the system's directories, and why: the trust line.
    pub shown_read: Vec<Grant>,
    /// The owner's `write` list as written, for the trust line.
    pub owner_write: Vec<PathBuf>,
    /// The owner's home as the daemon knows it (`~` in the trust line).
    pub owner_home: Option<PathBuf>,
}

/// Why a plan cannot be made.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PlanError {
    /// The command is not an executable file, or not on `PATH`.
    #[error("sandbox: the command {0:?} is not an executable file on PATH")]
    NotFound(String),
    /// A path of the policy is inside Maven's data directory.
    #[error("sandbox: {0} is inside Maven's data directory, which no server may reach")]
    InsideData(PathBuf),
    /// A path of the policy is not absolute.
    #[error("sandbox: {0} is not an absolute path")]
    Relative(PathBuf),
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
        let program =
            find_program(command, ctx.path).ok_or_else(|| PlanError::NotFound(command.into()))?;
        if normal(&program).starts_with(&data) {
            return Err(PlanError::InsideData(program));
        }
        let home_dir = ctx
            .owner_home
            .as_deref()
            .filter(|h| h.is_absolute() && h.parent().is_some());
        let mut read: Vec<PathBuf> = SYSTEM_READ.iter().map(PathBuf::from).collect();
        let mut shown_read: Vec<Grant> = Vec::new();
        let mut add = |read: &mut Vec<PathBuf>, g: Grant| {
            if normal(&g.path).starts_with(&data) {
                return;
            }
            if !system(&g.path) && !shown_read.contains(&g) {
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
        for a in args {
            let p = Path::new(a);
            if p.is_absolute() && std::fs::metadata(p).is_ok_and(|m| m.is_file()) {
                add(&mut read, Grant::new(normal(p), Why::Argument));
            }
        }
        for p in &policy.read {
            add(&mut read, Grant::new(p.clone(), Why::Granted));
        }
        let home = private_dir(ctx.data_dir, name);
        let mut write = vec![home.clone()];
        for p in &policy.write {
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
            network: policy.network,
            deny_ports: if policy.network {
                ctx.deny_ports.clone()
            } else {
                Vec::new()
            },
            memory: policy.memory,
            processes: policy.processes,
            shown_read,
            owner_write: policy.write.clone(),
            owner_home: home_dir.map(Path::to_path_buf),
        })
    }

    /// The trust line (see [`Policy::trust`]).
    pub fn trust(&self) -> String {
        trust_line(
            &self.shown_read,
            &self.owner_write,
            self.network,
            self.owner_home.as_deref(),
        )
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
/// removes it.
pub fn prepare(plan: &Plan) -> std::io::Result<()> {
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
    Ok(())
}

fn push_unique(v: &mut Vec<PathBuf>, p: PathBuf) {
    if !v.contains(&p) {
        v.push(p);
    }
}

/// A path with `.` and `..` removed lexically (symbolic links are the launcher's business: it
/// opens every path it grants).
fn normal(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            c => out.push(c),
        }
    }
    out
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
fn system(p: &Path) -> bool {
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
            read: vec!["/srv/notes".into()],
            write: vec!["/srv/notes/out".into()],
            network: false,
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
        assert!(plan.read.contains(&PathBuf::from("/srv/notes")));
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
                "sandboxed local process: reads {} (its program), {} (its interpreter), /srv/notes (granted), writes /srv/notes/out (granted), no network, memory bounded per process",
                tools.display(),
                t.path().join("prefix").display()
            )
        );
        let args = plan.launcher_args("srv", &["a".into()]);
        assert_eq!(args[0], LAUNCHER_ARG);
        assert_eq!(serde_json::from_str::<Plan>(&args[1]).unwrap(), plan);
        assert_eq!(&args[2..], ["--", "srv", "a"]);
    }

    /// Makes an executable file at `p` (and its directories).
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
            let plan = Plan::resolve(
                "s",
                &Policy::default(),
                &program.display().to_string(),
                &[],
                &ctx,
            )
            .unwrap();
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
        let plan = Plan::resolve(
            "s",
            &Policy::default(),
            &home.join(".local/bin/srv").display().to_string(),
            &[],
            &ctx,
        )
        .unwrap();
        assert_eq!(
            plan.trust(),
            "sandboxed local process: reads ~/.local/bin (its program), ~/.local/lib (its program's libraries), writes only its own directory, network (not Maven's page or socket), memory bounded per process"
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
                "sandboxed local process: reads {} (named in its arguments), writes only its own directory, network (not Maven's page or socket), memory bounded per process",
                script.display()
            )
        );
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
            Err(PlanError::NotFound("no-such-server".into()))
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
            "sandboxed local process: reads none of your files, writes only its own directory, network (not Maven's page or socket), memory bounded per process"
        );
    }
}
