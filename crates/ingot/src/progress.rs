//! A progress line on stderr for long operations (a large kernel library compiling), shown only
//! when stderr is a terminal and the operation outlasts [`DELAY`].
//!
//! `INGOT_PROGRESS=0` turns it off, `INGOT_PROGRESS=1` shows it even when stderr is not a
//! terminal (logs of long builds).
//!
//! ```
//! let p = ingot::progress::Progress::start("compiling kernels.metal for cpu");
//! // ... the long operation ...
//! drop(p); // stops the line (and ends it with the total time when it was shown)
//! ```

use std::io::{IsTerminal, Write};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long an operation runs before its progress line appears.
pub const DELAY: Duration = Duration::from_secs(2);

/// How often the line is redrawn.
const TICK: Duration = Duration::from_millis(250);

type Sink = Box<dyn Write + Send>;

/// The stop flag the drawing thread waits on, with its wake-up.
type StopSignal = Arc<(Mutex<bool>, Condvar)>;

/// A running operation's progress line; dropping it stops the line.
pub struct Progress {
    state: Option<(StopSignal, JoinHandle<()>)>,
}

fn enabled() -> bool {
    match std::env::var("INGOT_PROGRESS").as_deref() {
        Ok("0") | Ok("false") | Ok("off") => false,
        Ok("1") | Ok("true") | Ok("on") => true,
        _ => std::io::stderr().is_terminal(),
    }
}

impl Progress {
    /// Starts the line for `what` on stderr (a no-op unless stderr is interactive, see the
    /// module docs).
    pub fn start(what: impl Into<String>) -> Progress {
        if !enabled() {
            return Progress { state: None };
        }
        Progress::start_to(what.into(), DELAY, Box::new(std::io::stderr()))
    }

    /// Starts the line for `what` on `sink`, shown once `delay` has passed.
    pub fn start_to(what: String, delay: Duration, mut sink: Sink) -> Progress {
        let pair = Arc::new((Mutex::new(false), Condvar::new()));
        let shared = pair.clone();
        let spawned = std::thread::Builder::new()
            .name("ingot-progress".into())
            .spawn(move || {
                let t0 = Instant::now();
                let (lock, cv) = &*shared;
                let mut done = lock.lock().unwrap_or_else(|p| p.into_inner());
                let mut shown = false;
                let spinner = ['|', '/', '-', '\\'];
                let mut tick = 0usize;
                loop {
                    let wait = if shown { TICK } else { delay };
                    let (d, _) = cv
                        .wait_timeout(done, wait)
                        .unwrap_or_else(|p| p.into_inner());
                    done = d;
                    let secs = t0.elapsed().as_secs_f64();
                    if *done {
                        if shown {
                            let _ = writeln!(sink, "\r[ingot] {what}: done in {secs:.1} s\x1b[K");
                            let _ = sink.flush();
                        }
                        return;
                    }
                    shown = true;
                    let s = spinner[tick % spinner.len()];
                    tick += 1;
                    let _ = write!(sink, "\r[ingot] {what} {s} {secs:.0} s\x1b[K");
                    let _ = sink.flush();
                }
            });
        match spawned {
            Ok(handle) => Progress {
                state: Some((pair, handle)),
            },
            // No thread, no progress line: the operation itself goes on.
            Err(_) => Progress { state: None },
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if let Some((pair, handle)) = self.state.take() {
            let (lock, cv) = &*pair;
            *lock.lock().unwrap_or_else(|p| p.into_inner()) = true;
            cv.notify_all();
            let _ = handle.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone, Default)]
    struct Buf(Arc<Mutex<Vec<u8>>>);

    impl Write for Buf {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl Buf {
        fn text(&self) -> String {
            String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
        }
    }

    #[test]
    fn quick_operations_print_nothing() {
        let buf = Buf::default();
        let p = Progress::start_to("x".into(), Duration::from_secs(5), Box::new(buf.clone()));
        drop(p);
        assert_eq!(buf.text(), "");
    }

    #[test]
    fn long_operations_show_a_line_and_its_end() {
        let buf = Buf::default();
        let p = Progress::start_to(
            "compiling big.metal for cpu".into(),
            Duration::from_millis(20),
            Box::new(buf.clone()),
        );
        std::thread::sleep(Duration::from_millis(400));
        drop(p);
        let text = buf.text();
        assert!(
            text.starts_with("\r[ingot] compiling big.metal for cpu "),
            "{text:?}"
        );
        assert!(text.contains(": done in "), "{text:?}");
        assert!(text.ends_with(" s\x1b[K\n"), "{text:?}");
    }
}
