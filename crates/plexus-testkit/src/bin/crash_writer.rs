//! Writes the crash-test workload until killed, printing each step number
//! once its commit has been acknowledged.
//!
//! Usage: crash_writer <database folder> <lmdb|fjall> [threads]
//!
//! With a thread count, that many threads write the concurrent workload at
//! once (their commits grouped into shared writes) and each acknowledged
//! step is printed as `thread step`.

fn main() {
    plexus_testkit::crash::writer_main(true, &|| ());
}
