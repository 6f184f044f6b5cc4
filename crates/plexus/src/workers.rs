//! Threads for streaming queries, kept for reuse: starting a thread costs
//! tens of microseconds, as much as a small query. A job goes to an idle
//! thread when there is one and to a new thread otherwise, so a query
//! never waits for another (a fixed pool could stall behind cursors that
//! nobody reads). A thread idle for [`IDLE_FOR`] ends; at most [`MAX_IDLE`]
//! wait at once.

use std::sync::mpsc;
use std::sync::Mutex;
use std::time::Duration;

type Job = Box<dyn FnOnce() + Send>;

const IDLE_FOR: Duration = Duration::from_secs(30);
const MAX_IDLE: usize = 64;

#[derive(Default)]
pub(crate) struct Workers {
    /// Idle threads, each waiting on its own channel.
    idle: Mutex<Vec<mpsc::Sender<Job>>>,
}

impl Workers {
    /// Runs `job` on an idle thread, or a new one.
    pub fn run(&'static self, mut job: Job) -> std::io::Result<()> {
        loop {
            let next = self.idle.lock().unwrap_or_else(|p| p.into_inner()).pop();
            let Some(tx) = next else { break };
            match tx.send(job) {
                Ok(()) => return Ok(()),
                // That thread timed out and ended: try the next one.
                Err(mpsc::SendError(j)) => job = j,
            }
        }
        std::thread::Builder::new()
            .name("plexus-query".into())
            .spawn(move || self.serve(job))
            .map(drop)
    }

    fn serve(&'static self, first: Job) {
        first();
        loop {
            let (tx, rx) = mpsc::channel();
            {
                let mut idle = self.idle.lock().unwrap_or_else(|p| p.into_inner());
                if idle.len() >= MAX_IDLE {
                    return;
                }
                idle.push(tx);
            }
            match rx.recv_timeout(IDLE_FOR) {
                Ok(job) => job(),
                Err(_) => return,
            }
        }
    }
}

/// The process's workers: one set, shared by every database.
pub(crate) fn workers() -> &'static Workers {
    static WORKERS: std::sync::OnceLock<Workers> = std::sync::OnceLock::new();
    WORKERS.get_or_init(Workers::default)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_are_reused_and_jobs_never_wait_for_each_other() {
        let w: &'static Workers = Box::leak(Box::default());
        let (done_tx, done_rx) = mpsc::channel();
        // Two jobs that block until released: the second gets its own thread.
        let (release_tx, release_rx) = mpsc::channel::<()>();
        let release_rx = std::sync::Arc::new(Mutex::new(release_rx));
        for _ in 0..2 {
            let (d, r) = (done_tx.clone(), release_rx.clone());
            w.run(Box::new(move || {
                let _ = r.lock().map(|r| r.recv());
                let _ = d.send(std::thread::current().id());
            }))
            .unwrap();
        }
        release_tx.send(()).unwrap();
        release_tx.send(()).unwrap();
        let a = done_rx.recv().unwrap();
        let b = done_rx.recv().unwrap();
        assert_ne!(a, b);
        // Both are idle now; the next jobs run on them, not on new threads.
        while w.idle.lock().unwrap().len() < 2 {
            std::thread::yield_now();
        }
        for _ in 0..10 {
            let d = done_tx.clone();
            w.run(Box::new(move || {
                let _ = d.send(std::thread::current().id());
            }))
            .unwrap();
            let id = done_rx.recv().unwrap();
            assert!(id == a || id == b);
            while w.idle.lock().unwrap().len() < 2 {
                std::thread::yield_now();
            }
        }
    }
}
