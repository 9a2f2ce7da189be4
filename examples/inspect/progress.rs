//! The progress line `inspect` draws on stderr while a read is long: bytes
//! fetched (for a URL), chunks decoded, their rate and the time so far,
//! redrawn in place a few times a second once the read has taken a while,
//! and cleared when it ends. Only on a terminal: piped or redirected
//! output never gets it ([`Progress::for_stderr`]).

use std::io::Write;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

/// What a remote store has fetched so far: bytes and requests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fetched {
    /// Body bytes received.
    pub bytes: u64,
    /// Requests sent.
    pub requests: u64,
}

/// What one progress line shows.
#[derive(Clone, Copy, Debug)]
pub struct Snapshot {
    /// Time since the read began.
    pub elapsed: Duration,
    /// For a remote store, what it has fetched.
    pub fetched: Option<Fetched>,
    /// Chunks decoded, and how many there are, when the read goes chunk by
    /// chunk (a whole array; a window is one read call).
    pub chunks: Option<(u64, u64)>,
}

/// `bytes` in B, KiB, MiB or GiB, one decimal above bytes.
pub fn human_bytes(bytes: f64) -> String {
    const UNITS: [&str; 4] = ["B", "KiB", "MiB", "GiB"];
    let mut value = bytes;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{value:.0} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

/// The text of a progress line, e.g. `fetched 412.0 MiB in 96 requests,
/// 37/128 chunks decoded, 51.5 MiB/s, 8.0 s`. The rate is of bytes fetched
/// for a remote store, of chunks decoded otherwise.
pub fn line(snapshot: &Snapshot) -> String {
    let seconds = snapshot.elapsed.as_secs_f64();
    let mut parts = Vec::new();
    if let Some(fetched) = snapshot.fetched {
        parts.push(format!(
            "fetched {} in {} requests",
            human_bytes(fetched.bytes as f64),
            fetched.requests
        ));
    }
    if let Some((done, total)) = snapshot.chunks {
        parts.push(format!("{done}/{total} chunks decoded"));
    }
    if seconds > 0.0 {
        match (snapshot.fetched, snapshot.chunks) {
            (Some(fetched), _) => {
                parts.push(format!("{}/s", human_bytes(fetched.bytes as f64 / seconds)));
            }
            (None, Some((done, _))) => {
                parts.push(format!("{:.1} chunks/s", done as f64 / seconds));
            }
            (None, None) => {}
        }
    }
    if parts.is_empty() {
        parts.push("reading".to_string());
    }
    parts.push(format!("{seconds:.1} s"));
    parts.join(", ")
}

/// A progress line drawn on a writer (stderr, or a buffer in tests).
pub struct Progress {
    /// How long a read runs before the line appears.
    after: Duration,
    /// How often it is redrawn.
    every: Duration,
    sink: Mutex<Box<dyn Write + Send>>,
}

impl Progress {
    /// A read shorter than this shows nothing.
    pub const AFTER: Duration = Duration::from_secs(2);
    /// Redrawn four times a second: often enough to look alive, rarely
    /// enough to cost nothing.
    pub const EVERY: Duration = Duration::from_millis(250);

    /// Progress on stderr if it is a terminal (`stderr_is_terminal`, from
    /// [`std::io::IsTerminal`]), none when it is piped or redirected, so
    /// that logs and captured output never hold the redrawn lines.
    pub fn for_stderr(stderr_is_terminal: bool) -> Option<Self> {
        stderr_is_terminal.then(|| Self::new(Box::new(std::io::stderr())))
    }

    /// Progress drawn on `sink`, with the default timings.
    pub fn new(sink: Box<dyn Write + Send>) -> Self {
        Self {
            after: Self::AFTER,
            every: Self::EVERY,
            sink: Mutex::new(sink),
        }
    }

    /// The same, appearing after `after` and redrawn every `every`.
    #[allow(dead_code)] // for the tests that include this file
    pub fn with_timing(mut self, after: Duration, every: Duration) -> Self {
        self.after = after;
        self.every = every;
        self
    }

    /// Draw `text` over the current line (`\r`, then erase to its end).
    fn draw(&self, text: &str) {
        let mut sink = self.sink.lock().unwrap_or_else(|e| e.into_inner());
        // A progress line that cannot be written is not worth an error.
        let _ = write!(sink, "\r{text}\x1b[K");
        let _ = sink.flush();
    }
}

/// Run `work` (given a counter of chunks decoded, to add to) while
/// `progress`, if any, draws a line from `fetched`, the counter and
/// `total_chunks`, and clear the line when `work` returns.
pub fn run<R>(
    progress: Option<&Progress>,
    total_chunks: Option<u64>,
    fetched: &(dyn Fn() -> Option<Fetched> + Sync),
    work: impl FnOnce(&AtomicU64) -> R,
) -> R {
    let decoded = AtomicU64::new(0);
    let Some(progress) = progress else {
        return work(&decoded);
    };
    let start = Instant::now();
    let (stop, stopped) = mpsc::channel::<()>();
    std::thread::scope(|scope| {
        let decoded = &decoded;
        scope.spawn(move || {
            let mut drawn = false;
            loop {
                // Look before waiting, so that a zero delay draws at once.
                let elapsed = start.elapsed();
                if elapsed >= progress.after {
                    progress.draw(&line(&Snapshot {
                        elapsed,
                        fetched: fetched(),
                        chunks: total_chunks.map(|t| (decoded.load(Ordering::Relaxed), t)),
                    }));
                    drawn = true;
                }
                match stopped.recv_timeout(progress.every) {
                    Err(RecvTimeoutError::Timeout) => {}
                    Ok(()) | Err(RecvTimeoutError::Disconnected) => break,
                }
            }
            if drawn {
                progress.draw("");
            }
        });
        let result = work(decoded);
        drop(stop);
        result
    })
}
