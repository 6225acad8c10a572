//! The launcher: `maven __sandbox-exec PLAN -- COMMAND ARGS…`, run single-threaded before any
//! runtime. Each step either succeeds or ends the launch with a message naming what failed;
//! nothing is executed unless every step succeeded (fail closed).
//!
//! Order matters:
//! 1. a root daemon's launcher takes nobody's real uid (file access stays root's, through the
//!    effective uid) so that the kernel's process bound applies to it (it never applies to a
//!    real uid of 0), and drops its supplementary groups;
//! 2. new user, mount and IPC namespaces, and a network namespace without network; the
//!    owner's uid and gid mapped to themselves;
//! 3. every mount made private; the data directory, the owner's home, `/tmp`, `/var/tmp`,
//!    `/run` and `/dev/shm` covered by empty read-only tmpfs mounts (their UNIX sockets —
//!    Maven's, an ssh or gpg agent's, X11's, D-Bus's — do not exist for the server), and every
//!    path the plan grants inside them mounted back at its own place;
//! 4. limits: `RLIMIT_NPROC` (counted per user namespace, so only the sandbox's own tasks
//!    count), `RLIMIT_AS`, no core dumps;
//! 5. for a root daemon, seccomp denies the setuid calls (an unprivileged process may set its
//!    real uid back to its effective uid 0, which would lift the process bound);
//! 6. Landlock (ABI 6, required in full): files, TCP bind and connect, signal and
//!    abstract-socket scoping; `no_new_privs`;
//! 7. securebits that give root no capability at exec, every capability dropped;
//! 8. `HOME` and `TMPDIR` set, the private directory as working directory, exec.

use std::ffi::OsString;
use std::os::unix::fs::DirBuilderExt as _;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use landlock::{
    Access, AccessFs, AccessNet, CompatLevel, Compatible as _, NetPort, PathBeneath, PathFd,
    Ruleset, RulesetAttr as _, RulesetCreated, RulesetCreatedAttr as _, RulesetStatus, Scope, ABI,
};

use crate::plan::{Plan, GROUP_ARG, INIT_ARG, LAUNCHER_ARG};
use std::time::Duration;

/// The Landlock ABI the sandbox requires: 4 for TCP rules, 6 for signal and abstract-socket
/// scoping.
const LANDLOCK_ABI: ABI = ABI::V6;
/// The uid a root daemon's servers run with as real uid (nobody).
const NOBODY: u32 = 65534;
/// Exit status of a launch that failed before the server ran.
const EXIT_SANDBOX: u8 = 125;

/// A kernel feature the sandbox needs and does not have, or a step that failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Missing {
    /// The feature, spelled out ("Landlock ABI 6 …", "user namespaces …").
    pub feature: String,
    /// What the kernel said.
    pub detail: String,
}

impl std::fmt::Display for Missing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the sandbox needs {} ({}); the server was not started. \"sandbox\": false in its block runs it unsandboxed, as the owner's explicit choice",
            self.feature, self.detail
        )
    }
}

fn missing(feature: &str, detail: impl std::fmt::Display) -> Missing {
    Missing {
        feature: feature.to_owned(),
        detail: detail.to_string(),
    }
}

const F_LANDLOCK: &str =
    "Landlock ABI 6 (file, TCP, signal and abstract-socket rules; Linux 6.12 or later with Landlock enabled)";
const F_USERNS: &str = "unprivileged user namespaces";
const F_MOUNT: &str = "a private mount namespace (to hide Maven's data directory)";
const F_LIMITS: &str = "resource limits";
const F_SECCOMP: &str = "seccomp filters (for a daemon running as root)";
const F_CAPS: &str = "dropping capabilities";
const F_IDS: &str = "switching a root daemon's real uid to nobody";
const F_PIDNS: &str = "a PID namespace of its own (so that its processes end with it)";
const F_SESSION: &str = "a session of its own (no controlling terminal)";

/// What the daemon can check in its own process, without restricting itself: Landlock's ABI
/// (a ruleset is created, never applied), whether user namespaces are allowed, and seccomp for
/// a root daemon. The launcher checks everything again and fails closed.
pub fn probe() -> Result<(), Missing> {
    ruleset(true)?;
    if read("/proc/sys/user/max_user_namespaces").as_deref() == Some("0") {
        return Err(missing(F_USERNS, "user.max_user_namespaces is 0"));
    }
    let root = rustix::process::geteuid().is_root();
    if !root && read("/proc/sys/kernel/unprivileged_userns_clone").as_deref() == Some("0") {
        return Err(missing(F_USERNS, "kernel.unprivileged_userns_clone is 0"));
    }
    if root && !has_seccomp() {
        return Err(missing(F_SECCOMP, "the kernel has no seccomp"));
    }
    Ok(())
}

/// A file of /proc or /sys, trimmed; `None` when it cannot be read.
fn read(p: &str) -> Option<String> {
    std::fs::read_to_string(p).ok().map(|s| s.trim().to_owned())
}

/// Whether this kernel has seccomp (its status line exists).
fn has_seccomp() -> bool {
    read("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .any(|l| l.starts_with("Seccomp:"))
}

/// The bounds this machine lets every server have, for `maven doctor`: one line each.
pub fn bounds() -> Vec<(&'static str, bool, String)> {
    let pidns = read("/proc/sys/user/max_pid_namespaces").as_deref() != Some("0");
    let seccomp = has_seccomp();
    // A cgroup v2 hierarchy this user could create a child in (delegated).
    let cgroup = read("/proc/self/cgroup")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("0::").map(str::to_owned))
        .map(|rel| format!("/sys/fs/cgroup{rel}"))
        .filter(|dir| {
            Path::new(&format!("{dir}/cgroup.controllers")).exists()
                && rustix::fs::access(dir.as_str(), rustix::fs::Access::WRITE_OK).is_ok()
        });
    vec![
        (
            "processes",
            pidns,
            if pidns {
                "every process a server starts (setsid and double forks included) ends with it: a PID namespace of its own".to_owned()
            } else {
                "PID namespaces are off (user.max_pid_namespaces is 0): no stdio server can start".to_owned()
            },
        ),
        (
            "sockets",
            seccomp,
            if seccomp {
                "MPTCP, SCTP, raw and packet sockets and io_uring are refused in every sandbox (seccomp)".to_owned()
            } else {
                "this kernel has no seccomp: sandboxed servers do not start".to_owned()
            },
        ),
        (
            "memory",
            true,
            match cgroup {
                Some(dir) => format!("memory and processes are bounded per process (RLIMIT_AS, RLIMIT_NPROC), not per server, and the trust line says \"memory bounded per process\"; a delegated cgroup v2 ({dir}) exists here, which Maven does not use yet"),
                None => "memory and processes are bounded per process (RLIMIT_AS, RLIMIT_NPROC), not per server, and the trust line says \"memory bounded per process\": this machine has no delegated cgroup v2 that could bound a server's processes together".to_owned(),
            },
        ),
        (
            "disk",
            true,
            "each private directory is bounded by sandbox.disk (default 1 GiB): measured every 2 s, each file at once (RLIMIT_FSIZE)".to_owned(),
        ),
    ]
}

/// The hidden subcommands of the `maven` binary, handled before anything else: the launcher of
/// a sandboxed server ([`LAUNCHER_ARG`]), of an unsandboxed one ([`GROUP_ARG`]), and the init
/// of a server's PID namespace ([`INIT_ARG`]). `None` when `args` (the whole command line) is
/// none of them.
pub fn hidden(args: impl Iterator<Item = OsString>) -> Option<ExitCode> {
    let mut args = args.skip(1);
    let first = args.next()?;
    let rest: Vec<OsString> = args.collect();
    match first.to_str()? {
        LAUNCHER_ARG => Some(launch(rest)),
        GROUP_ARG => Some(group(rest)),
        INIT_ARG => Some(init(rest)),
        _ => None,
    }
}

/// Says one line on stderr: the launcher's only message, to the daemon's log through the
/// server's stderr. A closed stderr drops it (an `eprintln!` would panic mid-launch).
fn say(args: std::fmt::Arguments<'_>) {
    use std::io::Write as _;
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{args}");
}

/// `__sandbox-exec PLAN -- COMMAND ARGS…`: the sandbox's outer half. Returns the server's exit
/// status, or [`EXIT_SANDBOX`] when the sandbox could not be entered (the server never runs
/// then).
pub fn launch(args: Vec<OsString>) -> ExitCode {
    let (plan, argv) = match parse(args) {
        Ok(p) => p,
        Err(e) => {
            say(format_args!("maven sandbox: {e}"));
            return ExitCode::from(EXIT_SANDBOX);
        }
    };
    let plan_arg = serde_json::to_string(&plan).unwrap_or_default();
    let used = disk_used(&plan.home);
    if used > plan.disk {
        say(format_args!(
            "maven sandbox: {}: {}",
            plan.server,
            over_disk(&plan, used)
        ));
        return ExitCode::from(EXIT_SANDBOX);
    }
    // The mounts are made here, while the new user namespace's capabilities are still held
    // (an unprivileged owner's init, executed anew, has none); the init inherits them.
    let entered = outer(plan.network).and_then(|()| hide(&plan));
    match entered.and_then(|()| start_init(&plan_arg, &argv)) {
        Ok(child) => supervise(child, Some(&plan)),
        Err(e) => {
            say(format_args!("maven sandbox: {}: {e}", plan.server));
            ExitCode::from(EXIT_SANDBOX)
        }
    }
}

/// `__group-exec -- COMMAND ARGS…`: an unsandboxed server, still in a PID namespace of its own
/// (in a user namespace that maps the owner to itself when the daemon is not root), so that
/// every process it starts ends with it.
pub fn group(args: Vec<OsString>) -> ExitCode {
    let argv = match command_after_dash(args.into_iter(), "--") {
        Ok(a) => a,
        Err(e) => {
            say(format_args!("maven launcher: {e}"));
            return ExitCode::from(EXIT_SANDBOX);
        }
    };
    let ns = || -> Result<(), Missing> {
        use nix::sched::CloneFlags;
        if rustix::process::geteuid().is_root() {
            nix::sched::unshare(CloneFlags::CLONE_NEWPID)
                .map_err(|e| missing(F_PIDNS, format!("unshare: {e}")))
        } else {
            user_namespace(CloneFlags::CLONE_NEWPID)
        }
    };
    match ns().and_then(|()| start_init("-", &argv)) {
        Ok(child) => supervise(child, None),
        Err(e) => {
            say(format_args!("maven launcher: {e}"));
            ExitCode::from(EXIT_SANDBOX)
        }
    }
}

/// Step 1 and 2 (see the module doc), in the launcher: the ids of a root daemon's server, the
/// namespaces.
fn outer(network: bool) -> Result<(), Missing> {
    if rustix::process::geteuid().is_root() {
        nix::unistd::setgroups(&[]).map_err(|e| missing(F_IDS, e))?;
        let nobody = nix::unistd::Uid::from_raw(NOBODY);
        let zero = nix::unistd::Uid::from_raw(0);
        nix::unistd::setresuid(nobody, zero, zero).map_err(|e| missing(F_IDS, e))?;
    }
    use nix::sched::CloneFlags;
    let mut flags = CloneFlags::CLONE_NEWNS | CloneFlags::CLONE_NEWIPC | CloneFlags::CLONE_NEWPID;
    if !network {
        flags |= CloneFlags::CLONE_NEWNET;
    }
    user_namespace(flags)
}

/// A new user namespace (with `flags`' other namespaces) in which the effective uid and gid
/// map to themselves.
fn user_namespace(flags: nix::sched::CloneFlags) -> Result<(), Missing> {
    let (uid, gid) = (
        rustix::process::geteuid().as_raw(),
        rustix::process::getegid().as_raw(),
    );
    nix::sched::unshare(flags | nix::sched::CloneFlags::CLONE_NEWUSER)
        .map_err(|e| missing(F_USERNS, format!("unshare: {e}")))?;
    let write = |file: &str, text: String| {
        std::fs::write(file, text).map_err(|e| missing(F_USERNS, format!("{file}: {e}")))
    };
    write("/proc/self/setgroups", "deny".to_owned())?;
    write("/proc/self/uid_map", format!("{uid} {uid} 1"))?;
    write("/proc/self/gid_map", format!("{gid} {gid} 1"))?;
    Ok(())
}

/// The first process of the new PID namespace: this binary again, as [`INIT_ARG`].
fn start_init(plan: &str, argv: &[OsString]) -> Result<std::process::Child, Missing> {
    std::process::Command::new("/proc/self/exe")
        .arg0("maven")
        .arg(INIT_ARG)
        .arg(plan)
        .arg("--")
        .args(argv)
        .spawn()
        .map_err(|e| missing(F_PIDNS, format!("starting its first process: {e}")))
}

/// The launcher waits for the namespace's init and exits as it did. Should the daemon go away
/// (even killed), the launcher is re-parented: it notices within a second and kills the init,
/// which takes every process of the namespace with it. The init has the launcher's death as
/// its own death signal, so killing the launcher is enough to end the whole server.
///
/// With a plan, the launcher also measures the private directory every [`DISK_CHECK`] and ends
/// the server when it holds more than the plan's `disk` (each file is bounded by
/// `RLIMIT_FSIZE` at once).
#[expect(
    clippy::disallowed_methods,
    reason = "the launcher is a blocking process of its own, with no async runtime"
)]
fn supervise(mut child: std::process::Child, plan: Option<&Plan>) -> ExitCode {
    use rustix::event::{poll, PollFd, PollFlags, Timespec};
    let parent = rustix::process::getppid();
    let pidfd = i32::try_from(child.id())
        .ok()
        .and_then(rustix::process::Pid::from_raw)
        .and_then(|p| rustix::process::pidfd_open(p, rustix::process::PidfdFlags::empty()).ok());
    let second = Timespec {
        tv_sec: 1,
        tv_nsec: 0,
    };
    let mut checked = std::time::Instant::now();
    loop {
        match &pidfd {
            Some(fd) => {
                let mut fds = [PollFd::new(fd, PollFlags::IN)];
                if let Ok(1..) = poll(&mut fds, Some(&second)) {
                    break;
                }
            }
            None => std::thread::sleep(Duration::from_millis(200)),
        }
        if let Ok(Some(_)) = child.try_wait() {
            break;
        }
        if rustix::process::getppid() != parent {
            let _ = child.kill();
            break;
        }
        if let Some(plan) = plan {
            if checked.elapsed() >= DISK_CHECK {
                checked = std::time::Instant::now();
                let used = disk_used(&plan.home);
                if used > plan.disk {
                    say(format_args!(
                        "maven sandbox: {}: {}",
                        plan.server,
                        over_disk(plan, used)
                    ));
                    let _ = child.kill();
                    let _ = child.wait();
                    return ExitCode::from(EXIT_SANDBOX);
                }
            }
        }
    }
    exit_status(child.wait())
}

/// The environment variables that point a sandboxed server's caches and data into its
/// private directory.
const PRIVATE_PLACES: &[(&str, &str)] = &[
    ("XDG_CACHE_HOME", ".cache"),
    ("XDG_CONFIG_HOME", ".config"),
    ("XDG_DATA_HOME", ".local/share"),
    ("XDG_STATE_HOME", ".local/state"),
    ("npm_config_cache", ".npm"),
    ("UV_CACHE_DIR", ".cache/uv"),
    ("PIP_CACHE_DIR", ".cache/pip"),
];

/// How often a running server's private directory is measured.
const DISK_CHECK: Duration = Duration::from_secs(2);

fn over_disk(plan: &Plan, used: u64) -> String {
    format!(
        "its private directory {} holds {} MiB, more than its bound of {} MiB (sandbox.disk); the server was stopped. Free space in it, or raise \"disk\" in its sandbox",
        plan.home.display(),
        used / (1024 * 1024),
        plan.disk / (1024 * 1024)
    )
}

/// The bytes `dir` and everything below it occupy on disk; links are not followed. Bounded
/// to one million entries (beyond them, what was counted).
pub(crate) fn disk_used(dir: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt as _;
    let mut total = 0u64;
    let mut todo = vec![dir.to_path_buf()];
    let mut seen = 0usize;
    while let Some(d) = todo.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            seen += 1;
            if seen > 1_000_000 {
                return total;
            }
            let Ok(m) = e.metadata() else { continue };
            total = total.saturating_add(m.blocks().saturating_mul(512));
            if m.is_dir() {
                todo.push(e.path());
            }
        }
    }
    total
}

fn exit_status(r: std::io::Result<std::process::ExitStatus>) -> ExitCode {
    use std::os::unix::process::ExitStatusExt as _;
    match r {
        Ok(st) => match (st.code(), st.signal()) {
            (Some(c), _) => ExitCode::from(u8::try_from(c).unwrap_or(1)),
            (None, Some(sig)) => ExitCode::from(u8::try_from(128 + sig).unwrap_or(1)),
            _ => ExitCode::from(1),
        },
        Err(_) => ExitCode::from(EXIT_SANDBOX),
    }
}

/// `__sandbox-init PLAN|- -- COMMAND ARGS…`: pid 1 of the server's PID namespace. It dies with
/// the launcher, leaves the daemon's session (no controlling terminal), confines itself (with a
/// plan), closes every descriptor but 0–2, starts the server and reaps whatever is re-parented
/// to it; when the server exits it exits the same way, and the kernel ends every other
/// process of the namespace.
pub fn init(args: Vec<OsString>) -> ExitCode {
    let _ = rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL));
    let mut it = args.into_iter();
    let plan = it.next().unwrap_or_default();
    let rest: Vec<OsString> = it.collect();
    let (plan, argv) = if plan == "-" {
        match command_after_dash(rest.into_iter(), "--") {
            Ok(argv) => (None, argv),
            Err(e) => {
                say(format_args!("maven launcher: {e}"));
                return ExitCode::from(EXIT_SANDBOX);
            }
        }
    } else {
        let mut all = vec![plan];
        all.extend(rest);
        match parse(all) {
            Ok((p, a)) => (Some(p), a),
            Err(e) => {
                say(format_args!("maven sandbox: {e}"));
                return ExitCode::from(EXIT_SANDBOX);
            }
        }
    };
    let name = plan.as_ref().map_or("", |p| p.server.as_str()).to_owned();
    let fail = |e: Missing| {
        say(format_args!("maven sandbox: {name}: {e}"));
        ExitCode::from(EXIT_SANDBOX)
    };
    if let Err(e) = rustix::process::setsid() {
        return fail(missing(F_SESSION, e));
    }
    let kept = match &plan {
        Some(plan) => match enter(plan) {
            Ok(k) => k,
            Err(e) => return fail(e),
        },
        None => None,
    };
    close_inherited_but(kept.as_ref().map(std::os::fd::AsRawFd::as_raw_fd));
    let mut cmd = match &plan {
        Some(plan) => {
            let mut cmd = std::process::Command::new(&plan.program);
            cmd.arg0(&argv[0])
                .env("HOME", &plan.home)
                .env("TMPDIR", &plan.tmp)
                .current_dir(&plan.home);
            // Package managers and XDG programs keep their caches and data in the private
            // directory, never in the owner's (unless the block's environment says otherwise).
            for (var, rel) in PRIVATE_PLACES {
                if std::env::var_os(var).is_none() {
                    cmd.env(var, plan.home.join(rel));
                }
            }
            cmd
        }
        None => std::process::Command::new(&argv[0]),
    };
    let server = match cmd.args(&argv[1..]).spawn() {
        Ok(c) => c,
        Err(err) => {
            let program = plan
                .as_ref()
                .map_or_else(|| PathBuf::from(&argv[0]), |p| p.program.clone());
            return fail(missing(
                "the server's program to start",
                format!("{}: {err}", program.display()),
            ));
        }
    };
    reap(server)
}

/// Every descriptor above stderr is closed: only stdin, stdout and stderr reach the server.
pub fn close_inherited() {
    close_inherited_but(None);
}

/// [`close_inherited`], but for `keep` (close-on-exec: it never reaches the server).
fn close_inherited_but(keep: Option<i32>) {
    let fds: Vec<i32> = std::fs::read_dir("/proc/self/fd")
        .map(|d| {
            d.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default();
    for fd in fds.into_iter().filter(|&fd| fd > 2 && Some(fd) != keep) {
        // The directory's own descriptor is already closed: EBADF, as expected.
        let _ = nix::unistd::close(fd);
    }
}

/// As pid 1: waits for every child (orphans are re-parented here) until the server exits.
fn reap(server: std::process::Child) -> ExitCode {
    use nix::sys::wait::{waitpid, WaitStatus};
    let pid = nix::unistd::Pid::from_raw(i32::try_from(server.id()).unwrap_or(-1));
    loop {
        match waitpid(None::<nix::unistd::Pid>, None) {
            Ok(WaitStatus::Exited(p, code)) if p == pid => {
                return ExitCode::from(u8::try_from(code).unwrap_or(1))
            }
            Ok(WaitStatus::Signaled(p, sig, _)) if p == pid => {
                return ExitCode::from(u8::try_from(128 + sig as i32).unwrap_or(1))
            }
            Ok(_) => {}
            Err(nix::errno::Errno::EINTR) => {}
            Err(_) => return ExitCode::from(1),
        }
    }
}

fn parse(args: Vec<OsString>) -> Result<(Plan, Vec<OsString>), String> {
    let mut it = args.into_iter();
    let plan = it.next().ok_or("missing the plan")?;
    let plan = plan.to_str().ok_or("the plan is not UTF-8")?;
    let plan: Plan = serde_json::from_str(plan).map_err(|e| format!("unreadable plan: {e}"))?;
    Ok((plan, command_after_dash(it, "-- after the plan")?))
}

/// `-- COMMAND ARGS…`: the command line after the `--` (`what` names it in the error).
fn command_after_dash(
    mut it: impl Iterator<Item = OsString>,
    what: &str,
) -> Result<Vec<OsString>, String> {
    if it.next().as_deref() != Some(std::ffi::OsStr::new("--")) {
        return Err(format!("expected {what}"));
    }
    let argv: Vec<OsString> = it.collect();
    if argv.is_empty() {
        return Err("missing the command after --".to_owned());
    }
    Ok(argv)
}

/// Steps 3–7 (see the module doc), in the init. Returns a descriptor of the Landlock ruleset to
/// keep open until the server exits.
fn enter(plan: &Plan) -> Result<Option<std::os::fd::OwnedFd>, Missing> {
    let root = rustix::process::geteuid().is_root();
    // 4. limits, inside the new user namespace so the process count is the sandbox's own.
    use rustix::process::{setrlimit, Resource, Rlimit};
    for (res, n) in [
        (Resource::Nproc, plan.processes),
        (Resource::As, plan.memory),
        (Resource::Core, 0),
        (Resource::Fsize, plan.disk),
    ] {
        setrlimit(
            res,
            Rlimit {
                current: Some(n),
                maximum: Some(n),
            },
        )
        .map_err(|e| missing(F_LIMITS, format!("{res:?}: {e}")))?;
    }
    // 5. seccomp: the sockets Landlock's TCP rules do not see, for every sandbox; the setuid
    // calls for a root daemon's.
    seccomp(root)?;
    // 6. Landlock.
    // TCP is handled without network (nothing allowed) and with denied ports.
    let tcp = !plan.network || !plan.deny_ports.is_empty();
    let rs = ruleset(tcp).and_then(|rs| rules(rs, plan))?;
    // The last close of a ruleset frees every rule in it (65,536 port rules take the kernel
    // milliseconds to free): a second descriptor of it stays open in the init until the server
    // exits, so that cost is never paid before the server starts.
    let kept: Option<std::os::fd::OwnedFd> = rs.try_clone().ok().and_then(Into::into);
    let status = rs.restrict_self().map_err(|e| missing(F_LANDLOCK, e))?;
    if status.ruleset != RulesetStatus::FullyEnforced || !status.no_new_privs {
        return Err(missing(
            F_LANDLOCK,
            format!("the ruleset is {:?}", status.ruleset),
        ));
    }
    // 7. no capability now, none at exec. An unprivileged owner's init holds none already
    // (it was executed anew as a uid other than 0 of its namespace) and cannot set
    // securebits; with `no_new_privs` no exec can grant one.
    use rustix::thread::{CapabilitiesSecureBits as B, CapabilitySet, CapabilitySets};
    let held = rustix::thread::capabilities(None).map_err(|e| missing(F_CAPS, e))?;
    if !root && held.permitted.is_empty() && held.effective.is_empty() {
        return Ok(kept);
    }
    rustix::thread::set_capabilities_secure_bits(
        B::NO_ROOT
            | B::NO_ROOT_LOCKED
            | B::NO_SETUID_FIXUP
            | B::NO_SETUID_FIXUP_LOCKED
            | B::NO_CAP_AMBIENT_RAISE
            | B::NO_CAP_AMBIENT_RAISE_LOCKED,
    )
    .map_err(|e| missing(F_CAPS, format!("securebits: {e}")))?;
    rustix::thread::set_capabilities(
        None,
        CapabilitySets {
            effective: CapabilitySet::empty(),
            permitted: CapabilitySet::empty(),
            inheritable: CapabilitySet::empty(),
        },
    )
    .map_err(|e| missing(F_CAPS, e))?;
    Ok(kept)
}

/// Step 3: `/` and below private; each hidden directory, outermost first, covered by an
/// empty tmpfs (read-only once filled), and every path the plan grants that lies inside it
/// (the private directory, a `read` or `write` path, the command's directory) mounted back at
/// its own path. The paths are opened before anything is covered.
fn hide(plan: &Plan) -> Result<(), Missing> {
    use rustix::fs::{Mode, OFlags};
    use rustix::mount::MountPropagationFlags as P;
    use rustix::mount::{mount, mount_bind_recursive, mount_change, mount_remount, MountFlags};
    mount_change("/", P::REC | P::PRIVATE).map_err(|e| missing(F_MOUNT, format!("/: {e}")))?;
    let mut hidden: Vec<&Path> = plan.hide.iter().map(PathBuf::as_path).collect();
    hidden.sort_by_key(|p| p.components().count());
    hidden.dedup();
    let granted = plan
        .read
        .iter()
        .chain(&plan.write)
        .chain(&plan.devices)
        .chain(std::iter::once(&plan.home));
    let mut keep: Vec<(&Path, std::os::fd::OwnedFd, bool)> = Vec::new();
    for p in granted {
        if !hidden.iter().any(|h| p.starts_with(h)) || keep.iter().any(|(k, ..)| *k == p) {
            continue;
        }
        // A granted path that does not exist grants nothing (Landlock skips it too).
        let Ok(fd) = rustix::fs::open(p, OFlags::PATH | OFlags::CLOEXEC, Mode::empty()) else {
            continue;
        };
        let dir = rustix::fs::fstat(&fd).is_ok_and(|st| {
            rustix::fs::FileType::from_raw_mode(st.st_mode) == rustix::fs::FileType::Directory
        });
        keep.push((p.as_path(), fd, dir));
    }
    let flags = MountFlags::NOSUID | MountFlags::NODEV | MountFlags::NOEXEC;
    for dir in hidden {
        // Not there (or already under an outer cover and not granted): nothing to hide.
        if !dir.is_dir() {
            continue;
        }
        let m = |e: &dyn std::fmt::Display| missing(F_MOUNT, format!("{}: {e}", dir.display()));
        mount("tmpfs", dir, "tmpfs", flags, c"mode=0755,size=64k").map_err(|e| m(&e))?;
        for (p, fd, is_dir) in &keep {
            if !p.starts_with(dir) {
                continue;
            }
            let mk = |d: &Path| {
                std::fs::DirBuilder::new()
                    .recursive(true)
                    .mode(0o755)
                    .create(d)
            };
            if *is_dir {
                mk(p).map_err(|e| m(&e))?;
            } else {
                if let Some(parent) = p.parent() {
                    mk(parent).map_err(|e| m(&e))?;
                }
                std::fs::File::create(p).map_err(|e| m(&e))?;
            }
            let src = format!("/proc/self/fd/{}", std::os::fd::AsRawFd::as_raw_fd(fd));
            // Recursive: a mount below a granted directory comes along (a plain bind of a tree
            // with mounts the namespace cannot unveil fails with EINVAL).
            mount_bind_recursive(src.as_str(), *p).map_err(|e| m(&e))?;
        }
        mount_remount(dir, flags | MountFlags::RDONLY, "").map_err(|e| m(&e))?;
    }
    Ok(())
}

/// The ruleset every sandbox gets: every file access of ABI 6 handled, TCP handled, signal
/// and abstract-socket scoping (and TCP bind and connect when `tcp`); all of it required (no best effort). Creating it restricts
/// nothing, so the daemon's [`probe`] uses it too.
fn ruleset(tcp: bool) -> Result<RulesetCreated, Missing> {
    let l = |e: landlock::RulesetError| missing(F_LANDLOCK, e);
    let mut rs = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(AccessFs::from_all(LANDLOCK_ABI))
        .map_err(l)?;
    if tcp {
        rs = rs
            .handle_access(AccessNet::from_all(LANDLOCK_ABI))
            .map_err(l)?;
    }
    rs.scope(Scope::from_all(LANDLOCK_ABI))
        .map_err(l)?
        .create()
        .map_err(l)
}

fn rules(mut rs: RulesetCreated, plan: &Plan) -> Result<RulesetCreated, Missing> {
    let abi = LANDLOCK_ABI;
    let read_dir = AccessFs::from_read(abi);
    let read_file = AccessFs::Execute | AccessFs::ReadFile;
    let write_dir = AccessFs::from_all(abi);
    let write_file = AccessFs::from_file(abi);
    let dev = AccessFs::ReadFile | AccessFs::WriteFile;
    let groups: [(&[std::path::PathBuf], _, _); 3] = [
        (&plan.read, read_dir, read_file),
        (&plan.write, write_dir, write_file),
        (&plan.devices, dev, dev),
    ];
    for (paths, on_dir, on_file) in groups {
        for p in paths {
            // A path that does not exist grants nothing (and is not an error: the system
            // list names directories some systems lack).
            let Ok(meta) = std::fs::metadata(p) else {
                continue;
            };
            let Ok(fd) = PathFd::new(p) else { continue };
            let access = if meta.is_dir() { on_dir } else { on_file };
            rs = rs
                .add_rule(PathBeneath::new(fd, access))
                .map_err(|e| missing(F_LANDLOCK, format!("{}: {e}", p.display())))?;
        }
    }
    if plan.network && !plan.deny_ports.is_empty() {
        rs = allow_ports(rs, &plan.deny_ports, AccessNet::from_all(abi))?;
    }
    Ok(rs)
}

/// With network every TCP port is allowed but the denied ones (the page's, which may only be
/// bound — it is already): Landlock rules only ever allow, so this is one rule per port, the
/// bulk of a sandboxed start (adding them, then the kernel copying them into the new domain).
/// Highest port first: the kernel keeps the rules in a red-black tree, and inserting in
/// descending order costs about two thirds of ascending (22 ms against 30–40 ms for 65,536
/// rules on one core here, of which the bare system calls are 10 ms). Adding them from several
/// threads gained nothing measurable (the ruleset's lock serialises the insertions).
fn allow_ports(
    mut rs: RulesetCreated,
    deny: &[u16],
    allowed: landlock::BitFlags<AccessNet>,
) -> Result<RulesetCreated, Missing> {
    for port in (0..=u16::MAX).rev() {
        // A denied port may still be bound where binding is handled.
        let access = if deny.contains(&port) {
            allowed & AccessNet::BindTcp
        } else {
            allowed
        };
        if access.is_empty() {
            continue;
        }
        rs = rs
            .add_rule(NetPort::new(port, access))
            .map_err(|e| missing(F_LANDLOCK, format!("port {port}: {e}")))?;
    }
    Ok(rs)
}

/// Step 5. In every sandbox, `socket()` fails with EACCES for what Landlock's TCP rules do not
/// mediate and could still reach a local port: MPTCP (it falls back to plain TCP) and SCTP over
/// IPv4 and IPv6, raw and packet sockets; and io_uring, whose socket and connect operations
/// bypass seccomp, fails with EACCES. For a root daemon, `setuid`, `setreuid` and `setresuid`
/// fail with EPERM. A call from another ABI kills the process (seccompiler's architecture
/// check).
fn seccomp(root: bool) -> Result<(), Missing> {
    use seccompiler::{
        BpfProgram, SeccompAction, SeccompCmpArgLen as Len, SeccompCmpOp as Op, SeccompCondition,
        SeccompFilter, SeccompRule, TargetArch,
    };
    use std::collections::BTreeMap;
    let s = |e: &dyn std::fmt::Display| missing(F_SECCOMP, e);
    // The x32 ABI shares the architecture value: its numbers carry bit 30.
    const X32: i64 = 0x4000_0000;
    let x32 = |nrs: &mut Vec<i64>, x: &[i64]| {
        if cfg!(target_arch = "x86_64") {
            nrs.extend(x.iter().map(|n| n | X32));
        }
    };
    let arch = TargetArch::try_from(std::env::consts::ARCH).map_err(|e| s(&e))?;
    let install = |rules: BTreeMap<i64, Vec<SeccompRule>>, errno: i32| -> Result<(), Missing> {
        let filter = SeccompFilter::new(
            rules,
            SeccompAction::Allow,
            SeccompAction::Errno(errno as u32),
            arch,
        )
        .map_err(|e| s(&e))?;
        let prog: BpfProgram = filter
            .try_into()
            .map_err(|e: seccompiler::BackendError| s(&e))?;
        seccompiler::apply_filter(&prog).map_err(|e| s(&e))
    };
    rustix::thread::set_no_new_privs(true).map_err(|e| s(&e))?;

    let cond = |arg: u8, op: Op, v: u64| SeccompCondition::new(arg, Len::Dword, op, v);
    let mut socket_rules = Vec::new();
    for family in [libc::AF_INET, libc::AF_INET6] {
        let family = family as u64;
        for protocol in [libc::IPPROTO_MPTCP, libc::IPPROTO_SCTP] {
            socket_rules.push(vec![
                cond(0, Op::Eq, family),
                cond(2, Op::Eq, protocol as u64),
            ]);
        }
        // 10: SOCK_PACKET, the obsolete packet interface.
        for kind in [libc::SOCK_RAW, 10] {
            // The type's low bits; SOCK_NONBLOCK and SOCK_CLOEXEC are flags above them.
            socket_rules.push(vec![
                cond(0, Op::Eq, family),
                cond(1, Op::MaskedEq(0xf), kind as u64),
            ]);
        }
    }
    socket_rules.push(vec![cond(0, Op::Eq, libc::AF_PACKET as u64)]);
    let socket_rules = socket_rules
        .into_iter()
        .map(|c| c.into_iter().collect::<Result<Vec<_>, _>>())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| s(&e))?
        .into_iter()
        .map(SeccompRule::new)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| s(&e))?;
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    let mut sockets = vec![libc::SYS_socket];
    x32(&mut sockets, &[41]);
    for nr in sockets {
        rules.insert(nr, socket_rules.clone());
    }
    let mut uring = vec![
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
    ];
    x32(&mut uring, &[425, 426, 427]);
    for nr in uring {
        rules.insert(nr, vec![]);
    }
    install(rules, libc::EACCES)?;

    if root {
        let mut nrs = vec![libc::SYS_setuid, libc::SYS_setreuid, libc::SYS_setresuid];
        x32(&mut nrs, &[105, 113, 117]);
        install(nrs.into_iter().map(|n| (n, vec![])).collect(), libc::EPERM)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_launcher_refuses_what_it_cannot_read() {
        let os = |v: &[&str]| v.iter().map(OsString::from).collect::<Vec<_>>();
        assert_eq!(parse(os(&[])).unwrap_err(), "missing the plan");
        assert!(parse(os(&["{", "--", "x"]))
            .unwrap_err()
            .starts_with("unreadable plan: "));
        let plan = crate::Plan {
            server: "s".into(),
            program: "/bin/true".into(),
            read: vec![],
            write: vec![],
            devices: vec![],
            home: "/nonexistent".into(),
            tmp: "/nonexistent/tmp".into(),
            hide: vec![],
            network: false,
            deny_ports: vec![],
            memory: crate::DEFAULT_MEMORY,
            processes: crate::DEFAULT_PROCESSES,
            disk: crate::DEFAULT_DISK,
            shown_read: vec![],
            owner_write: vec![],
            owner_home: None,
        };
        let json = serde_json::to_string(&plan).unwrap();
        assert_eq!(
            parse(os(&[&json, "x"])).unwrap_err(),
            "expected -- after the plan"
        );
        assert_eq!(
            parse(os(&[&json, "--"])).unwrap_err(),
            "missing the command after --"
        );
        let (p, argv) = parse(os(&[&json, "--", "true", "-v"])).unwrap();
        assert_eq!(p, plan);
        assert_eq!(argv, os(&["true", "-v"]));
    }

    #[test]
    fn a_missing_feature_says_what_and_that_unsandboxed_is_the_owners_choice() {
        let m = missing(F_USERNS, "kernel.unprivileged_userns_clone is 0");
        assert_eq!(
            m.to_string(),
            "the sandbox needs unprivileged user namespaces (kernel.unprivileged_userns_clone is 0); the server was not started. \"sandbox\": false in its block runs it unsandboxed, as the owner's explicit choice"
        );
    }

    #[test]
    fn this_kernel_has_what_the_sandbox_needs() {
        // The machines this runs on have Landlock ABI 6 and user namespaces; a kernel without
        // them makes every sandboxed server fail closed instead (and this test say why).
        if let Err(m) = probe() {
            panic!("{m}");
        }
    }
}
