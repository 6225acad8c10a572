//! `maven service install | uninstall | status` in a temporary `XDG_CONFIG_HOME`: the unit's
//! content (checked by `systemd-analyze verify` where that tool exists), refusing to overwrite
//! or remove a unit Maven did not write, and uninstall.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::support::maven;

fn service(xdg: &Path, args: &[&str]) -> Output {
    maven()
        .env("XDG_CONFIG_HOME", xdg)
        .arg("service")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Checks the unit with `systemd-analyze verify`; skips (and says so) where the tool is missing
/// or cannot start its manager here.
fn verify(unit: &Path) {
    let out = match Command::new("systemd-analyze")
        .arg("verify")
        .arg(unit)
        .env("SYSTEMD_LOG_LEVEL", "warning")
        .output()
    {
        Ok(o) => o,
        Err(e) => {
            println!("skipped systemd-analyze verify: {e}");
            return;
        }
    };
    let err = text(&out.stderr);
    if err.contains("Failed to initialize manager") {
        println!("skipped systemd-analyze verify: {err}");
        return;
    }
    assert!(
        out.status.success() && err.trim().is_empty(),
        "systemd-analyze verify: {err}"
    );
}

#[test]
fn install_status_refuse_and_uninstall() {
    let tmp = tempfile::tempdir().unwrap();
    let xdg = tmp.path().join("xdg config");
    let unit: PathBuf = xdg.join("systemd/user/maven.service");

    let st = service(&xdg, &["status"]);
    assert!(st.status.success());
    assert!(
        text(&st.stdout).starts_with("not installed"),
        "{}",
        text(&st.stdout)
    );

    // --config and --data as given, made absolute; a space is quoted, a % doubled.
    let data = tmp.path().join("my data/%h");
    let out = maven()
        .env("XDG_CONFIG_HOME", &xdg)
        .current_dir(tmp.path())
        .args(["--config", "conf.json", "--data"])
        .arg(&data)
        .args(["service", "install", "--user"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let said = text(&out.stdout);
    assert!(
        said.contains(&format!("wrote {}", unit.display())),
        "{said}"
    );
    assert!(said.contains("systemctl --user daemon-reload"), "{said}");
    assert!(
        said.contains("systemctl --user enable --now maven.service"),
        "{said}"
    );

    let body = std::fs::read_to_string(&unit).unwrap();
    let exe = std::fs::canonicalize(env!("CARGO_BIN_EXE_maven")).unwrap();
    let exe_seen = std::fs::canonicalize(
        body.lines()
            .find_map(|l| l.strip_prefix("ExecStart="))
            .unwrap()
            .split(' ')
            .next()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(exe_seen, exe);
    assert!(
        body.starts_with("# Written by `maven service install`"),
        "{body}"
    );
    for line in [
        "Type=notify",
        "Restart=on-failure",
        "WantedBy=default.target",
        "NotifyAccess=main",
    ] {
        assert!(body.lines().any(|l| l == line), "no {line} in {body}");
    }
    let exec = body.lines().find(|l| l.starts_with("ExecStart=")).unwrap();
    let conf = tmp.path().join("conf.json");
    let want_tail = format!(
        " --config {} --data \"{}\" daemon",
        conf.display(),
        data.display().to_string().replace('%', "%%")
    );
    assert!(
        exec.ends_with(&want_tail),
        "{exec} does not end with {want_tail}"
    );
    verify(&unit);

    let st = service(&xdg, &["status"]);
    assert!(
        text(&st.stdout).starts_with("installed: "),
        "{}",
        text(&st.stdout)
    );
    assert!(text(&st.stdout).contains("written by maven"));

    // Ours: a second install updates it.
    let again = service(&xdg, &["install"]);
    assert!(again.status.success());
    assert!(text(&again.stdout).starts_with("updated "));

    // Uninstall removes it, and says what to run.
    let un = service(&xdg, &["uninstall"]);
    assert!(un.status.success(), "{}", text(&un.stderr));
    assert!(text(&un.stdout).contains("systemctl --user disable --now maven.service"));
    assert!(!unit.exists());
    let un = service(&xdg, &["uninstall"]);
    assert!(un.status.success());
    assert!(text(&un.stdout).starts_with("not installed"));
}

#[test]
fn a_unit_maven_did_not_write_is_never_overwritten_nor_removed() {
    let tmp = tempfile::tempdir().unwrap();
    let xdg = tmp.path().join("xdg");
    let unit = xdg.join("systemd/user/maven.service");
    std::fs::create_dir_all(unit.parent().unwrap()).unwrap();
    let theirs = "[Service]\nExecStart=/usr/local/bin/maven daemon\n";
    std::fs::write(&unit, theirs).unwrap();

    for cmd in ["install", "uninstall"] {
        let out = service(&xdg, &[cmd]);
        assert_eq!(out.status.code(), Some(1), "{cmd}");
        let err = text(&out.stderr);
        assert!(err.contains(&unit.display().to_string()), "{err}");
        assert!(
            err.contains("was not written by `maven service install`"),
            "{err}"
        );
        assert_eq!(std::fs::read_to_string(&unit).unwrap(), theirs);
    }
    let st = service(&xdg, &["status"]);
    assert!(st.status.success());
    assert!(text(&st.stdout).starts_with("installed by someone else"));
}

/// The maven binary at `dir/maven` (a hard link, so `current_exe` is that path).
fn maven_at(dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let exe = dir.join("maven");
    if std::fs::hard_link(env!("CARGO_BIN_EXE_maven"), &exe).is_err() {
        std::fs::copy(env!("CARGO_BIN_EXE_maven"), &exe).unwrap();
    }
    exe
}

fn install_with(exe: &Path, xdg: &Path, data: &Path, path: Option<&str>) -> Output {
    let mut c = Command::new(exe);
    c.env_remove("MAVEN_CONFIG")
        .env_remove("MAVEN_DATA")
        .env("XDG_CONFIG_HOME", xdg)
        .arg("--data")
        .arg(data)
        .args(["service", "install"])
        .stdin(Stdio::null());
    if let Some(p) = path {
        c.env("PATH", p);
    }
    c.output().unwrap()
}

#[test]
fn the_unit_runs_exactly_this_binary_or_install_refuses() {
    // Next to the binary, so the hard link works (one file system).
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let data = tmp.path().join("d \"q\" it's \\ $x %y");

    // A `$` in the binary's path stays one `$`: systemd expands no variable there.
    let exe = maven_at(&tmp.path().join("a$b"));
    let xdg = tmp.path().join("xdg1");
    let out = install_with(&exe, &xdg, &data, None);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let unit = xdg.join("systemd/user/maven.service");
    let body = std::fs::read_to_string(&unit).unwrap();
    let exec = body
        .lines()
        .find_map(|l| l.strip_prefix("ExecStart="))
        .unwrap();
    let want = format!(
        "{} --data \"{}/d \\\"q\\\" it's \\\\ $$x %%y\" daemon",
        exe.display(),
        tmp.path().display()
    );
    assert_eq!(exec, want);
    verify(&unit);

    // A quote or a backslash in the binary's path cannot be named: refused, nothing written.
    for dir in ["q'x", "d\"x", "b\\x"] {
        let exe = maven_at(&tmp.path().join(dir));
        let xdg = tmp
            .path()
            .join(format!("xdg-{}", dir.chars().nth(1).unwrap() as u32));
        let out = install_with(&exe, &xdg, &data, None);
        assert_eq!(out.status.code(), Some(2), "{dir}: {}", text(&out.stderr));
        let err = text(&out.stderr);
        assert!(
            err.contains("which systemd refuses in the name of an executable"),
            "{dir}: {err}"
        );
        assert!(!xdg.join("systemd/user/maven.service").exists(), "{dir}");
    }

    // A unit systemd-analyze finds fault with is not installed.
    let fake = tmp.path().join("fakebin");
    std::fs::create_dir_all(&fake).unwrap();
    let tool = fake.join("systemd-analyze");
    std::fs::write(
        &tool,
        "#!/bin/sh\necho 'maven.service:7: bad setting' >&2\nexit 1\n",
    )
    .unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let xdg = tmp.path().join("xdg-verify");
    let path = format!(
        "{}:{}",
        fake.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = install_with(&exe, &xdg, &data, Some(&path));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains(
            "systemd-analyze verify refuses the unit: maven.service:7: bad setting; nothing was written"
        ),
        "{}",
        text(&out.stderr)
    );
    assert!(!xdg.join("systemd/user/maven.service").exists());
}
