//! `maven service install | uninstall | status`: the systemd user unit that runs the daemon.
//!
//! The unit is `$XDG_CONFIG_HOME/systemd/user/maven.service` (`~/.config/...` by default).
//! Maven writes it, marked by its first line, and prints the `systemctl --user` commands to
//! run; it never runs them. A unit without the mark is someone else's: it is never overwritten
//! nor removed.

use crate::exit::{errln, outln};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Subcommand;

use crate::exit::{EXIT_FAILED, EXIT_USAGE};

/// The first line of every unit Maven writes; how it knows a unit is its own.
pub(crate) const MARK: &str =
    "# Written by `maven service install`; `maven service uninstall` removes it.";
/// The unit's file name.
const UNIT: &str = "maven.service";

/// `maven service ...`.
#[derive(Subcommand, Debug)]
pub(crate) enum ServiceCmd {
    /// Write the systemd user unit that runs `maven daemon` (Type=notify, restarted on failure)
    /// with this binary and the --config/--data given here; print the systemctl commands to run.
    /// Never overwrites a unit Maven did not write.
    Install {
        /// A user unit, under $XDG_CONFIG_HOME/systemd/user (the default and, for now, the only
        /// kind)
        #[arg(long)]
        user: bool,
    },
    /// Remove the unit `maven service install` wrote (never another one); print the systemctl
    /// commands to run first.
    Uninstall {
        /// The user unit (the default)
        #[arg(long)]
        user: bool,
    },
    /// Say whether the unit is installed and whether Maven wrote it.
    Status {
        /// The user unit (the default)
        #[arg(long)]
        user: bool,
    },
}

/// The unit's path: `$XDG_CONFIG_HOME/systemd/user/maven.service`.
fn unit_path() -> PathBuf {
    let base = match std::env::var_os("XDG_CONFIG_HOME") {
        Some(v) if !v.is_empty() && Path::new(&v).is_absolute() => PathBuf::from(v),
        _ => PathBuf::from(std::env::var_os("HOME").unwrap_or_else(|| ".".into())).join(".config"),
    };
    base.join("systemd/user").join(UNIT)
}

/// Whether a unit's text is one Maven wrote.
fn is_ours(text: &str) -> bool {
    text.lines().next() == Some(MARK)
}

/// The path as UTF-8 without control characters, or why a unit cannot name it.
fn plain(p: &Path) -> Result<&str, String> {
    let s = p
        .to_str()
        .ok_or_else(|| format!("{} is not UTF-8: a unit cannot name it", p.display()))?;
    if s.chars().any(char::is_control) {
        return Err(format!(
            "{s:?} holds a control character: a unit cannot name it"
        ));
    }
    Ok(s)
}

/// The executable word of `ExecStart=` (systemd.syntax, systemd.service): `%` specifiers
/// doubled, `$` kept (systemd expands no variable in the executable), double-quoted when it
/// holds a space. systemd refuses an executable name with a quote or a backslash in it, and
/// one that is not normalized: such a path cannot be named, and is refused here.
fn exec_path(p: &Path) -> Result<String, String> {
    let s = plain(p)?;
    if let Some(c) = s.chars().find(|c| matches!(c, '"' | '\'' | '\\')) {
        return Err(format!(
            "this binary's path {s:?} holds {c:?}, which systemd refuses in the name of an executable; move or link the binary to a path without quotes or backslashes and run install from there"
        ));
    }
    if !s.starts_with('/')
        || s.contains("//")
        || s.contains("/./")
        || s.contains("/../")
        || s.ends_with("/.")
        || s.ends_with("/..")
    {
        return Err(format!(
            "this binary's path {s:?} is not absolute and normalized, as systemd needs it"
        ));
    }
    let s = s.replace('%', "%%");
    if s.chars().any(char::is_whitespace) {
        Ok(format!("\"{s}\""))
    } else {
        Ok(s)
    }
}

/// An argument word of `ExecStart=`: `%` and `$` doubled (systemd expands specifiers and
/// variables in arguments), double-quoted with `\\` and `\"` escaped when it holds a space,
/// a quote, a backslash or a `;`.
fn exec_arg(p: &Path) -> Result<String, String> {
    let s = plain(p)?.replace('%', "%%").replace('$', "$$");
    if s.is_empty()
        || s.chars()
            .any(|c| c.is_whitespace() || matches!(c, '"' | '\'' | '\\' | ';'))
    {
        Ok(format!(
            "\"{}\"",
            s.replace('\\', "\\\\").replace('"', "\\\"")
        ))
    } else {
        Ok(s)
    }
}

/// The unit's text.
pub(crate) fn unit_text(
    exe: &Path,
    config: Option<&Path>,
    data: Option<&Path>,
) -> Result<String, String> {
    let mut exec = vec![exec_path(exe)?];
    if let Some(c) = config {
        exec.push("--config".into());
        exec.push(exec_arg(c)?);
    }
    if let Some(d) = data {
        exec.push("--data".into());
        exec.push(exec_arg(d)?);
    }
    exec.push("daemon".into());
    Ok(format!(
        "{MARK}
[Unit]
Description=Maven, a personal assistant daemon

[Service]
Type=notify
NotifyAccess=main
ExecStart={exec}
Restart=on-failure
RestartSec=5s
# The daemon pings every half of this while its runtime runs.
WatchdogSec=60s
# Shutdown waits up to 10 s for tasks and 10 s for MCP servers, then flushes its log.
TimeoutStopSec=30s

[Install]
WantedBy=default.target
",
        exec = exec.join(" ")
    ))
}

/// Runs `maven service ...`; `config` and `data` are the global options as given (not their
/// defaults: a unit without them follows the defaults of the service's own environment).
pub(crate) fn run(cmd: ServiceCmd, config: Option<&Path>, data: Option<&Path>) -> ExitCode {
    let path = unit_path();
    match cmd {
        ServiceCmd::Install { user: _ } => install(&path, config, data),
        ServiceCmd::Uninstall { user: _ } => uninstall(&path),
        ServiceCmd::Status { user: _ } => status(&path),
    }
}

fn read(path: &Path) -> Result<Option<String>, ExitCode> {
    match std::fs::read(path) {
        Ok(b) => Ok(Some(String::from_utf8_lossy(&b).into_owned())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => {
            errln!("maven service: cannot read {}: {e}", path.display());
            Err(ExitCode::from(EXIT_FAILED))
        }
    }
}

fn not_ours(path: &Path, what: &str) -> ExitCode {
    errln!(
        "maven service {what}: {} exists and was not written by `maven service install` (its first line is not the mark); it is left as it is. Move it away first if Maven should manage it.",
        path.display()
    );
    ExitCode::from(EXIT_FAILED)
}

fn absolute(p: Option<&Path>, what: &str) -> Result<Option<PathBuf>, ExitCode> {
    p.map(std::path::absolute).transpose().map_err(|e| {
        errln!("maven service install: cannot make {what} absolute: {e}");
        ExitCode::from(EXIT_USAGE)
    })
}

fn install(path: &Path, config: Option<&Path>, data: Option<&Path>) -> ExitCode {
    let existing = match read(path) {
        Ok(t) => t,
        Err(c) => return c,
    };
    if existing.as_deref().is_some_and(|t| !is_ours(t)) {
        return not_ours(path, "install");
    }
    let exe = match std::env::current_exe() {
        Ok(p) => p,
        Err(e) => {
            errln!("maven service install: cannot find this binary's path: {e}");
            return ExitCode::from(EXIT_FAILED);
        }
    };
    let (config, data) = match (absolute(config, "--config"), absolute(data, "--data")) {
        (Ok(c), Ok(d)) => (c, d),
        (Err(c), _) | (_, Err(c)) => return c,
    };
    let text = match unit_text(&exe, config.as_deref(), data.as_deref()) {
        Ok(t) => t,
        Err(e) => {
            errln!("maven service install: {e}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    if let Err(e) = verify(&text) {
        errln!("maven service install: {e}; nothing was written");
        return ExitCode::from(EXIT_FAILED);
    }
    if let Some(dir) = path.parent() {
        if let Err(e) = std::fs::create_dir_all(dir) {
            errln!(
                "maven service install: cannot create {}: {e}",
                dir.display()
            );
            return ExitCode::from(EXIT_FAILED);
        }
    }
    // Written whole, then renamed over: a unit is never half written.
    let tmp = path.with_extension("service.tmp");
    if let Err(e) = std::fs::write(&tmp, &text).and_then(|()| std::fs::rename(&tmp, path)) {
        let _ = std::fs::remove_file(&tmp);
        errln!(
            "maven service install: cannot write {}: {e}",
            path.display()
        );
        return ExitCode::from(EXIT_FAILED);
    }
    let verb = if existing.is_some() {
        "updated"
    } else {
        "wrote"
    };
    outln!("{verb} {}", path.display());
    outln!("to start it now and at every login, run:");
    outln!("  systemctl --user daemon-reload");
    outln!("  systemctl --user enable --now {UNIT}");
    outln!("its log: journalctl --user -u {UNIT}");
    outln!("to keep it running while you are logged out: loginctl enable-linger");
    ExitCode::SUCCESS
}

/// Checks the unit's text with `systemd-analyze verify` where that tool is installed (in a
/// private temporary directory, before anything is written). A tool that is missing, or that
/// cannot start its manager here (a container without systemd), is said on stderr and passes;
/// a unit it finds fault with is refused, with what it said.
fn verify(text: &str) -> Result<(), String> {
    let dir = std::env::temp_dir().join(format!(
        "maven-service-verify-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0)
    ));
    std::fs::create_dir(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let unit = dir.join(UNIT);
    let out = std::fs::write(&unit, text)
        .map_err(|e| format!("cannot write {}: {e}", unit.display()))
        .and_then(|()| {
            std::process::Command::new("systemd-analyze")
                .arg("verify")
                .arg(&unit)
                .env("SYSTEMD_LOG_LEVEL", "warning")
                .stdin(std::process::Stdio::null())
                .output()
                .map_err(|e| format!("systemd-analyze: {e}"))
        });
    let _ = std::fs::remove_dir_all(&dir);
    let out = match out {
        Ok(o) => o,
        Err(e) if e.starts_with("systemd-analyze") => {
            errln!("note: the unit was not checked ({e})");
            return Ok(());
        }
        Err(e) => return Err(e),
    };
    let said = String::from_utf8_lossy(&out.stderr);
    let said = said.trim();
    if said.contains("Failed to initialize manager") {
        errln!("note: the unit was not checked: systemd-analyze cannot run here ({said})");
        return Ok(());
    }
    if !out.status.success() || !said.is_empty() {
        return Err(format!(
            "systemd-analyze verify refuses the unit: {}",
            shown::block(said)
        ));
    }
    Ok(())
}

fn uninstall(path: &Path) -> ExitCode {
    match read(path) {
        Err(c) => c,
        Ok(None) => {
            outln!("not installed: no {}", path.display());
            ExitCode::SUCCESS
        }
        Ok(Some(t)) if !is_ours(&t) => not_ours(path, "uninstall"),
        Ok(Some(_)) => {
            outln!("first stop and disable it:");
            outln!("  systemctl --user disable --now {UNIT}");
            if let Err(e) = std::fs::remove_file(path) {
                errln!(
                    "maven service uninstall: cannot remove {}: {e}",
                    path.display()
                );
                return ExitCode::from(EXIT_FAILED);
            }
            outln!("removed {}", path.display());
            outln!("then run:");
            outln!("  systemctl --user daemon-reload");
            ExitCode::SUCCESS
        }
    }
}

fn status(path: &Path) -> ExitCode {
    match read(path) {
        Err(c) => return c,
        Ok(None) => outln!("not installed: no {}", path.display()),
        Ok(Some(t)) if !is_ours(&t) => outln!(
            "installed by someone else: {} was not written by `maven service install`",
            path.display()
        ),
        Ok(Some(t)) => {
            outln!("installed: {} (written by maven)", path.display());
            if let Some(exec) = t.lines().find(|l| l.starts_with("ExecStart=")) {
                outln!("{}", shown::line(exec));
            }
            outln!("whether it runs: systemctl --user status {UNIT}");
        }
    }
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_executable_and_the_arguments_are_quoted_as_systemd_reads_them() {
        let p = |s: &str| exec_path(Path::new(s));
        let a = |s: &str| exec_arg(Path::new(s)).unwrap();
        assert_eq!(p("/usr/bin/maven").unwrap(), "/usr/bin/maven");
        // No variable is expanded in the executable: `$` stays single.
        assert_eq!(p("/opt/a$b/maven").unwrap(), "/opt/a$b/maven");
        assert_eq!(p("/a b/%h").unwrap(), "\"/a b/%%h\"");
        for bad in [
            "/a/\"q\"",
            "/a/it's",
            "/a/b\\c",
            "/a\nb",
            "rel/maven",
            "/a//b",
            "/a/./b",
        ] {
            assert!(p(bad).is_err(), "{bad}");
        }
        assert_eq!(a("/d/plain"), "/d/plain");
        assert_eq!(a("/a b/%h$x"), "\"/a b/%%h$$x\"");
        assert_eq!(a("/a/$HOME"), "/a/$$HOME");
        assert_eq!(a("/a/\"q\""), "\"/a/\\\"q\\\"\"");
        assert_eq!(a("/a/b\\c"), "\"/a/b\\\\c\"");
        assert_eq!(a("/a/it's;x"), "\"/a/it's;x\"");
        assert!(exec_arg(Path::new("/a\nb")).is_err());
    }

    #[test]
    fn a_unit_is_ours_by_its_first_line() {
        let t = unit_text(Path::new("/bin/maven"), None, None).unwrap();
        assert!(is_ours(&t));
        assert!(!is_ours("[Unit]\n"));
        assert!(!is_ours(&format!("\n{MARK}\n")));
    }
}
