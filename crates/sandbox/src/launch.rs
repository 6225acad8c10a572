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

use crate::plan::Plan;

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

/// What the daemon can check in its own process, without restricting itself: Landlock's ABI
/// (a ruleset is created, never applied), whether user namespaces are allowed, and seccomp for
/// a root daemon. The launcher checks everything again and fails closed.
pub fn probe() -> Result<(), Missing> {
    ruleset(true)?;
    let read = |p: &str| std::fs::read_to_string(p).ok().map(|s| s.trim().to_owned());
    if read("/proc/sys/user/max_user_namespaces").as_deref() == Some("0") {
        return Err(missing(F_USERNS, "user.max_user_namespaces is 0"));
    }
    let root = rustix::process::geteuid().is_root();
    if !root && read("/proc/sys/kernel/unprivileged_userns_clone").as_deref() == Some("0") {
        return Err(missing(F_USERNS, "kernel.unprivileged_userns_clone is 0"));
    }
    if root {
        let status = read("/proc/self/status").unwrap_or_default();
        if !status.lines().any(|l| l.starts_with("Seccomp:")) {
            return Err(missing(F_SECCOMP, "the kernel has no seccomp"));
        }
    }
    Ok(())
}

/// The launcher's entry: `args` are what follows `__sandbox-exec`. Returns only on failure
/// (the server is never run then).
pub fn launch(args: Vec<OsString>) -> ExitCode {
    let (plan, argv) = match parse(args) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("maven sandbox: {e}");
            return ExitCode::from(EXIT_SANDBOX);
        }
    };
    let e = match enter(&plan) {
        Ok(()) => {
            let mut cmd = std::process::Command::new(&plan.program);
            cmd.arg0(&argv[0])
                .args(&argv[1..])
                .env("HOME", &plan.home)
                .env("TMPDIR", &plan.tmp)
                .current_dir(&plan.home);
            let err = cmd.exec();
            missing(
                "the server's program to start",
                format!("{}: {err}", plan.program.display()),
            )
        }
        Err(e) => e,
    };
    eprintln!("maven sandbox: {}: {e}", plan.server);
    ExitCode::from(EXIT_SANDBOX)
}

fn parse(args: Vec<OsString>) -> Result<(Plan, Vec<OsString>), String> {
    let mut it = args.into_iter();
    let plan = it.next().ok_or("missing the plan")?;
    let plan = plan.to_str().ok_or("the plan is not UTF-8")?;
    let plan: Plan = serde_json::from_str(plan).map_err(|e| format!("unreadable plan: {e}"))?;
    if it.next().as_deref() != Some(std::ffi::OsStr::new("--")) {
        return Err("expected -- after the plan".to_owned());
    }
    let argv: Vec<OsString> = it.collect();
    if argv.is_empty() {
        return Err("missing the command after --".to_owned());
    }
    Ok((plan, argv))
}

/// Steps 1–7 (see the module doc).
fn enter(plan: &Plan) -> Result<(), Missing> {
    let root = rustix::process::geteuid().is_root();
    let (uid, gid) = (
        rustix::process::geteuid().as_raw(),
        rustix::process::getegid().as_raw(),
    );
    if root {
        nix::unistd::setgroups(&[]).map_err(|e| missing(F_IDS, e))?;
        let nobody = nix::unistd::Uid::from_raw(NOBODY);
        let zero = nix::unistd::Uid::from_raw(0);
        nix::unistd::setresuid(nobody, zero, zero).map_err(|e| missing(F_IDS, e))?;
    }
    // 2. namespaces.
    use nix::sched::CloneFlags;
    let mut flags = CloneFlags::CLONE_NEWUSER | CloneFlags::CLONE_NEWNS | CloneFlags::CLONE_NEWIPC;
    if !plan.network {
        flags |= CloneFlags::CLONE_NEWNET;
    }
    nix::sched::unshare(flags).map_err(|e| missing(F_USERNS, format!("unshare: {e}")))?;
    let write = |file: &str, text: String| {
        std::fs::write(file, text).map_err(|e| missing(F_USERNS, format!("{file}: {e}")))
    };
    write("/proc/self/setgroups", "deny".to_owned())?;
    write("/proc/self/uid_map", format!("{uid} {uid} 1"))?;
    write("/proc/self/gid_map", format!("{gid} {gid} 1"))?;
    // 3. mounts.
    hide(plan)?;
    // 4. limits, inside the new user namespace so the process count is the sandbox's own.
    use rustix::process::{setrlimit, Resource, Rlimit};
    for (res, n) in [
        (Resource::Nproc, plan.processes),
        (Resource::As, plan.memory),
        (Resource::Core, 0),
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
    // 5. seccomp for a root daemon.
    if root {
        deny_setuid()?;
    }
    // 6. Landlock.
    // TCP is handled without network (nothing allowed) and with denied ports.
    let tcp = !plan.network || !plan.deny_ports.is_empty();
    let status = ruleset(tcp)
        .and_then(|rs| rules(rs, plan))?
        .restrict_self()
        .map_err(|e| missing(F_LANDLOCK, e))?;
    if status.ruleset != RulesetStatus::FullyEnforced || !status.no_new_privs {
        return Err(missing(
            F_LANDLOCK,
            format!("the ruleset is {:?}", status.ruleset),
        ));
    }
    // 7. no capability now, none at exec.
    use rustix::thread::{CapabilitiesSecureBits as B, CapabilitySet, CapabilitySets};
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
    Ok(())
}

/// Step 3: `/` and below private; each hidden directory, outermost first, covered by an
/// empty tmpfs (read-only once filled), and every path the plan grants that lies inside it
/// (the private directory, a `read` or `write` path, the command's directory) mounted back at
/// its own path. The paths are opened before anything is covered.
fn hide(plan: &Plan) -> Result<(), Missing> {
    use rustix::fs::{Mode, OFlags};
    use rustix::mount::MountPropagationFlags as P;
    use rustix::mount::{mount, mount_bind, mount_change, mount_remount, MountFlags};
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
            mount_bind(src.as_str(), *p).map_err(|e| m(&e))?;
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
        // With network every TCP port is allowed but the denied ones (the page's): Landlock
        // rules only ever allow.
        for port in 0..=u16::MAX {
            let access = if plan.deny_ports.contains(&port) {
                AccessNet::BindTcp.into()
            } else {
                AccessNet::from_all(abi)
            };
            rs = rs
                .add_rule(NetPort::new(port, access))
                .map_err(|e| missing(F_LANDLOCK, format!("port {port}: {e}")))?;
        }
    }
    Ok(rs)
}

/// Step 5: `setuid`, `setreuid`, `setresuid` fail with EPERM; a call from another ABI
/// kills the process (seccompiler's architecture check).
fn deny_setuid() -> Result<(), Missing> {
    use seccompiler::{BpfProgram, SeccompAction, SeccompFilter, SeccompRule, TargetArch};
    use std::collections::BTreeMap;
    let s = |e: &dyn std::fmt::Display| missing(F_SECCOMP, e);
    let mut nrs = vec![libc::SYS_setuid, libc::SYS_setreuid, libc::SYS_setresuid];
    if cfg!(target_arch = "x86_64") {
        // The x32 ABI shares the architecture value: its numbers carry bit 30.
        const X32: i64 = 0x4000_0000;
        nrs.extend([105 | X32, 113 | X32, 117 | X32]);
    }
    let rules: BTreeMap<i64, Vec<SeccompRule>> = nrs.into_iter().map(|n| (n, vec![])).collect();
    let arch = TargetArch::try_from(std::env::consts::ARCH).map_err(|e| s(&e))?;
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )
    .map_err(|e| s(&e))?;
    let prog: BpfProgram = filter
        .try_into()
        .map_err(|e: seccompiler::BackendError| s(&e))?;
    seccompiler::apply_filter(&prog).map_err(|e| s(&e))
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
            owner_read: vec![],
            owner_write: vec![],
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
