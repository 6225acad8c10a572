//! The launcher: `maven __sandbox-exec PLAN -- COMMAND ARGS…`, run single-threaded before any
//! runtime. Each step either succeeds or ends the launch with a message naming what failed;
//! nothing is executed unless every step succeeded (fail closed).
//!
//! Order matters:
//! 0. with the network through Maven's proxy (`Network::Proxy`), before any namespace, while
//!    the data directory is still there: the door token read from [`crate::DOOR_TOKEN_ENV`]
//!    (none: the start is refused) and the daemon's door socket (`Plan::door`; none: refused)
//!    connected, close-on-exec (never inherited by the init or the server). The launcher keeps
//!    it open for its whole life: its end tells the daemon the server is gone;
//! 1. new mount, IPC and UTS namespaces, and a network namespace in every mode but `direct`; a
//!    root daemon's launcher makes them as root, makes the mounts (step 2), then takes the
//!    server's own uid and gid for good (real, effective, saved, no supplementary group),
//!    checks that every grant is usable by it as granted, and only then makes the user and
//!    PID namespaces, mapping that uid to itself; an unprivileged owner's launcher makes them
//!    all at once, mapping the owner to itself;
//!
//!    1a. with the proxy, right after the network namespace is made (a root daemon's launcher
//!    still as root, before the mounts; an unprivileged one in its new user namespace, which
//!    owns the network namespace, before the mounts): the loopback up (netlink), each
//!    `connect` endpoint's address outside 127.0.0.0/8 and `::1` added to it, a listener bound
//!    at [`crate::PROXY`] and one at each endpoint, all handed to the daemon through the door
//!    (module `door`) and its answer waited for (a refusal refuses the start, with the
//!    daemon's words); the launcher's own copies closed. The server's namespace then holds
//!    nothing but Maven's listeners;
//! 2. every mount made private; the data directory, the owner's home, `/tmp`, `/var/tmp`,
//!    `/run` and `/dev/shm` covered by empty read-only tmpfs mounts (their UNIX sockets —
//!    Maven's, an ssh or gpg agent's, X11's, D-Bus's — do not exist for the server), and every
//!    path the plan grants inside them, opened without following a link, mounted back at its
//!    own place; a machine id of its own over `/etc/machine-id`; the host name;
//! 3. `CAP_SYS_ADMIN` of the user namespace made ambient, the init started: it mounts its own
//!    `/proc`;
//! 4. limits: `RLIMIT_NPROC` (counted per user namespace, so only the sandbox's own tasks
//!    count), `RLIMIT_AS`, no core dumps, `RLIMIT_FSIZE`;
//! 5. seccomp: the sockets Landlock's TCP rules do not see, vsock, socket diagnostics, UDP in
//!    a network namespace of its own, io_uring;
//! 6. Landlock (ABI 6, required in full): files, TCP bind and connect (without network, and
//!    with `direct` and a denied port; not with the proxy, whose namespace holds only Maven's
//!    listeners), signal and abstract-socket scoping; `no_new_privs`;
//! 7. the ambient set cleared, every capability dropped;
//! 8. `HOME` and `TMPDIR` set (and, with the proxy, `HTTPS_PROXY` and its kin), the door
//!    token removed from the environment (in every mode), the private directory as working
//!    directory, exec.

use std::ffi::OsString;
use std::os::unix::fs::DirBuilderExt as _;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use landlock::{
    Access, AccessFs, AccessNet, CompatLevel, Compatible as _, NetPort, PathBeneath, Ruleset,
    RulesetAttr as _, RulesetCreated, RulesetCreatedAttr as _, RulesetStatus, Scope, ABI,
};

use crate::disk;
use crate::door::{self, Purpose};
use crate::net::{Network, DOOR_TOKEN_ENV, PROXY};
use crate::plan::{Plan, GROUP_ARG, INIT_ARG, LAUNCHER_ARG};
use std::time::Duration;

/// The Landlock ABI the sandbox requires: 4 for TCP rules, 6 for signal and abstract-socket
/// scoping.
const LANDLOCK_ABI: ABI = ABI::V6;
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
        if self.feature == F_GRANT || self.feature == F_DOOR {
            return write!(f, "{}; the server was not started", self.detail);
        }
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
const F_SECCOMP: &str = "seccomp filters";
const F_CAPS: &str = "dropping capabilities";
const F_IDS: &str = "a uid and gid of its own (for a daemon running as root)";
const F_PROC: &str = "a /proc of its own (its PID namespace's processes only)";
const F_UTS: &str = "a host name and machine id of its own";
/// Not a missing feature: a granted path the sandbox refuses (a link, or one its uid cannot
/// reach); said as it is, with no advice to turn the sandbox off.
const F_GRANT: &str = "a grant as granted";
/// Not a missing feature either: the hand-over of a proxied server's listeners to the daemon
/// failed or was refused; said as it is.
const F_DOOR: &str = "the door of Maven's proxy";
const F_LOOPBACK: &str =
    "a loopback interface of its own, with Maven's listeners on it (for its network through Maven's proxy)";
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
                "MPTCP, SCTP, raw and packet sockets, socket diagnostics and io_uring are refused in every sandbox, UDP in every sandbox with a network of its own (seccomp)".to_owned()
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
    let fail = |plan: &Plan, e: &dyn std::fmt::Display| {
        say(format_args!("maven sandbox: {}: {e}", plan.server));
        ExitCode::from(EXIT_SANDBOX)
    };
    let listed = disk::listed(&plan.home);
    let usage = disk::Usage {
        listed: listed.unwrap_or(u64::MAX),
        deleted: 0,
        too_many: listed.is_none(),
    };
    let bound = disk::in_force(&plan, usage.listed);
    if usage.over(bound) || bound.bytes == 0 {
        let (words, advice) = disk::over_words(&plan, bound, usage);
        return fail(
            &plan,
            &format_args!("{words}; the server was not started. {advice}"),
        );
    }
    // Each file is bounded by the bound in force at once (RLIMIT_FSIZE, in the init).
    let plan_arg = serde_json::to_string(&Plan {
        disk: bound.bytes,
        ..plan.clone()
    })
    .unwrap_or_default();
    // The machine's /proc, kept before the server's own is mounted over it: the launcher
    // counts what the server's processes hold open through it.
    let proc = rustix::fs::open(
        "/proc",
        rustix::fs::OFlags::DIRECTORY | rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    );
    let proc = match proc {
        Ok(fd) => fd,
        Err(e) => return fail(&plan, &missing(F_PROC, format!("/proc: {e}"))),
    };
    // Step 0: with the proxy, the door, connected before anything is hidden. It stays open
    // until the launcher exits (the daemon reads its end as the server's).
    let door = match Door::open(&plan) {
        Ok(d) => d,
        Err(e) => return fail(&plan, &e),
    };
    // The mounts are made here, while the new namespaces' capabilities are still held; the
    // init inherits them, and gets only CAP_SYS_ADMIN of the new user namespace (ambient), to
    // mount its own /proc.
    match outer(&plan, door.as_ref()).and_then(|()| start_init(&plan_arg, &argv)) {
        Ok(child) => supervise(child, Some((&plan, bound, &proc))),
        Err(e) => fail(&plan, &e),
    }
}

/// A proxied server's launcher's end of the daemon's door socket, and the token it shows.
struct Door {
    stream: std::os::unix::net::UnixStream,
    token: String,
}

impl Door {
    /// Step 0: `None` unless the network goes through Maven's proxy; then the token from the
    /// environment and the door connected, close-on-exec, or the start is refused.
    fn open(plan: &Plan) -> Result<Option<Door>, Missing> {
        if !matches!(plan.network, Network::Proxy { .. }) {
            return Ok(None);
        }
        let token = std::env::var(DOOR_TOKEN_ENV).ok().filter(|t| !t.is_empty());
        let Some(token) = token else {
            return Err(missing(
                F_DOOR,
                format!("its network goes through Maven's proxy, and the launcher was given no door token ({DOOR_TOKEN_ENV}): only the daemon starts such a server"),
            ));
        };
        let Some(path) = &plan.door else {
            return Err(missing(
                F_DOOR,
                "its network goes through Maven's proxy, and its plan names no door socket: only the daemon starts such a server",
            ));
        };
        let stream = std::os::unix::net::UnixStream::connect(path).map_err(|e| {
            missing(
                F_DOOR,
                format!(
                    "its network goes through Maven's proxy, and the daemon's door {} cannot be reached: {e}",
                    path.display()
                ),
            )
        })?;
        // std opens it close-on-exec; made sure of, since the init and the server must never
        // hold it.
        rustix::io::fcntl_setfd(&stream, rustix::io::FdFlags::CLOEXEC)
            .map_err(|e| missing(F_DOOR, format!("the door, close-on-exec: {e}")))?;
        Ok(Some(Door { stream, token }))
    }
}

/// Step 1a, in the server's new network namespace (with the capabilities to configure it):
/// the loopback up, each `connect` endpoint's address that is not on it already added, a
/// listener at [`PROXY`] and one at each endpoint, handed to the daemon; the launcher's copies
/// are closed when this returns.
fn proxy_listeners(plan: &Plan, door: &Door) -> Result<(), Missing> {
    let lo = |what: &str, e: &dyn std::fmt::Display| missing(F_LOOPBACK, format!("{what}: {e}"));
    let mut route = crate::netlink::Route::open().map_err(|e| lo("a netlink socket", &e))?;
    let index = route
        .index("lo")
        .map_err(|e| lo("the loopback's index", &e))?;
    route
        .link_up(index)
        .map_err(|e| lo("the loopback up", &e))?;
    let endpoints = plan.network.connect();
    for ip in endpoints.iter().map(|e| e.addr.ip()) {
        if ip.is_loopback() {
            continue;
        }
        // EEXIST: another endpoint at the same address, another port.
        match route.add_address(index, ip) {
            Ok(()) | Err(rustix::io::Errno::EXIST) => {}
            Err(e) => return Err(lo(&format!("{ip} on the loopback"), &e)),
        }
    }
    let bind = |at: std::net::SocketAddr| {
        // An IPv6 address just added is usable a moment later (the kernel completes it on
        // its work queue, even without duplicate address detection): up to a second.
        let mut tries = 0;
        loop {
            match std::net::TcpListener::bind(at) {
                Err(e)
                    if at.is_ipv6()
                        && tries < 100
                        && e.raw_os_error() == Some(libc::EADDRNOTAVAIL) =>
                {
                    tries += 1;
                    std::thread::sleep(Duration::from_millis(10));
                }
                r => return r.map_err(|e| lo(&format!("listening at {at}"), &e)),
            }
        }
    };
    let mut listeners = vec![(Purpose::Proxy, bind(PROXY)?)];
    for e in endpoints {
        let p = Purpose::Connect(e.addr);
        if listeners.iter().any(|(q, _)| *q == p) {
            continue;
        }
        listeners.push((p, bind(e.addr)?));
    }
    let handed: Vec<(Purpose, &std::net::TcpListener)> =
        listeners.iter().map(|(p, l)| (*p, l)).collect();
    door::hand_over(&door.stream, &door.token, &handed).map_err(|e| {
        missing(
            F_DOOR,
            format!("its network goes through Maven's proxy: handing over its listeners: {e}"),
        )
    })
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

/// Steps 1–3 (see the module doc), in the launcher: the namespaces, the mounts, the host
/// name and machine id, a root daemon's server's own uid and gid; then `CAP_SYS_ADMIN` of the
/// sandbox's user namespace made ambient, for the init to mount its `/proc` with.
fn outer(plan: &Plan, door: Option<&Door>) -> Result<(), Missing> {
    use nix::sched::CloneFlags;
    let mut flags = CloneFlags::CLONE_NEWNS | CloneFlags::CLONE_NEWIPC | CloneFlags::CLONE_NEWUTS;
    if plan.network.own_namespace() {
        flags |= CloneFlags::CLONE_NEWNET;
    }
    if rustix::process::geteuid().is_root() {
        // The mounts are made as root (every granted path opened while it can be), then the
        // server's own ids are taken for good, and only then its user namespace is made:
        // it maps that uid to itself, and the mounts made above are locked in it.
        let id = plan.uid.ok_or_else(|| {
            missing(
                F_IDS,
                "no uid of its own was allocated (the daemon prepares one before the start)",
            )
        })?;
        nix::sched::unshare(flags).map_err(|e| missing(F_MOUNT, format!("unshare: {e}")))?;
        // 1a. still root: the loopback configured, the listeners bound and handed over.
        if let Some(door) = door {
            proxy_listeners(plan, door)?;
        }
        inner_mounts(plan)?;
        let (uid, gid) = (
            nix::unistd::Uid::from_raw(id),
            nix::unistd::Gid::from_raw(id),
        );
        nix::unistd::setgroups(&[]).map_err(|e| missing(F_IDS, e))?;
        nix::unistd::setresgid(gid, gid, gid).map_err(|e| missing(F_IDS, e))?;
        nix::unistd::setresuid(uid, uid, uid).map_err(|e| missing(F_IDS, e))?;
        // Changing ids made the process not dumpable, and its /proc files root's: made its
        // own again, so that it can write its user namespace's maps.
        rustix::process::set_dumpable_behavior(rustix::process::DumpableBehavior::Dumpable)
            .map_err(|e| missing(F_IDS, format!("dumpable: {e}")))?;
        reachable(plan, id)?;
        user_namespace(CloneFlags::CLONE_NEWNS | CloneFlags::CLONE_NEWPID)?;
    } else {
        user_namespace(flags | CloneFlags::CLONE_NEWPID)?;
        // 1a. with the new user namespace's capabilities over the network namespace it owns.
        if let Some(door) = door {
            proxy_listeners(plan, door)?;
        }
        inner_mounts(plan)?;
    }
    ambient_sys_admin()
}

/// The mounts and names of the sandbox, in its new mount and UTS namespaces.
fn inner_mounts(plan: &Plan) -> Result<(), Missing> {
    hide(plan)?;
    rustix::system::sethostname(HOSTNAME.as_bytes())
        .map_err(|e| missing(F_UTS, format!("sethostname: {e}")))
}

/// The host name inside every sandbox.
pub const HOSTNAME: &str = "maven-sandbox";

/// For a root daemon, after its server's ids are taken: every path the plan grants is
/// reachable by that uid as granted (read, or read and write), else the start is refused,
/// naming the path — a grant is never widened to make it work.
fn reachable(plan: &Plan, id: u32) -> Result<(), Missing> {
    use rustix::fs::Access;
    let check = |p: &Path, want: Access, words: &str| -> Result<(), Missing> {
        // Not there: grants nothing (left out of the plan already, or gone since).
        let Ok(meta) = std::fs::metadata(p) else {
            return Ok(());
        };
        let want = if meta.is_dir() {
            want | Access::EXEC_OK
        } else {
            want
        };
        rustix::fs::access(p, want).map_err(|e| {
            use std::os::unix::fs::MetadataExt as _;
            missing(
                F_GRANT,
                format!(
                    "a root daemon's server runs as a uid of its own ({id}), which cannot {words} {} (owner uid {}, mode {:o}: {e}); Maven does not widen a grant to make it work: give that uid access to it (for example `chown -R {id} {}` for a directory only this server uses), or run the daemon as an ordinary user",
                    p.display(),
                    meta.uid(),
                    meta.mode() & 0o7777,
                    p.display()
                ),
            )
        })
    };
    check(&plan.program, Access::EXEC_OK, "run")?;
    for g in &plan.shown_read {
        if plan.read.contains(&g.path) {
            check(&g.path, Access::READ_OK, "read")?;
        }
    }
    for p in plan.write.iter().filter(|p| **p != plan.home) {
        check(p, Access::READ_OK | Access::WRITE_OK, "write")?;
    }
    Ok(())
}

/// `CAP_SYS_ADMIN` (of the sandbox's user namespace, held since it was made) in the ambient
/// set, so that the init, executed as a uid other than 0, holds it and nothing else.
fn ambient_sys_admin() -> Result<(), Missing> {
    use rustix::thread::{CapabilitySet, CapabilitySets};
    let held = rustix::thread::capabilities(None).map_err(|e| missing(F_PROC, e))?;
    rustix::thread::set_capabilities(
        None,
        CapabilitySets {
            effective: held.effective,
            permitted: held.permitted,
            inheritable: held.inheritable | CapabilitySet::SYS_ADMIN,
        },
    )
    .map_err(|e| missing(F_PROC, format!("inheritable CAP_SYS_ADMIN: {e}")))?;
    rustix::thread::configure_capability_in_ambient_set(
        rustix::thread::CapabilitySet::SYS_ADMIN,
        true,
    )
    .map_err(|e| missing(F_PROC, format!("ambient CAP_SYS_ADMIN: {e}")))
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
        // The door's token is the launcher's only.
        .env_remove(DOOR_TOKEN_ENV)
        .spawn()
        .map_err(|e| missing(F_PIDNS, format!("starting its first process: {e}")))
}

/// The launcher waits for the namespace's init and exits as it did (a server killed by a
/// signal: the launcher is killed by the same signal, so the daemon sees it at once). Should
/// the daemon go away (even killed), the launcher is re-parented: it notices within a second
/// and kills the init, which takes every process of the namespace with it. The init has the
/// launcher's death as its own death signal, so killing the launcher is enough to end the
/// whole server.
///
/// With a plan, the launcher also measures what the server occupies — its private directory,
/// and the deleted files its processes still hold open — every [`disk::CHECK`] at least, and
/// ends the server when that is over the bound in force (each file is bounded by
/// `RLIMIT_FSIZE` at once).
#[expect(
    clippy::disallowed_methods,
    reason = "the launcher is a blocking process of its own, with no async runtime"
)]
fn supervise(
    mut child: std::process::Child,
    watch: Option<(&Plan, disk::Bound, &std::os::fd::OwnedFd)>,
) -> ExitCode {
    use rustix::event::{poll, PollFd, PollFlags, Timespec};
    let parent = rustix::process::getppid();
    let pidfd = i32::try_from(child.id())
        .ok()
        .and_then(rustix::process::Pid::from_raw)
        .and_then(|p| rustix::process::pidfd_open(p, rustix::process::PidfdFlags::empty()).ok());
    let tick = Timespec {
        tv_sec: 0,
        tv_nsec: 250_000_000,
    };
    let mut checked = std::time::Instant::now();
    let mut wait = Duration::ZERO;
    loop {
        match &pidfd {
            Some(fd) => {
                let mut fds = [PollFd::new(fd, PollFlags::IN)];
                if let Ok(1..) = poll(&mut fds, Some(&tick)) {
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
        if let Some((plan, bound, proc)) = watch {
            if checked.elapsed() >= wait {
                let started = std::time::Instant::now();
                let listed = disk::listed(&plan.home);
                let usage = disk::Usage {
                    listed: listed.unwrap_or(0),
                    deleted: disk::held_deleted(proc, child.id()),
                    too_many: listed.is_none(),
                };
                checked = std::time::Instant::now();
                wait = disk::CHECK.max(started.elapsed() * 10);
                if usage.over(bound) {
                    let _ = child.kill();
                    let _ = child.wait();
                    let (words, advice) = disk::over_words(plan, bound, usage);
                    say(format_args!(
                        "maven sandbox: {}: {words}; the server was stopped. {advice}",
                        plan.server,
                    ));
                    return ExitCode::from(EXIT_SANDBOX);
                }
            }
        }
    }
    let status = child.wait();
    if let Ok(st) = &status {
        if let Some(sig) = died_by(st) {
            // The daemon sees the server's death as it was: by this signal.
            let _ = rustix::process::kill_process(rustix::process::getpid(), sig);
        }
    }
    exit_status(status)
}

/// The signal that ended the init's server, which the init reports as the shell does: an
/// exit status of 128 + the signal's number. Only signals whose default is to end a process.
fn died_by(st: &std::process::ExitStatus) -> Option<rustix::process::Signal> {
    use rustix::process::Signal as S;
    let n = st.code()?.checked_sub(128)?;
    [
        S::HUP,
        S::INT,
        S::QUIT,
        S::ILL,
        S::TRAP,
        S::ABORT,
        S::BUS,
        S::FPE,
        S::KILL,
        S::USR1,
        S::SEGV,
        S::USR2,
        S::ALARM,
        S::TERM,
        S::XCPU,
        S::XFSZ,
        S::VTALARM,
        S::PROF,
        S::SYS,
    ]
    .into_iter()
    .find(|s| s.as_raw() == n)
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

/// The variables that name a proxy, in both cases (HTTP clients differ in which they read).
const PROXY_VARS: [&str; 6] = [
    "HTTPS_PROXY",
    "https_proxy",
    "HTTP_PROXY",
    "http_proxy",
    "ALL_PROXY",
    "all_proxy",
];

/// The environment a proxied server gets (each variable unless the block's environment sets
/// it): `HTTPS_PROXY`, `HTTP_PROXY`, `ALL_PROXY` and their lowercase forms name the proxy at
/// [`PROXY`]; `NO_PROXY` and `no_proxy` name the loopback (and the address of each `connect`
/// endpoint off it, reached directly at its own address); `NODE_USE_ENV_PROXY=1` makes
/// Node's own `fetch` and `http` use them.
fn proxy_env(connect: &[crate::net::Endpoint]) -> Vec<(&'static str, String)> {
    let url = format!("http://{PROXY}");
    let mut direct = vec![
        "localhost".to_owned(),
        "127.0.0.1".to_owned(),
        "::1".to_owned(),
    ];
    for e in connect {
        let ip = e.addr.ip().to_string();
        if !e.addr.ip().is_loopback() && !direct.contains(&ip) {
            direct.push(ip);
        }
    }
    let direct = direct.join(",");
    let mut env: Vec<(&'static str, String)> =
        PROXY_VARS.into_iter().map(|v| (v, url.clone())).collect();
    env.push(("NO_PROXY", direct.clone()));
    env.push(("no_proxy", direct));
    env.push(("NODE_USE_ENV_PROXY", "1".to_owned()));
    env
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
    // Its own /proc: the processes of its PID namespace only (the launcher made CAP_SYS_ADMIN
    // of the sandbox's user namespace ambient for this; `enter` drops it).
    if plan.is_some() {
        use rustix::mount::{mount, MountFlags};
        let flags = MountFlags::NOSUID | MountFlags::NODEV | MountFlags::NOEXEC;
        if let Err(e) = mount("proc", "/proc", "proc", flags, c"") {
            return fail(missing(F_PROC, format!("mount proc on /proc: {e}")));
        }
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
            // With the proxy, HTTP clients are pointed at it (unless the block says otherwise).
            if let Network::Proxy { connect, .. } = &plan.network {
                for (var, value) in proxy_env(connect) {
                    if std::env::var_os(var).is_none() {
                        cmd.env(var, value);
                    }
                }
            }
            cmd
        }
        None => std::process::Command::new(&argv[0]),
    };
    cmd.env_remove(DOOR_TOKEN_ENV);
    let server = match cmd.args(&argv[1..]).spawn() {
        Ok(c) => c,
        // No such program (or no such interpreter on its `#!` line): said as such, without a
        // word of the sandbox, which has nothing to do with it.
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
            // A shell's status for a command not found.
            const EXIT_NOT_FOUND: u8 = 127;
            let program = plan
                .as_ref()
                .map_or_else(|| PathBuf::from(&argv[0]), |p| p.program.clone());
            let command = program.to_string_lossy().into_owned();
            let words = if program.is_file() {
                format!("{command}: its #! line names an interpreter that does not exist")
            } else {
                crate::plan::find_command(&command, std::env::var_os("PATH").as_deref())
                    .err()
                    .unwrap_or(crate::plan::CommandNotFound::NoSuchFile { command })
                    .to_string()
            };
            if name.is_empty() {
                say(format_args!("maven: {words}"));
            } else {
                say(format_args!("maven: {name}: {words}"));
            }
            return ExitCode::from(EXIT_NOT_FOUND);
        }
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
    // 5. seccomp: the sockets Landlock's TCP rules do not see, vsock, socket diagnostics, and
    // UDP in a network namespace of its own.
    seccomp(plan.network.own_namespace())?;
    // 6. Landlock.
    // TCP is handled without network (nothing allowed) and with denied ports; a proxied
    // server's own namespace holds nothing but Maven's listeners.
    let tcp = match plan.network {
        Network::None => true,
        Network::Proxy { .. } => false,
        Network::Direct => !plan.deny_ports.is_empty(),
    };
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
    // 7. no capability now, none at exec: the init holds only the ambient CAP_SYS_ADMIN it
    // mounted /proc with; its uid is not 0 in the sandbox's user namespace (0 is not even
    // mapped), so with the ambient set cleared and `no_new_privs` no exec can grant one.
    use rustix::thread::{CapabilitySet, CapabilitySets};
    rustix::thread::clear_ambient_capability_set().map_err(|e| missing(F_CAPS, e))?;
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
        // A granted path that does not exist grants nothing (Landlock skips it too); one
        // behind a link refuses the start. What is bound is the object opened here.
        let Some(fd) = open_granted(plan, p)? else {
            continue;
        };
        let dir = rustix::fs::fstat(&fd).is_ok_and(|st| {
            rustix::fs::FileType::from_raw_mode(st.st_mode) == rustix::fs::FileType::Directory
        });
        keep.push((p.as_path(), fd, dir));
    }
    // Outermost first, so that a path inside a directory bound back is seen to be there.
    keep.sort_by_key(|(p, ..)| p.components().count());
    let flags = MountFlags::NOSUID | MountFlags::NODEV | MountFlags::NOEXEC;
    let id_dir: Option<&Path> = hidden.iter().copied().find(|d| d.is_dir());
    for dir in hidden {
        // Not there (or already under an outer cover and not granted): nothing to hide.
        if !dir.is_dir() {
            continue;
        }
        let m = |e: &dyn std::fmt::Display| missing(F_MOUNT, format!("{}: {e}", dir.display()));
        mount("tmpfs", dir, "tmpfs", flags, c"mode=0755,size=64k").map_err(|e| m(&e))?;
        let mut bound: Vec<&Path> = Vec::new();
        for (p, fd, is_dir) in &keep {
            // Inside a directory already bound back, a granted path is there as it is: binding
            // it again would make its mount point inside the owner's own directory.
            if !p.starts_with(dir) || bound.iter().any(|b| p.starts_with(b)) {
                continue;
            }
            if *is_dir {
                bound.push(p);
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
                // Only ever in the empty cover: never truncate what is there.
                match std::fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .open(p)
                {
                    Ok(_) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                    Err(e) => return Err(m(&e)),
                }
            }
            let src = format!("/proc/self/fd/{}", std::os::fd::AsRawFd::as_raw_fd(fd));
            // Recursive: a mount below a granted directory comes along (a plain bind of a tree
            // with mounts the namespace cannot unveil fails with EINVAL).
            mount_bind_recursive(src.as_str(), *p).map_err(|e| m(&e))?;
        }
        if Some(dir) == id_dir {
            // The sandbox's own machine id, in the cover, bound over the machine's below.
            std::fs::write(dir.join(MACHINE_ID), machine_id()).map_err(|e| m(&e))?;
        }
        mount_remount(dir, flags | MountFlags::RDONLY, "").map_err(|e| m(&e))?;
    }
    if let Some(dir) = id_dir {
        let ours = dir.join(MACHINE_ID);
        for theirs in ["/etc/machine-id", "/var/lib/dbus/machine-id"] {
            if Path::new(theirs).exists() {
                rustix::mount::mount_bind(&ours, theirs)
                    .map_err(|e| missing(F_UTS, format!("{theirs}: {e}")))?;
            }
        }
    }
    Ok(())
}

/// The file that holds a sandbox's machine id, in the first directory it covers.
const MACHINE_ID: &str = ".maven-machine-id";

/// A machine id of the sandbox's own (32 hexadecimal digits, new at each start): never the
/// machine's, which identifies the owner's computer to whoever reads it.
fn machine_id() -> String {
    use std::io::Read as _;
    let mut b = [0u8; 16];
    let got = std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut b));
    if got.is_err() {
        // Still not the machine's: the start time and this process.
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos();
        b = (t ^ u128::from(std::process::id())).to_le_bytes();
    }
    let mut s: String = b.iter().map(|x| format!("{x:02x}")).collect();
    s.push('\n');
    s
}

/// A path the plan grants, opened as it will be bound and given to Landlock: the system's
/// directories and devices as named (their links are the system's own: `/lib` → `usr/lib`),
/// every other path without following a link on the way. `None`: it does not exist.
fn open_granted(plan: &Plan, p: &Path) -> Result<Option<std::os::fd::OwnedFd>, Missing> {
    use rustix::fs::{Mode, OFlags};
    if crate::plan::system(p) || plan.devices.iter().any(|d| d == p) {
        return Ok(rustix::fs::open(p, OFlags::PATH | OFlags::CLOEXEC, Mode::empty()).ok());
    }
    crate::nolink::open(p).map_err(|r| missing(F_GRANT, r.words(plan.owner_home.as_deref())))
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
            // list names directories some systems lack); one behind a link refuses the start.
            let Some(fd) = open_granted(plan, p)? else {
                continue;
            };
            let Ok(st) = rustix::fs::fstat(&fd) else {
                continue;
            };
            let dir =
                rustix::fs::FileType::from_raw_mode(st.st_mode) == rustix::fs::FileType::Directory;
            let access = if dir { on_dir } else { on_file };
            rs = rs
                .add_rule(PathBeneath::new(fd, access))
                .map_err(|e| missing(F_LANDLOCK, format!("{}: {e}", p.display())))?;
        }
    }
    if plan.network == Network::Direct && !plan.deny_ports.is_empty() {
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
/// mediate and could still reach a local port — MPTCP (it falls back to plain TCP) and SCTP
/// over IPv4 and IPv6, raw and packet sockets — for vsock, which no network namespace bounds
/// (on a virtual machine it reaches the hypervisor's services), and for socket diagnostics
/// (`AF_NETLINK`, `NETLINK_SOCK_DIAG`: the list of the namespace's sockets, with `direct` the
/// machine's). With a network namespace of its own (`own_namespace`: no network, or the
/// proxy), UDP (`AF_INET`/`AF_INET6` datagram sockets, ping sockets included) fails with
/// EACCES too: nothing there answers it, and name resolution goes through the proxy. With
/// `direct` UDP stays: name resolution needs it. io_uring, whose socket and connect operations
/// bypass seccomp, fails with EACCES. A call from another ABI kills the process (seccompiler's
/// architecture check).
fn seccomp(own_namespace: bool) -> Result<(), Missing> {
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
        let mut kinds = vec![libc::SOCK_RAW, 10];
        if own_namespace {
            kinds.push(libc::SOCK_DGRAM);
        }
        for kind in kinds {
            // The type's low bits; SOCK_NONBLOCK and SOCK_CLOEXEC are flags above them.
            socket_rules.push(vec![
                cond(0, Op::Eq, family),
                cond(1, Op::MaskedEq(0xf), kind as u64),
            ]);
        }
    }
    socket_rules.push(vec![cond(0, Op::Eq, libc::AF_PACKET as u64)]);
    socket_rules.push(vec![cond(0, Op::Eq, libc::AF_VSOCK as u64)]);
    socket_rules.push(vec![
        cond(0, Op::Eq, libc::AF_NETLINK as u64),
        cond(2, Op::Eq, libc::NETLINK_SOCK_DIAG as u64),
    ]);
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
    install(rules, libc::EACCES)
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
            network: Network::None,
            door: None,
            deny_ports: vec![],
            memory: crate::DEFAULT_MEMORY,
            processes: crate::DEFAULT_PROCESSES,
            disk: crate::DEFAULT_DISK,
            shown_read: vec![],
            owner_write: vec![],
            owner_home: None,
            absent: vec![],
            uid: None,
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
    fn a_proxied_server_is_pointed_at_the_proxy() {
        let ep = |s: &str| crate::Endpoint::parse(s).unwrap();
        let env = proxy_env(&[
            ep("127.0.0.1:5432"),
            ep("10.0.0.5:5432"),
            ep("10.0.0.5:6379"),
        ]);
        let get = |k: &str| env.iter().find(|(v, _)| *v == k).map(|(_, x)| x.as_str());
        for var in PROXY_VARS {
            assert_eq!(get(var), Some("http://127.0.0.1:3128"), "{var}");
        }
        assert_eq!(get("NO_PROXY"), Some("localhost,127.0.0.1,::1,10.0.0.5"));
        assert_eq!(get("no_proxy"), get("NO_PROXY"));
        assert_eq!(get("NODE_USE_ENV_PROXY"), Some("1"));
        assert_eq!(get(DOOR_TOKEN_ENV), None);
        assert_eq!(
            proxy_env(&[])
                .iter()
                .find(|(v, _)| *v == "NO_PROXY")
                .map(|(_, x)| x.as_str()),
            Some("localhost,127.0.0.1,::1")
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
