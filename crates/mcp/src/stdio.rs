//! The stdio transport (M-3): a child process in its own process group, a minimal environment,
//! a bounded line reader on its own task, a writer task, a stderr ring, and a supervisor that
//! closes gracefully (stdin closed → wait → SIGTERM to the group → wait → SIGKILL to the group)
//! and always reaps the child.
//!
//! Tasks (all tracked, all ended by one cancellation token):
//! - reader: bounded `read_until` on stdout → [`Core::on_frame`]; answers to server requests are
//!   queued to the writer. Never blocks on a caller.
//! - writer: a caller writes its frame itself, at once, when the pipe has room and nothing is
//!   queued (no task hop on the hot path); otherwise the whole frame (or the unwritten rest of
//!   it) is queued and the writer task writes it when the pipe drains. Sending is synchronous,
//!   so a caller dropped at any point never leaves half a frame behind; a full queue means the
//!   server stopped reading, and the send fails.
//! - stderr: chunks into a bounded ring, never parsed.
//! - supervisor: owns the `Child`, waits for exit or for the token, runs the shutdown sequence.

use std::collections::{BTreeMap, VecDeque};
use std::os::unix::process::ExitStatusExt as _;
use std::process::Stdio as StdStdio;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncBufReadExt as _, AsyncRead, AsyncReadExt as _, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::error::{CloseReason, Error};
use crate::rpc::{Core, Inbound};
use crate::Limits;

/// When the connection ends, how long stderr is still read for what the server wrote last.
const STDERR_DRAIN: std::time::Duration = std::time::Duration::from_millis(200);

/// Depth of the outgoing frame queue.
const WRITE_QUEUE: usize = 1024;

/// The bounded, never-parsed tail of a child's stderr.
#[derive(Debug, Default)]
pub(crate) struct StderrRing {
    buf: Mutex<VecDeque<u8>>,
    cap: usize,
}

impl StderrRing {
    fn push(&self, bytes: &[u8]) {
        let mut b = self.buf.lock().unwrap_or_else(|p| p.into_inner());
        let bytes = &bytes[bytes.len().saturating_sub(self.cap)..];
        let excess = (b.len() + bytes.len()).saturating_sub(self.cap);
        b.drain(..excess);
        b.extend(bytes);
    }

    pub(crate) fn tail(&self) -> String {
        let b = self.buf.lock().unwrap_or_else(|p| p.into_inner());
        let (a, c) = b.as_slices();
        let mut v = Vec::with_capacity(a.len() + c.len());
        v.extend_from_slice(a);
        v.extend_from_slice(c);
        String::from_utf8_lossy(&v).into_owned()
    }
}

/// The client's side of a running stdio server.
pub(crate) struct StdioLink {
    stdin: Arc<Stdin>,
    token: CancellationToken,
    tracker: TaskTracker,
    pub(crate) stderr: Arc<StderrRing>,
    pub(crate) pid: Option<u32>,
}

impl StdioLink {
    /// Start the child and its tasks. The fork and exec run on the blocking pool, so a daemon
    /// starting many servers at once keeps its async workers free (A-2: boot never waits on a
    /// server).
    pub(crate) async fn spawn(
        command: &str,
        args: &[String],
        env: &BTreeMap<String, String>,
        limits: &Limits,
        core: Arc<Core>,
    ) -> Result<StdioLink, Error> {
        if command.is_empty() {
            return Err(Error::Config("empty command".to_owned()));
        }
        let mut cmd = Command::new(command);
        cmd.args(args)
            .env_clear()
            .stdin(StdStdio::piped())
            .stdout(StdStdio::piped())
            .stderr(StdStdio::piped())
            .kill_on_drop(true)
            .process_group(0);
        for key in ["PATH", "HOME", "LANG"] {
            if let Some(v) = std::env::var_os(key) {
                cmd.env(key, v);
            }
        }
        cmd.envs(env);
        let spawned = tokio::task::spawn_blocking(move || cmd.spawn())
            .await
            .unwrap_or_else(|e| Err(std::io::Error::other(format!("spawn task failed: {e}"))));
        let mut child = spawned.map_err(|source| Error::Spawn {
            command: command.to_owned(),
            source,
        })?;
        let pid = child.id();
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            // Piped above, so all three exist; fail cleanly rather than assume.
            return Err(Error::Spawn {
                command: command.to_owned(),
                source: std::io::Error::other("missing stdio pipe"),
            });
        };
        let token = CancellationToken::new();
        let tracker = TaskTracker::new();
        let ring = Arc::new(StderrRing {
            buf: Mutex::new(VecDeque::new()),
            cap: limits.stderr_ring,
        });
        let pipe = stdin
            .into_owned_fd()
            .and_then(tokio::net::unix::pipe::Sender::from_owned_fd)
            .map_err(|source| Error::Spawn {
                command: command.to_owned(),
                source,
            })?;
        let (tx, rx) = mpsc::channel(WRITE_QUEUE);
        let stdin = Arc::new(Stdin {
            state: Mutex::new(StdinState {
                pipe: Some(Arc::new(pipe)),
                backlog: false,
            }),
            tx,
        });
        let (stdin_done_tx, stdin_done_rx) = tokio::sync::oneshot::channel();
        tracker.spawn(writer(
            stdin.clone(),
            rx,
            token.clone(),
            limits.close_grace,
            stdin_done_tx,
        ));
        tracker.spawn(reader(
            stdout,
            limits.clone(),
            core.clone(),
            stdin.clone(),
            token.clone(),
        ));
        tracker.spawn(stderr_task(stderr, ring.clone(), token.clone()));
        tracker.spawn(supervisor(
            child,
            pid,
            limits.clone(),
            core,
            token.clone(),
            stdin_done_rx,
        ));
        tracker.close();
        Ok(StdioLink {
            stdin,
            token,
            tracker,
            stderr: ring,
            pid,
        })
    }

    /// Send one frame: written at once when the pipe has room and nothing is queued before it
    /// (no task hop), else queued whole for the writer task. Synchronous, so trivially cancel
    /// safe: a frame is never half-written by a dropped caller.
    pub(crate) fn send(&self, frame: Vec<u8>, core: &Core) -> Result<(), Error> {
        self.stdin
            .send(frame)
            .map_err(|()| Error::Closed(core.close_reason().unwrap_or(CloseReason::ServerGone)))
    }

    /// A handle that sends frames to the child (for the subscription task).
    pub(crate) fn sender(&self) -> StdioSender {
        StdioSender(self.stdin.clone())
    }

    /// Begin the shutdown sequence without waiting for it.
    pub(crate) fn shutdown(&self) {
        self.token.cancel();
    }

    /// Run the shutdown sequence to its end (the child reaped).
    pub(crate) async fn close(&self) {
        self.token.cancel();
        self.tracker.wait().await;
    }
}

impl Drop for StdioLink {
    fn drop(&mut self) {
        // The tasks finish the shutdown sequence on their own.
        self.token.cancel();
    }
}

/// A clonable sender of whole frames to the child's stdin.
#[derive(Clone)]
pub(crate) struct StdioSender(Arc<Stdin>);

impl StdioSender {
    /// [`StdioLink::send`].
    pub(crate) fn send(&self, frame: Vec<u8>, core: &Core) -> Result<(), Error> {
        self.0
            .send(frame)
            .map_err(|()| Error::Closed(core.close_reason().unwrap_or(CloseReason::ServerGone)))
    }
}

/// The write side of the child's stdin, shared by callers, the reader (answers to server
/// requests) and the writer task.
struct Stdin {
    state: Mutex<StdinState>,
    tx: mpsc::Sender<Vec<u8>>,
}

struct StdinState {
    /// `None` once closed.
    pipe: Option<Arc<tokio::net::unix::pipe::Sender>>,
    /// Frames are queued for the writer task; new frames must queue behind them. Invariant:
    /// when false, the queue is empty.
    backlog: bool,
}

impl Stdin {
    fn lock(&self) -> std::sync::MutexGuard<'_, StdinState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Write or queue a whole frame. `Err` when stdin is closed, or when the queue is full
    /// (the server stopped reading).
    fn send(&self, frame: Vec<u8>) -> Result<(), ()> {
        let mut st = self.lock();
        let Some(pipe) = st.pipe.as_ref() else {
            return Err(());
        };
        if st.backlog {
            return self.tx.try_send(frame).map_err(|_| ());
        }
        let rest = match pipe.try_write(&frame) {
            Ok(n) if n == frame.len() => return Ok(()),
            Ok(n) => frame[n..].to_vec(),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => frame,
            Err(_) => return Err(()),
        };
        // The queue is empty (invariant), so this cannot be full: the rest of a partly
        // written frame is never lost.
        st.backlog = true;
        self.tx.try_send(rest).map_err(|_| ())
    }

    fn pipe(&self) -> Option<Arc<tokio::net::unix::pipe::Sender>> {
        self.lock().pipe.clone()
    }
}

/// Write all of `bytes` (waiting for room), unless the pipe fails.
async fn write_all(pipe: &tokio::net::unix::pipe::Sender, mut bytes: &[u8]) -> bool {
    while !bytes.is_empty() {
        if pipe.writable().await.is_err() {
            return false;
        }
        match pipe.try_write(bytes) {
            Ok(n) => bytes = &bytes[n..],
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(_) => return false,
        }
    }
    true
}

async fn writer(
    stdin: Arc<Stdin>,
    mut rx: mpsc::Receiver<Vec<u8>>,
    token: CancellationToken,
    grace: std::time::Duration,
    done: tokio::sync::oneshot::Sender<()>,
) {
    // One registration with the token for the task's life, not one per frame.
    let mut cancelled = std::pin::pin!(token.cancelled());
    loop {
        let frame = tokio::select! {
            biased;
            () = &mut cancelled => break,
            f = rx.recv() => match f { Some(f) => f, None => break },
        };
        let Some(pipe) = stdin.pipe() else { break };
        let ok = tokio::select! {
            biased;
            () = &mut cancelled => false,
            ok = write_all(&pipe, &frame) => ok,
        };
        if !ok {
            break;
        }
        let mut st = stdin.lock();
        if rx.is_empty() {
            st.backlog = false;
        }
    }
    // Frames queued before the shutdown (a cancellation notice) still go out, within the
    // grace period; a server that does not read cannot hold the shutdown.
    if let Some(pipe) = stdin.pipe() {
        let flush = async {
            while let Ok(f) = rx.try_recv() {
                if !write_all(&pipe, &f).await {
                    break;
                }
            }
        };
        let _ = tokio::time::timeout(grace, flush).await;
    }
    // Closing stdin (the last handle of the pipe): the first step of a graceful shutdown.
    stdin.lock().pipe = None;
    let _ = done.send(());
}

/// Read one line of at most `cap` bytes (newline excluded) into `line`. The limit is enforced by
/// the reader itself (`take`), so a longer line is never assembled: at most `cap + 1` bytes are
/// ever held. Returns `Ok(None)` at EOF.
///
/// Not cancel safe (bytes already consumed would be lost); it only runs on the reader task,
/// which is never cancelled except at shutdown.
pub(crate) async fn read_frame<R: AsyncRead + Unpin>(
    reader: &mut BufReader<R>,
    line: &mut Vec<u8>,
    cap: usize,
) -> std::io::Result<Option<FrameEnd>> {
    line.clear();
    let limit = u64::try_from(cap).unwrap_or(u64::MAX).saturating_add(1);
    let n = (&mut *reader).take(limit).read_until(b'\n', line).await?;
    if n == 0 {
        return Ok(None);
    }
    if line.last() == Some(&b'\n') {
        line.pop();
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        return Ok(Some(FrameEnd::Newline));
    }
    if line.len() > cap {
        return Ok(Some(FrameEnd::TooLarge));
    }
    Ok(Some(FrameEnd::Eof))
}

/// How a frame read by [`read_frame`] ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FrameEnd {
    /// A complete line.
    Newline,
    /// The stream ended after these bytes.
    Eof,
    /// More than the cap without a newline; the bytes are not a frame.
    TooLarge,
}

async fn reader(
    stdout: tokio::process::ChildStdout,
    limits: Limits,
    core: Arc<Core>,
    stdin: Arc<Stdin>,
    token: CancellationToken,
) {
    let mut rd = BufReader::with_capacity(64 * 1024, stdout);
    let mut line = Vec::with_capacity(8 * 1024);
    let mut cancelled = std::pin::pin!(token.cancelled());
    let reason = loop {
        let r = tokio::select! {
            biased;
            () = &mut cancelled => break CloseReason::ClosedByClient,
            r = read_frame(&mut rd, &mut line, limits.frame_cap) => r,
        };
        core.counters
            .peak_line_bytes
            .fetch_max(line.len(), Ordering::Relaxed);
        let end = match r {
            Ok(Some(end)) => end,
            Ok(None) => break CloseReason::ServerGone,
            Err(e) => {
                break CloseReason::ReadFailed {
                    message: e.to_string(),
                }
            }
        };
        if end == FrameEnd::TooLarge {
            core.counters.violations.fetch_add(1, Ordering::Relaxed);
            break CloseReason::FrameTooLarge {
                cap: limits.frame_cap,
            };
        }
        match core.on_frame(&line) {
            Inbound::Done => {}
            Inbound::Answer(a) => {
                // A full queue means the server floods us: drop the answer rather than wait.
                if stdin.send(a).is_err() {
                    core.counters.rate_limited.fetch_add(1, Ordering::Relaxed);
                }
            }
            Inbound::Garbage => {
                let n = core.counters.garbage_lines.fetch_add(1, Ordering::Relaxed) + 1;
                if n > limits.max_garbage_lines {
                    break CloseReason::TooManyGarbageLines { lines: n };
                }
            }
        }
        if line.capacity() > 1024 * 1024 {
            // Do not keep a large buffer alive after one large frame.
            line = Vec::with_capacity(8 * 1024);
        }
        if end == FrameEnd::Eof {
            break CloseReason::ServerGone;
        }
    };
    if reason != CloseReason::ServerGone {
        core.close(reason);
    }
    // At EOF the supervisor closes the core with the exit status once the child is reaped.
    token.cancel();
}

async fn stderr_task(
    mut stderr: tokio::process::ChildStderr,
    ring: Arc<StderrRing>,
    token: CancellationToken,
) {
    let mut buf = vec![0u8; 4096];
    loop {
        let n = tokio::select! {
            biased;
            () = token.cancelled() => {
                // What a server wrote just before it ended explains why ("missing API_KEY"):
                // keep what is already there, briefly.
                let drain = async {
                    while let Ok(n) = stderr.read(&mut buf).await {
                        if n == 0 {
                            break;
                        }
                        ring.push(&buf[..n]);
                    }
                };
                let _ = tokio::time::timeout(STDERR_DRAIN, drain).await;
                return;
            }
            r = stderr.read(&mut buf) => match r { Ok(0) | Err(_) => return, Ok(n) => n },
        };
        ring.push(&buf[..n]);
    }
}

fn signal_group(pid: Option<u32>, signal: rustix::process::Signal) {
    let Some(pid) = pid
        .and_then(|p| i32::try_from(p).ok())
        .and_then(rustix::process::Pid::from_raw)
    else {
        return;
    };
    // ESRCH (the group is already gone) is the expected outcome of a clean exit.
    let _ = rustix::process::kill_process_group(pid, signal);
}

async fn supervisor(
    mut child: Child,
    pid: Option<u32>,
    limits: Limits,
    core: Arc<Core>,
    token: CancellationToken,
    stdin_done: tokio::sync::oneshot::Receiver<()>,
) {
    let status = tokio::select! {
        s = child.wait() => {
            // The leader exited on its own; take whatever it left in its group with it.
            signal_group(pid, rustix::process::Signal::KILL);
            s.ok()
        }
        () = token.cancelled() => {
            // 1. stdin closed (the writer ends on the token), 2. wait.
            let _ = tokio::time::timeout(limits.close_grace, stdin_done).await;
            match tokio::time::timeout(limits.close_grace, child.wait()).await {
                Ok(s) => { signal_group(pid, rustix::process::Signal::KILL); s.ok() }
                Err(_) => {
                    // 3. SIGTERM the group, wait.
                    signal_group(pid, rustix::process::Signal::TERM);
                    match tokio::time::timeout(limits.term_grace, child.wait()).await {
                        Ok(s) => { signal_group(pid, rustix::process::Signal::KILL); s.ok() }
                        Err(_) => {
                            // 4. SIGKILL the group and reap.
                            signal_group(pid, rustix::process::Signal::KILL);
                            let _ = child.start_kill();
                            child.wait().await.ok()
                        }
                    }
                }
            }
        }
    };
    if let Some(s) = status {
        core.close(CloseReason::ServerExited {
            code: s.code(),
            signal: s.signal(),
        });
    } else {
        core.close(CloseReason::ServerGone);
    }
    token.cancel();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn read_frame_bounds_the_line() {
        // (input, cap, expected frames)
        type Case<'a> = (&'a [u8], usize, &'a [(&'a [u8], FrameEnd)]);
        let cases: &[Case<'_>] = &[
            (
                b"ab\ncd\n",
                4,
                &[(b"ab", FrameEnd::Newline), (b"cd", FrameEnd::Newline)],
            ),
            (b"abcd\n", 4, &[(b"abcd", FrameEnd::Newline)]),
            (b"abcde\n", 4, &[(b"abcde", FrameEnd::TooLarge)]),
            (b"ab\r\n", 4, &[(b"ab", FrameEnd::Newline)]),
            (b"ab", 4, &[(b"ab", FrameEnd::Eof)]),
            (b"", 4, &[]),
        ];
        for (input, cap, want) in cases {
            let mut rd = BufReader::with_capacity(2, *input);
            let mut line = Vec::new();
            let mut got = Vec::new();
            while let Some(end) = read_frame(&mut rd, &mut line, *cap).await.unwrap() {
                assert!(line.len() <= cap + 1);
                got.push((line.clone(), end));
                if end != FrameEnd::Newline {
                    break;
                }
            }
            let want: Vec<_> = want.iter().map(|(l, e)| (l.to_vec(), *e)).collect();
            assert_eq!(got, want, "{input:?}");
        }
    }

    #[tokio::test]
    async fn a_huge_line_is_never_assembled() {
        let reader = tokio::io::repeat(b'x').take(50 * 1024 * 1024);
        let mut rd = BufReader::new(reader);
        let mut line = Vec::new();
        let end = read_frame(&mut rd, &mut line, 1024).await.unwrap();
        assert_eq!(end, Some(FrameEnd::TooLarge));
        assert_eq!(line.len(), 1025);
    }

    #[test]
    fn stderr_ring_keeps_the_tail() {
        let ring = StderrRing {
            buf: Mutex::new(VecDeque::new()),
            cap: 8,
        };
        ring.push(b"hello ");
        ring.push(b"world");
        assert_eq!(ring.tail(), "lo world");
        ring.push(b"0123456789abc");
        assert_eq!(ring.tail(), "56789abc");
    }
}
