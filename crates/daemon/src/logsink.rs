//! The daemon's log sink: a bounded queue of formatted lines, drained to stderr by its own OS
//! thread, so a log that nobody reads (a full pipe, a stalled terminal, a slow disk) never
//! blocks the runtime.
//!
//! Every event is formatted on the thread that logs it (as before) and handed over as one
//! line with a non-blocking send. When the queue is full the line is dropped and counted; the
//! count is in `maven status` (`log_lines_dropped`), and once the writer has caught up again
//! (the queue is below half) it logs one warning, "N log lines were dropped: the log sink did
//! not keep up". The last [`RESERVE`] places of the queue are kept for errors and for the
//! shutdown sequence ([`closing`]), so a burst of chatter does not crowd them out.
//!
//! What a crash loses: the daemon waits (at most [`FLUSH_GRACE`]) for the queue to drain on
//! every exit from `maven daemon`, errors included, and a panic message is written by the
//! panic hook straight to stderr, not through the queue. A process that dies without returning
//! (SIGKILL, an abort, the kernel's OOM killer) loses the lines still in the queue: at most
//! [`CAPACITY`] lines that were logged but not yet written. Nothing else is buffered: the writer
//! writes each line with one `write_all` to the unbuffered stderr.

use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender, TrySendError};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use tracing::{Level, Metadata};
use tracing_subscriber::fmt::MakeWriter;

/// Writes formatted text to stderr, whole, or drops it: a stderr that cannot be written
/// (closed, full) is no error of the daemon, and no message can panic (as `eprintln!` does).
pub(crate) fn stderr_fmt(args: std::fmt::Arguments<'_>) {
    let mut err = std::io::stderr().lock();
    let _ = err.write_fmt(args).and_then(|()| err.flush());
}

/// `eprintln!` through [`stderr_fmt`].
macro_rules! errln {
    ($($t:tt)*) => { $crate::logsink::stderr_fmt(format_args!("{}\n", format_args!($($t)*))) };
}

pub(crate) use errln;

/// How many lines the queue holds.
pub(crate) const CAPACITY: usize = 4096;
/// The places at the end of the queue only errors and the shutdown sequence may take.
pub(crate) const RESERVE: usize = 256;
/// How long an exit waits for the writer to drain the queue.
pub(crate) const FLUSH_GRACE: Duration = Duration::from_secs(2);

/// Lines dropped since start-up because the queue was full.
static DROPPED: AtomicU64 = AtomicU64::new(0);
/// Lines accepted and not yet written (queued, or being written).
static PENDING: AtomicUsize = AtomicUsize::new(0);
/// Set once shutdown begins: every line may use the reserve.
static CLOSING: AtomicBool = AtomicBool::new(false);
/// The sending side; set once by [`start`].
static SENDER: OnceLock<SyncSender<Vec<u8>>> = OnceLock::new();

/// How many lines were dropped since start-up.
pub(crate) fn dropped() -> u64 {
    DROPPED.load(Ordering::Relaxed)
}

/// Marks the start of the shutdown sequence: from now on every line may take the places kept
/// for errors.
pub(crate) fn closing() {
    CLOSING.store(true, Ordering::Relaxed);
}

/// Waits, at most `within`, until every accepted line is written. Returns whether it was.
#[expect(
    clippy::disallowed_methods,
    reason = "a blocking wait on the main thread, after the runtime has stopped"
)]
pub(crate) fn flush(within: Duration) -> bool {
    let deadline = Instant::now() + within;
    while PENDING.load(Ordering::Acquire) > 0 {
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    true
}

/// Starts the writer thread and returns the `MakeWriter` the subscriber formats into. Called
/// once; a second call returns a writer onto the same queue.
pub(crate) fn start() -> Sink {
    let _ = SENDER.get_or_init(|| {
        let (tx, rx) = mpsc::sync_channel(CAPACITY);
        let spawned = std::thread::Builder::new()
            .name("maven-log".into())
            .spawn(move || drain(&rx, &mut std::io::stderr()));
        if spawned.is_err() {
            // No thread: lines still go nowhere rather than block; say so once, directly.
            errln!("maven: cannot start the log writer thread; logging is off");
        }
        tx
    });
    Sink
}

/// The writer thread: writes each line, then reports drops once the queue is below half.
fn drain(rx: &Receiver<Vec<u8>>, out: &mut impl Write) {
    let mut reported = 0u64;
    while let Ok(line) = rx.recv() {
        // A failed write (a closed stderr) loses the line; nothing better to do with it.
        let _ = out.write_all(&line);
        PENDING.fetch_sub(1, Ordering::AcqRel);
        let dropped = DROPPED.load(Ordering::Relaxed);
        if dropped > reported && PENDING.load(Ordering::Acquire) < CAPACITY / 2 {
            let n = dropped - reported;
            reported = dropped;
            // Logged like any other line (in the chosen format, through the filter); should
            // it be dropped too, the next recovery reports it.
            tracing::warn!(
                target: "maven::log",
                dropped = n,
                "{n} log lines were dropped: the log sink did not keep up"
            );
        }
    }
}

/// Hands one formatted line to the writer without blocking; counts it when it is dropped.
fn offer(line: &[u8], priority: bool) {
    let Some(tx) = SENDER.get() else { return };
    let limit = if priority || CLOSING.load(Ordering::Relaxed) {
        CAPACITY
    } else {
        CAPACITY - RESERVE
    };
    // Claim a place first, so the writer never sees PENDING below what is queued.
    if PENDING.fetch_add(1, Ordering::AcqRel) >= limit {
        PENDING.fetch_sub(1, Ordering::AcqRel);
        DROPPED.fetch_add(1, Ordering::Relaxed);
        return;
    }
    match tx.try_send(line.to_vec()) {
        Ok(()) => {}
        Err(TrySendError::Full(_)) | Err(TrySendError::Disconnected(_)) => {
            PENDING.fetch_sub(1, Ordering::AcqRel);
            DROPPED.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// The subscriber's writer factory.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Sink;

/// One event's writer: collects what the formatter writes and offers it as one line when
/// dropped (the formatter writes an event in one go, then drops its writer).
pub(crate) struct Line {
    buf: Vec<u8>,
    priority: bool,
}

impl Write for Line {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.buf.extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Drop for Line {
    fn drop(&mut self) {
        if !self.buf.is_empty() {
            offer(&self.buf, self.priority);
        }
    }
}

impl<'a> MakeWriter<'a> for Sink {
    type Writer = Line;
    fn make_writer(&'a self) -> Line {
        Line {
            buf: Vec::new(),
            priority: false,
        }
    }
    fn make_writer_for(&'a self, meta: &Metadata<'_>) -> Line {
        Line {
            buf: Vec::new(),
            priority: *meta.level() <= Level::ERROR,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_is_written_whole_by_the_thread() {
        let (tx, rx) = mpsc::sync_channel(4);
        PENDING.fetch_add(2, Ordering::AcqRel);
        tx.send(b"one\n".to_vec()).unwrap();
        tx.send(b"two\n".to_vec()).unwrap();
        drop(tx);
        let mut out = Vec::new();
        drain(&rx, &mut out);
        assert_eq!(out, b"one\ntwo\n");
    }
}
