//! The sandbox of a local server (X-1..X-4): `Policy` (a block's `sandbox` key), `Plan` (the
//! policy resolved for one server on this machine) and the launcher.
//!
//! **Why this mechanism.** The workspace forbids `unsafe`, and a sandbox must be entered by the
//! process it confines, before the server's program runs; forking without `exec` is `unsafe`. So
//! nothing forks without executing this binary again: the mcp crate spawns `maven __sandbox-exec
//! PLAN -- command args…` like any command. That launcher — single-threaded, before any runtime —
//! enters new user, mount, IPC, UTS and PID (and, but for `"network": "direct"`, network)
//! namespaces (a root
//! daemon's launcher makes the mounts as root, then takes the server's own uid and gid for good,
//! and only then makes its user namespace), makes the mounts while it still holds its
//! namespace's capabilities, sets the host name, and starts `maven __sandbox-init PLAN --
//! command args…`, which is pid 1 of the new PID namespace and mounts its own `/proc` with the
//! one capability made ambient for it (`CAP_SYS_ADMIN` of the sandbox's user namespace). The
//! init has the launcher's death as its death signal, leaves the daemon's
//! session (`setsid`: no controlling terminal), applies the limits, seccomp, Landlock and the
//! capability drop to itself, closes every descriptor but 0–2, starts the server and reaps
//! whatever is re-parented to it; when the server exits, the init exits the same way and the
//! kernel kills every other process of the namespace. The launcher waits for the init; it notices
//! within a second when the daemon is gone (its parent changes) and kills the init; the daemon
//! stopping a server kills the launcher's process group, which takes the init with it. An
//! unsandboxed block goes through `maven __group-exec -- command args…`: the same launcher and
//! init with only a PID namespace (in a user namespace mapping the owner to itself when the daemon
//! is not root), so that no process of any server outlives it. Each kernel mechanism does what it
//! does best, all through safe wrappers:
//!
//! - **Landlock** (the `landlock` crate, ABI 6 required as a hard requirement, no best effort) is
//!   the file boundary: read and execute of the system directories; the command's directory, or
//!   its installation prefix when it is in a `bin/` — narrowed to `bin/` and the prefix's `lib`,
//!   `lib64`, `libexec` when the prefix is the owner's home, above it, or holds one of
//!   `sandbox::CREDENTIALS` (`~/.cargo/credentials.toml`, `~/.ssh`, shell histories, …) — both as
//!   named and with links resolved, and the same for a script's `#!` interpreter, through `env`
//!   (a Python virtual environment — a project's, pipx's, `uv tool`'s — is such a prefix, so its
//!   `pyvenv.cfg` and `site-packages` come with its `bin/`); every existing file named by an
//!   absolute path in the arguments; the outermost `node_modules` directory above the program
//!   or such a file, as named and with links resolved ("its packages": `npm install --prefix
//!   DIR P` runs as `DIR/node_modules/.bin/NAME`, whose program imports `DIR/node_modules`),
//!   unless it would cover the owner's credentials; the `read` list. Every file
//!   right on the private directory and the `write` list; read and write of `/dev/null` and the
//!   random devices. It also scopes signals and abstract UNIX sockets to the sandbox, restricts
//!   ptrace to it (always), and handles TCP bind and connect (ABI 4) where the network namespace
//!   does not do it: with no network nothing is allowed; with the direct network every port but
//!   the page's bound port is (Landlock rules only allow, so this is 65,536 port rules, the bulk
//!   of such a start; see BENCHMARKS.md); through Maven's proxy TCP is not handled (the
//!   namespace holds nothing but Maven's listeners).
//! - **seccomp** (`seccompiler`), in every sandbox: `socket()` fails with `EACCES` for what
//!   Landlock's TCP rules do not see and could still reach a local port — MPTCP (which falls back
//!   to TCP) and SCTP over IPv4 and IPv6, raw and packet sockets — for vsock (no network
//!   namespace bounds it) and socket diagnostics (`NETLINK_SOCK_DIAG`, every socket of the
//!   machine with its owner), and, in a network namespace of its own, for UDP (`"direct"` keeps
//!   it for name resolution); io_uring (whose socket operations bypass seccomp) is refused.
//! - **User namespace** (`nix::sched::unshare`; rustix's is `unsafe`), with the owner's uid and
//!   gid mapped to themselves: the server keeps its uid, gains nothing, and gets a mount, IPC, PID
//!   and (but for `"direct"`) network namespace of its own without privilege. The network
//!   namespace has only loopback: without network it is down and TCP is refused by Landlock
//!   (`EACCES`); through Maven (the default) the launcher brings it up, binds Maven's proxy at
//!   `sandbox::PROXY` and each `connect` endpoint there, and hands the listening sockets to the
//!   daemon's door (module `door`: a token from its environment, the descriptors over a Unix
//!   socket); either way there is no route anywhere, abstract sockets are the namespace's, and
//!   the host's loopback services (the page included) are unreachable.
//! - **PID namespace**: no process outside the sandbox exists for the server (`ESRCH`), and all of
//!   its processes end with it, `setsid` and double forks included.
//! - **Mount namespace**: Landlock does not mediate `connect()` to a pathname UNIX socket on the
//!   kernels this runs on (path lookup needs no Landlock right), so the places where such sockets
//!   live are covered by empty read-only tmpfs mounts — the data directory, the owner's home,
//!   `/tmp`, `/var/tmp`, `/run` and `/dev/shm` — outermost first, and every path the plan grants
//!   inside one (the private directory, a `read` or `write` path, the command's directory) is
//!   opened before anything is covered and bind-mounted back, recursively (with the mounts below
//!   it), at its own path. `DATA/maven.sock`, the database, the lock, the other servers'
//!   directories, an ssh or gpg agent's socket, X11's and the D-Bus session bus do not exist for
//!   the server (`ENOENT`). The IPC server's peer check (below) refuses it regardless.
//! - **Limits**: `RLIMIT_NPROC` is counted per (user namespace, uid) since Linux 5.14, so set after
//!   the `unshare` it bounds the server's own processes and threads, not all of the owner's.
//!   The kernel never applies it to a real uid of 0, and a root daemon's servers have none: each
//!   runs as a uid and gid of its own (`sandbox::FIRST_SERVER_UID`, allocated by
//!   `sandbox::prepare`, kept by the owner of its private directory), real, effective and saved,
//!   mapped to itself in its user namespace, where 0 is not mapped at all; a grant that uid
//!   cannot use as granted refuses the start (no idmapped mount: `mount_setattr` has no safe
//!   wrapper). `RLIMIT_AS` bounds memory per process (address space: a
//!   bound on a runaway, not on the working set; "memory bounded per process" in the trust line),
//!   `RLIMIT_CORE` is 0, `RLIMIT_FSIZE` is the disk bound in force, and the launcher measures
//!   what the server occupies — its private directory, and the deleted files its processes hold
//!   open, read through the machine's `/proc` kept open before the server's own was mounted —
//!   every 250 ms at least, and stops a server over the bound (module `disk`: `sandbox.disk`, or
//!   less when the file system has less room beyond what is kept for the store).
//! - **No privilege gain**: `no_new_privs` (setuid bits and file capabilities do nothing), the
//!   init's uid is never 0 in the sandbox's user namespace, its ambient set is cleared and every
//!   capability dropped before `exec`.
//! - **No link followed**: `sandbox::prepare` makes the private directory and its `tmp` level by
//!   level with `mkdirat`/`openat(O_NOFOLLOW)` and `fchmod` on the opened descriptor; a planted
//!   link is refused with the path named. Every other granted path but the system's is opened
//!   with `openat2(RESOLVE_NO_SYMLINKS)` (module `nolink`) when the plan is made and at every
//!   start, and the descriptor opened is what is bound and given to Landlock.
//! - **Its own names**: its own `/proc`, a UTS namespace with the host name `maven-sandbox`, and a
//!   machine id of its own bound over `/etc/machine-id`.
//!
//! What may never be written is decided before any of this, when the configuration is read
//! (`sandbox::shared_code`, `sandbox::own_code`, called by `config`): a `write` over the server's
//! own program or script, or (without `allow_shared_code`) over a directory other programs load
//! code from.
//!
//! Not chosen: bubblewrap (a setuid or userns helper that must be installed, and one more parser of
//! our arguments), seccomp as the file boundary (cannot see paths), cgroups (not delegated to an
//! unprivileged owner, nor here: memory is bounded per process and the trust line says so).
//!
//! **Fail closed.** Every step of the launcher either succeeds or ends the launch with a message
//! naming what is missing; the server's program is executed only after all of them. The daemon
//! calls `sandbox::probe` once at start (a Landlock ruleset is created and never applied, the
//! user-namespace sysctls read) and `confine` does not start a sandboxed block when it fails, or
//! when the plan cannot be made (a path is inside the data directory): `maven mcp status` shows
//! the state `not started: its sandbox cannot be applied` and the reason, ending with
//! `"sandbox": false` being the owner's explicit choice. A command that does not exist is no
//! sandbox matter (`sandbox::find_command`, `sandbox::CommandNotFound`): sandboxed or not, the
//! block is not started, with the state `not started: command not found` and `command not
//! found: NAME (not on PATH: …)` or `command not found: /x/y (no such executable file)`, and
//! no word of the sandbox.

// Policy code: a failure is an error value, never a panic. Tests may.
#![warn(clippy::expect_used, clippy::panic)]

mod disk;
pub mod door;
mod ids;
mod launch;
mod net;
mod netlink;
mod nolink;
mod plan;
mod shared;

pub use ids::{server_uid, FIRST_SERVER_UID, SERVER_UIDS};
pub use launch::{bounds, close_inherited, group, hidden, init, launch, probe, Missing, HOSTNAME};
pub use net::{Endpoint, Network, DOOR_TOKEN_ENV, PROXY};
pub use nolink::Refusal;
pub use plan::{
    find_command, prepare, private_dir, CommandNotFound, Context, Grant, Plan, PlanError, Policy,
    Why, CREDENTIALS, DEFAULT_DISK, DEFAULT_MEMORY, DEFAULT_PROCESSES, DEVICES, GROUP_ARG, HIDDEN,
    INIT_ARG, LAUNCHER_ARG, MAX_PROCESSES, MIN_DISK, MIN_MEMORY, SYSTEM_READ,
};
pub use shared::{own_code, shared_code, SHARED_CODE};
