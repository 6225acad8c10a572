//! Local acts by exec: argv, no shell, a minimal environment, a deadline and an output cap.

use std::process::Stdio;
use std::time::Duration;

use tokio::io::AsyncReadExt;

use super::policy::LocalAct;
use super::ran::{Cut, ExecError, Ran};

/// A local act's argv: its command with the router's tail as the last argument (when there
/// is one).
pub(super) fn local_argv(act: &LocalAct, tail: &str) -> Vec<String> {
    let mut argv = act.cmd.clone();
    let tail = tail.trim();
    if !tail.is_empty() {
        argv.push(tail.to_string());
    }
    argv
}

/// Runs a local act with the router's tail as its last argument (when there is one).
pub(super) async fn run_local(act: &LocalAct, tail: &str) -> Result<Ran, ExecError> {
    run_argv(
        &local_argv(act, tail),
        act.timeout,
        usize::try_from(act.max_output).unwrap_or(usize::MAX),
    )
    .await
}

pub(super) fn first_line(s: &str) -> String {
    s.lines().next().unwrap_or("").chars().take(200).collect()
}

/// Runs a program (no shell) with a minimal environment, a deadline and an output cap.
pub async fn run_argv(argv: &[String], timeout: Duration, cap: usize) -> Result<Ran, ExecError> {
    let Some((program, args)) = argv.split_first() else {
        return Err(ExecError::Refused(super::Refusal::EmptyCommand));
    };
    let mut cmd = tokio::process::Command::new(program);
    cmd.args(args)
        .env_clear()
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    for k in ["PATH", "HOME", "LANG"] {
        if let Some(v) = std::env::var_os(k) {
            cmd.env(k, v);
        }
    }
    let mut child = cmd.spawn().map_err(|source| ExecError::Spawn {
        program: program.clone(),
        source,
    })?;
    let mut stdout = child.stdout.take();
    let mut stderr = child.stderr.take();
    let work = async {
        let mut out = Vec::new();
        let mut err = Vec::new();
        let mut total = 0;
        let read_out = async {
            if let Some(s) = stdout.as_mut() {
                total = read_capped(s, cap, &mut out).await;
            }
        };
        let read_err = async {
            if let Some(s) = stderr.as_mut() {
                read_capped(s, 4096, &mut err).await;
            }
        };
        tokio::join!(read_out, read_err);
        let status = child.wait().await;
        (out, total, err, status)
    };
    match tokio::time::timeout(timeout, work).await {
        // It started and was killed: what it did before is unknown.
        Err(_) => Err(ExecError::Unknown {
            who: "the local command".to_owned(),
            reason: format!("{program} did not finish within {timeout:?} and was killed"),
        }),
        Ok((out, total, err, status)) => {
            let status = status.map_err(|source| ExecError::Wait {
                program: program.clone(),
                source,
            })?;
            let shown = out.len().min(cap);
            let text = String::from_utf8_lossy(&out[..shown]).into_owned();
            let cut = (total > cap).then_some(Cut {
                shown,
                total,
                more: false,
            });
            if status.success() {
                Ok(Ran {
                    cut,
                    ..Ran::done(text, true)
                })
            } else {
                let err = String::from_utf8_lossy(&err[..err.len().min(4096)]).into_owned();
                Ok(Ran::done(
                    format!(
                        "{program} failed ({status}): {}",
                        first_line(if err.is_empty() { &text } else { &err })
                    ),
                    false,
                ))
            }
        }
    }
}

/// Reads everything, keeping at most `cap + 1` bytes (the rest is drained and dropped so the
/// child never blocks on a full pipe); returns how many bytes there were.
async fn read_capped<R: tokio::io::AsyncRead + Unpin>(
    r: &mut R,
    cap: usize,
    out: &mut Vec<u8>,
) -> usize {
    let mut buf = [0u8; 8192];
    let mut total = 0usize;
    loop {
        match r.read(&mut buf).await {
            Ok(0) | Err(_) => return total,
            Ok(n) => {
                total = total.saturating_add(n);
                let room = (cap + 1).saturating_sub(out.len());
                out.extend_from_slice(&buf[..n.min(room)]);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn local_commands_run_without_a_shell_with_cap_and_timeout() {
        let argv = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let r = run_argv(
            &argv(&["echo", "a; rm -rf /"]),
            Duration::from_secs(10),
            100,
        )
        .await
        .unwrap();
        assert!(r.ok);
        assert_eq!(r.text, "a; rm -rf /\n", "passed as one argument, no shell");
        let r = run_argv(
            &argv(&["head", "-c", "100000", "/dev/zero"]),
            Duration::from_secs(10),
            10,
        )
        .await
        .unwrap();
        assert_eq!(r.text.len(), 10);
        assert_eq!(
            r.cut.map(|c| c.to_string()).as_deref(),
            Some("[cut: the result had 100000 bytes; the first 10 are shown]")
        );
        let e = run_argv(&argv(&["sleep", "5"]), Duration::from_millis(100), 10)
            .await
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "outcome unknown: the local command may have run it: sleep did not finish within 100ms and was killed"
        );
        let r = run_argv(&argv(&["false"]), Duration::from_secs(10), 10)
            .await
            .unwrap();
        assert!(!r.ok);
        let e = run_argv(&argv(&["/nonexistent/prog"]), Duration::from_secs(10), 10)
            .await
            .unwrap_err();
        assert!(
            e.to_string().starts_with("cannot run /nonexistent/prog:"),
            "{e}"
        );
    }
}
