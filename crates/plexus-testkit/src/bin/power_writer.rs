//! The crash writer on a disk that loses what was not synced.
//!
//! Usage: power_writer <database folder> <lmdb|fjall> [threads]
//!
//! Same workload and output as `crash_writer`. With `PLEXUS_POWERLOSS_LOG`
//! set, this program defines the C library's write and sync functions
//! itself (LMDB's C code and Rust's standard library both call them by
//! name, and a definition in the program wins over the shared library's):
//! before a page of a file under the database folder first changes after
//! that file's last sync, the page's old bytes are appended to the log (see
//! `plexus_testkit::powerloss`), then the call goes to the kernel as a raw
//! system call. `PLEXUS_POWERLOSS_DIE_AT=n` makes the process kill itself
//! right after its n-th write to a file under the folder (counted from the
//! start, or from the database's opening with `PLEXUS_POWERLOSS_FROM=open`),
//! the moment at which a power cut loses the most. `PLEXUS_POWERLOSS_DURABLE=no` opens the
//! database without syncs, for the test that shows a power cut is noticed.

fn main() {
    #[cfg(target_os = "linux")]
    if let Some(log) = std::env::var_os(plexus_testkit::powerloss::LOG_ENV) {
        let Some(root) = std::env::args_os().nth(1) else {
            eprintln!("usage: power_writer <database folder> <lmdb|fjall> [threads]");
            std::process::exit(2);
        };
        let die_at = std::env::var("PLEXUS_POWERLOSS_DIE_AT").ok();
        let die_at = die_at.and_then(|n| n.parse().ok()).unwrap_or(u64::MAX);
        let from_open = std::env::var("PLEXUS_POWERLOSS_FROM").as_deref() == Ok("open");
        if let Err(e) = interpose::start(root.as_ref(), log.as_ref(), die_at, from_open) {
            eprintln!("power_writer: cannot track writes: {e}");
            std::process::exit(2);
        }
    }
    let durable = std::env::var("PLEXUS_POWERLOSS_DURABLE").as_deref() != Ok("no");
    plexus_testkit::crash::writer_main(durable, &|| {
        #[cfg(target_os = "linux")]
        interpose::opened();
    });
}

#[cfg(target_os = "linux")]
mod interpose {
    use libc::{c_char, c_int, c_long, c_uint, c_void, iovec, off_t, size_t, ssize_t};
    use plexus_testkit::powerloss::{Inode, Record, PAGE};
    use std::collections::{HashMap, HashSet};
    use std::os::fd::IntoRawFd;
    use std::os::unix::ffi::OsStrExt;
    use std::path::Path;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Mutex, MutexGuard};

    static ACTIVE: AtomicBool = AtomicBool::new(false);
    static STATE: Mutex<Option<Tracker>> = Mutex::new(None);

    /// Which pages of which files changed since their file's last sync.
    struct Tracker {
        /// The database folder, with a trailing slash.
        root: Vec<u8>,
        log: c_int,
        pending: HashMap<Inode, HashSet<u64>>,
        /// Writes to tracked files so far, and the one to die after.
        writes: u64,
        die_at: u64,
        /// The one to die after, counted once the database is open.
        die_after_open: Option<u64>,
    }

    pub fn start(root: &Path, log: &Path, die_at: u64, from_open: bool) -> std::io::Result<()> {
        std::fs::create_dir_all(root)?;
        let mut root = std::fs::canonicalize(root)?.as_os_str().as_bytes().to_vec();
        root.push(b'/');
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)?
            .into_raw_fd();
        *state() = Some(Tracker {
            root,
            log,
            pending: HashMap::new(),
            writes: 0,
            die_at: if from_open { u64::MAX } else { die_at },
            die_after_open: from_open.then_some(die_at),
        });
        ACTIVE.store(true, Ordering::SeqCst);
        Ok(())
    }

    /// The database is open: from here count writes towards the one to
    /// die at, if asked to count from the opening.
    pub fn opened() {
        with_tracker(|t| {
            if let Some(n) = t.die_after_open.take() {
                t.writes = 0;
                t.die_at = n;
            }
        });
    }

    fn state() -> MutexGuard<'static, Option<Tracker>> {
        STATE.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Runs `f` on the tracker while tracking is on. Nothing in here may
    /// call the functions this program defines: all I/O is raw syscalls.
    fn with_tracker<T: Default>(f: impl FnOnce(&mut Tracker) -> T) -> T {
        if ACTIVE.load(Ordering::SeqCst) {
            if let Some(t) = state().as_mut() {
                return f(t);
            }
        }
        T::default()
    }

    /// Performs a write the tracker has seen, then dies if it was the
    /// chosen one.
    fn write_then(die: bool, write: impl FnOnce() -> c_long) -> ssize_t {
        let n = write();
        if die {
            // SAFETY: kill and getpid take no pointer.
            unsafe {
                libc::syscall(
                    libc::SYS_kill,
                    libc::syscall(libc::SYS_getpid),
                    libc::SIGKILL,
                )
            };
        }
        n as ssize_t
    }

    /// A tracked file behind a descriptor: identity, length and open flags.
    struct Open {
        inode: Inode,
        len: u64,
        flags: c_int,
    }

    fn proc_path(fd: c_int) -> Vec<u8> {
        format!("/proc/self/fd/{fd}\0").into_bytes()
    }

    impl Tracker {
        fn file(&self, fd: c_int) -> Option<Open> {
            let mut buf = [0u8; 4096];
            let link = proc_path(fd);
            // SAFETY: both buffers outlive the call; `link` ends in NUL.
            let n = unsafe {
                libc::syscall(
                    libc::SYS_readlinkat,
                    libc::AT_FDCWD,
                    link.as_ptr(),
                    buf.as_mut_ptr(),
                    buf.len(),
                )
            };
            let path = buf.get(..usize::try_from(n).ok()?)?;
            if !path.starts_with(&self.root) {
                return None;
            }
            let st = fstat(fd)?;
            if st.st_mode & libc::S_IFMT != libc::S_IFREG {
                return None;
            }
            // SAFETY: F_GETFL takes no pointer.
            let flags = unsafe { libc::syscall(libc::SYS_fcntl, fd, libc::F_GETFL) };
            Some(Open {
                inode: (st.st_dev, st.st_ino),
                len: u64::try_from(st.st_size).ok()?,
                flags: c_int::try_from(flags).ok()?,
            })
        }

        fn append(&self, r: &Record) {
            let bytes = r.encode();
            let mut done = 0;
            while let Some(rest) = bytes.get(done..).filter(|b| !b.is_empty()) {
                // SAFETY: `rest` is a live slice of `bytes`.
                let n =
                    unsafe { libc::syscall(libc::SYS_write, self.log, rest.as_ptr(), rest.len()) };
                match usize::try_from(n) {
                    Ok(n) if n > 0 => done += n,
                    _ => return,
                }
            }
        }

        /// Before `len` bytes at `at` (the descriptor's position if `None`)
        /// are written through `fd`: keeps the old bytes of pages first
        /// changed in this epoch, or notes pages a synchronous descriptor
        /// makes durable. Whether to die once the write is done.
        fn before_write(&mut self, fd: c_int, at: Option<u64>, len: u64) -> bool {
            let Some(f) = self.file(fd) else { return false };
            self.writes += 1;
            let die = self.writes == self.die_at;
            let at = match at {
                Some(at) => at,
                None if f.flags & libc::O_APPEND != 0 => f.len,
                // SAFETY: lseek takes no pointer.
                None => match u64::try_from(unsafe {
                    libc::syscall(libc::SYS_lseek, fd, 0 as off_t, libc::SEEK_CUR)
                }) {
                    Ok(at) => at,
                    Err(_) => return die,
                },
            };
            if len == 0 {
                return die;
            }
            let (first, last) = (at / PAGE, at.saturating_add(len - 1) / PAGE);
            if f.flags & (libc::O_DSYNC | libc::O_SYNC) != 0 {
                self.append(&Record::Durable {
                    file: f.inode,
                    first,
                    last,
                });
                if let Some(p) = self.pending.get_mut(&f.inode) {
                    p.retain(|page| !(first..=last).contains(page));
                }
                return die;
            }
            self.keep_old(fd, &f, first, last);
            die
        }

        fn keep_old(&mut self, fd: c_int, f: &Open, first: u64, last: u64) {
            if !self.pending.contains_key(&f.inode) {
                self.append(&Record::Epoch {
                    file: f.inode,
                    len: f.len,
                });
                self.pending.insert(f.inode, HashSet::new());
            }
            // The descriptor may be write-only: read through a new one.
            let link = proc_path(fd);
            // SAFETY: `link` ends in NUL and outlives the call.
            let rfd = unsafe {
                libc::syscall(
                    libc::SYS_openat,
                    libc::AT_FDCWD,
                    link.as_ptr(),
                    libc::O_RDONLY,
                )
            };
            let Ok(rfd) = c_int::try_from(rfd) else {
                return;
            };
            if rfd < 0 {
                return;
            }
            let mut buf = vec![0u8; PAGE as usize];
            for page in first..=last {
                let new = self
                    .pending
                    .get_mut(&f.inode)
                    .is_some_and(|p| p.insert(page));
                if !new || page.saturating_mul(PAGE) >= f.len {
                    // Past the synced end the old bytes are the length cut.
                    continue;
                }
                // SAFETY: `buf` holds PAGE bytes and outlives the call.
                let n = unsafe {
                    libc::syscall(
                        libc::SYS_pread64,
                        rfd,
                        buf.as_mut_ptr(),
                        buf.len(),
                        page * PAGE,
                    )
                };
                let old = buf.get(..usize::try_from(n).unwrap_or(0)).unwrap_or(&[]);
                let old = old.to_vec();
                self.append(&Record::Page {
                    file: f.inode,
                    page,
                    old,
                });
            }
            // SAFETY: closes only the descriptor opened above.
            unsafe { libc::syscall(libc::SYS_close, rfd) };
        }

        fn synced(&mut self, fd: c_int) {
            if let Some(f) = self.file(fd) {
                if self.pending.remove(&f.inode).is_some() {
                    self.append(&Record::Synced { file: f.inode });
                }
            }
        }

        /// Before a path is removed or replaced: its changes stop mattering
        /// (and its inode number may be reused).
        fn removed(&mut self, dir: c_int, path: *const c_char) {
            // SAFETY: an all-zero `stat` is a valid value to overwrite.
            let mut st: libc::stat = unsafe { std::mem::zeroed() };
            // SAFETY: `path` comes from the caller of unlink or rename, a
            // NUL-terminated string; `st` outlives the call.
            let r = unsafe {
                libc::syscall(
                    libc::SYS_newfstatat,
                    dir,
                    path,
                    &mut st as *mut libc::stat,
                    libc::AT_SYMLINK_NOFOLLOW,
                )
            };
            let inode = (st.st_dev, st.st_ino);
            if r == 0 && self.pending.remove(&inode).is_some() {
                self.append(&Record::Synced { file: inode });
            }
        }
    }

    fn fstat(fd: c_int) -> Option<libc::stat> {
        // SAFETY: an all-zero `stat` is a valid value to overwrite.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: `st` outlives the call.
        let r = unsafe { libc::syscall(libc::SYS_fstat, fd, &mut st as *mut libc::stat) };
        (r == 0).then_some(st)
    }

    /// Marks everything synced before the sync itself runs: a kill between
    /// the two then counts pages as durable that a power cut at that very
    /// moment might lose, which can hide a fault but never invent one.
    fn sync_then(fd: c_int, nr: c_long) -> c_int {
        with_tracker(|t| t.synced(fd));
        // SAFETY: the sync calls take a descriptor only.
        unsafe { libc::syscall(nr, fd) as c_int }
    }

    fn iov_len(iov: *const iovec, n: c_int) -> u64 {
        let Ok(n) = usize::try_from(n) else { return 0 };
        if iov.is_null() {
            return 0;
        }
        // SAFETY: the caller passes `n` iovecs at `iov`, as writev requires.
        let v = unsafe { std::slice::from_raw_parts(iov, n) };
        v.iter().map(|i| i.iov_len as u64).sum()
    }

    /// # Safety
    /// As for the C library's `write`.
    #[export_name = "write"]
    pub unsafe extern "C" fn write(fd: c_int, buf: *const c_void, n: size_t) -> ssize_t {
        let die = with_tracker(|t| t.before_write(fd, None, n as u64));
        // SAFETY: the caller's arguments, passed on.
        write_then(die, || unsafe {
            libc::syscall(libc::SYS_write, fd, buf, n)
        })
    }

    /// # Safety
    /// As for the C library's `pwrite`.
    #[export_name = "pwrite"]
    pub unsafe extern "C" fn pwrite(
        fd: c_int,
        buf: *const c_void,
        n: size_t,
        at: off_t,
    ) -> ssize_t {
        let die = with_tracker(|t| t.before_write(fd, u64::try_from(at).ok(), n as u64));
        // SAFETY: the caller's arguments, passed on.
        write_then(die, || unsafe {
            libc::syscall(libc::SYS_pwrite64, fd, buf, n, at)
        })
    }

    /// # Safety
    /// As for the C library's `pwrite64`.
    #[export_name = "pwrite64"]
    pub unsafe extern "C" fn pwrite64(
        fd: c_int,
        buf: *const c_void,
        n: size_t,
        at: off_t,
    ) -> ssize_t {
        // SAFETY: the caller's arguments, passed on.
        unsafe { pwrite(fd, buf, n, at) }
    }

    /// # Safety
    /// As for the C library's `writev`.
    #[export_name = "writev"]
    pub unsafe extern "C" fn writev(fd: c_int, iov: *const iovec, n: c_int) -> ssize_t {
        let die = with_tracker(|t| t.before_write(fd, None, iov_len(iov, n)));
        // SAFETY: the caller's arguments, passed on.
        write_then(die, || unsafe {
            libc::syscall(libc::SYS_writev, fd, iov, n)
        })
    }

    /// # Safety
    /// As for the C library's `pwritev`.
    #[export_name = "pwritev"]
    pub unsafe extern "C" fn pwritev(fd: c_int, iov: *const iovec, n: c_int, at: off_t) -> ssize_t {
        let die = with_tracker(|t| t.before_write(fd, u64::try_from(at).ok(), iov_len(iov, n)));
        // The kernel takes the offset as two longs, low half first.
        let (lo, hi) = (at as u64 as c_long, ((at as u64) >> 32) as c_long);
        // SAFETY: the caller's arguments, passed on.
        write_then(die, || unsafe {
            libc::syscall(libc::SYS_pwritev, fd, iov, n, lo, hi)
        })
    }

    /// # Safety
    /// As for the C library's `pwritev64`.
    #[export_name = "pwritev64"]
    pub unsafe extern "C" fn pwritev64(
        fd: c_int,
        iov: *const iovec,
        n: c_int,
        at: off_t,
    ) -> ssize_t {
        // SAFETY: the caller's arguments, passed on.
        unsafe { pwritev(fd, iov, n, at) }
    }

    #[export_name = "ftruncate"]
    pub extern "C" fn ftruncate(fd: c_int, len: off_t) -> c_int {
        with_tracker(|t| {
            let (Some(f), Ok(to)) = (t.file(fd), u64::try_from(len)) else {
                return;
            };
            let (lo, hi) = (f.len.min(to), f.len.max(to));
            if hi > lo {
                t.keep_old(fd, &f, lo / PAGE, (hi - 1) / PAGE);
            }
        });
        // SAFETY: ftruncate takes no pointer.
        unsafe { libc::syscall(libc::SYS_ftruncate, fd, len) as c_int }
    }

    #[export_name = "ftruncate64"]
    pub extern "C" fn ftruncate64(fd: c_int, len: off_t) -> c_int {
        ftruncate(fd, len)
    }

    #[export_name = "fsync"]
    pub extern "C" fn fsync(fd: c_int) -> c_int {
        sync_then(fd, libc::SYS_fsync)
    }

    #[export_name = "fdatasync"]
    pub extern "C" fn fdatasync(fd: c_int) -> c_int {
        sync_then(fd, libc::SYS_fdatasync)
    }

    #[export_name = "syncfs"]
    pub extern "C" fn syncfs(fd: c_int) -> c_int {
        with_tracker(|t| {
            t.pending.clear();
            t.append(&Record::SyncedAll);
        });
        // SAFETY: syncfs takes a descriptor only.
        unsafe { libc::syscall(libc::SYS_syncfs, fd) as c_int }
    }

    #[export_name = "sync"]
    pub extern "C" fn sync() {
        with_tracker(|t| {
            t.pending.clear();
            t.append(&Record::SyncedAll);
        });
        // SAFETY: sync takes no argument.
        unsafe { libc::syscall(libc::SYS_sync) };
    }

    /// # Safety
    /// As for the C library's `unlink`.
    #[export_name = "unlink"]
    pub unsafe extern "C" fn unlink(path: *const c_char) -> c_int {
        // SAFETY: the caller's arguments, passed on.
        unsafe { unlinkat(libc::AT_FDCWD, path, 0) }
    }

    /// # Safety
    /// As for the C library's `unlinkat`.
    #[export_name = "unlinkat"]
    pub unsafe extern "C" fn unlinkat(dir: c_int, path: *const c_char, flags: c_int) -> c_int {
        with_tracker(|t| t.removed(dir, path));
        // SAFETY: the caller's arguments, passed on.
        unsafe { libc::syscall(libc::SYS_unlinkat, dir, path, flags) as c_int }
    }

    /// # Safety
    /// As for the C library's `rename`.
    #[export_name = "rename"]
    pub unsafe extern "C" fn rename(from: *const c_char, to: *const c_char) -> c_int {
        // SAFETY: the caller's arguments, passed on.
        unsafe { renameat2(libc::AT_FDCWD, from, libc::AT_FDCWD, to, 0) }
    }

    /// # Safety
    /// As for the C library's `renameat`.
    #[export_name = "renameat"]
    pub unsafe extern "C" fn renameat(
        fd: c_int,
        from: *const c_char,
        to_fd: c_int,
        to: *const c_char,
    ) -> c_int {
        // SAFETY: the caller's arguments, passed on.
        unsafe { renameat2(fd, from, to_fd, to, 0) }
    }

    /// # Safety
    /// As for the C library's `renameat2`.
    #[export_name = "renameat2"]
    pub unsafe extern "C" fn renameat2(
        fd: c_int,
        from: *const c_char,
        to_fd: c_int,
        to: *const c_char,
        flags: c_uint,
    ) -> c_int {
        with_tracker(|t| t.removed(to_fd, to));
        // SAFETY: the caller's arguments, passed on.
        unsafe { libc::syscall(libc::SYS_renameat2, fd, from, to_fd, to, flags) as c_int }
    }
}
