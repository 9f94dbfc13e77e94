//! How a batch command's process is set up before it does any work: the C heap and the
//! thread pool, decided here at the edge (the libraries allocate and use rayon without
//! knowing). The language server keeps the defaults: it lives long, and its memory is
//! measured as the live heap per finding.
//!
//! Measured on `check --format json` of 1,000 definitions x 4 kernels on one core
//! (`scripts/bench.sh`'s four-kernel row; figures in the commits that set each part).

/// Sets up the heap and the thread pool of a command that runs once and exits.
pub(crate) fn batch() {
    let threads = pool::threads(std::env::var("RAYON_NUM_THREADS").ok().as_deref(), pool::cpus());
    heap::batch(threads);
    pool::batch(threads);
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
mod heap {
    /// The heap grows this much at a time.
    const GROWTH: usize = 64 << 20;

    /// What a batch run asks of glibc's malloc: as many arenas as pool threads at most,
    /// the heap grown 64 MiB at a time and not given back before exit, blocks up to
    /// 32 MiB (glibc's ceiling) taken from it rather than from an mmap of their own, and
    /// its first 64 MiB backed by transparent huge pages where the system gives them on
    /// request (`madvise`, a common default; `always` needs nothing, `never` refuses).
    /// A run touches tens of MB of fresh memory (kernel tables, buffers the cache is read
    /// into): one fault per 4 KiB page was two thirds of the four-kernel check's page
    /// faults (12,100 -> 4,400). The price: `calloc` clears all it hands out from the
    /// pre-grown heap (read buffers are not asked of it: `fsio::read_exact_at`).
    ///
    /// The arenas: a thread's own arena grew by `mprotect` a page at a time (~2,000
    /// calls), and one arena shared by two threads made them wait on its lock (two CPUs:
    /// 32-35 ms wall with two arenas, 51-52 ms with one, 36-49 ms with glibc's default,
    /// one per thread, whose extra arenas fault 4 KiB at a time). With one CPU the main
    /// thread is the only one (see `pool`).
    ///
    /// Close to `GLIBC_TUNABLES=glibc.malloc.arena_max=N:glibc.malloc.top_pad=67108864:
    /// glibc.malloc.hugetlb=1`, which a process cannot set for itself (glibc reads its
    /// tunables before `main`). Nothing here can fail a run: a refused option or
    /// `madvise` (no THP in the kernel, a heap that is not `brk`'s) leaves the default.
    #[allow(unsafe_code)]
    pub(super) fn batch(threads: usize) {
        // SAFETY: mallopt takes plain integers; sbrk(0) only reads the program break;
        // malloc/free of a block this function owns; madvise with MADV_HUGEPAGE changes
        // no contents, only how later faults in the range are served, and is given a
        // range inside the heap that the malloc below just grew.
        unsafe {
            libc::mallopt(libc::M_ARENA_MAX, libc::c_int::try_from(threads).unwrap_or(libc::c_int::MAX));
            libc::mallopt(libc::M_TOP_PAD, GROWTH as libc::c_int);
            // Blocks up to 32 MiB (glibc's ceiling) come from the heap, not from an
            // mmap of their own that `free` would unmap (and the next one fault again).
            libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
            libc::mallopt(libc::M_TRIM_THRESHOLD, (2 * GROWTH) as libc::c_int);
            // Grow the heap now, by GROWTH, so that the stretch to advise exists.
            let before = libc::sbrk(0) as usize;
            // (black_box: the compiler would drop a malloc whose block is only freed.)
            let block = std::hint::black_box(libc::malloc(1 << 20));
            libc::free(block);
            let after = libc::sbrk(0) as usize;
            const HUGE: usize = 2 << 20;
            let start = before.next_multiple_of(HUGE);
            let end = after - after % HUGE;
            if before != usize::MAX && after != usize::MAX && end > start {
                libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
            }
        }
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
mod heap {
    pub(super) fn batch(_threads: usize) {}
}

mod pool {
    /// With one CPU (an affinity mask, a cgroup quota, `RAYON_NUM_THREADS=1`), rayon would
    /// still start a worker thread and run every parallel part there while the main thread
    /// waits: a thread start-up, a second malloc arena, two context switches per part.
    /// The main thread becomes the pool's one worker instead, so the parts run where they
    /// are called, in the same order. With more CPUs rayon's default stands.
    pub(super) fn batch(threads: usize) {
        if threads == 1 {
            // Fails only if a pool already exists, and then that pool is used as it is.
            let _ = rayon::ThreadPoolBuilder::new().num_threads(1).use_current_thread().build_global();
        }
    }

    pub(super) fn cpus() -> usize {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    }

    /// The number of threads rayon's default pool would have (its rule for
    /// `RAYON_NUM_THREADS`: a positive number wins, anything else means the CPU count).
    pub(super) fn threads(var: Option<&str>, cpus: usize) -> usize {
        match var.and_then(|v| v.parse::<usize>().ok()) {
            Some(n @ 1..) => n,
            _ => cpus,
        }
    }

    #[cfg(test)]
    mod tests {
        use super::threads;

        #[test]
        fn rayon_num_threads_decides_before_the_cpu_count() {
            assert_eq!(threads(None, 1), 1);
            assert_eq!(threads(None, 8), 8);
            assert_eq!(threads(Some("1"), 8), 1);
            assert_eq!(threads(Some("3"), 1), 3);
            assert_eq!(threads(Some("0"), 1), 1);
            assert_eq!(threads(Some("0"), 4), 4);
            assert_eq!(threads(Some("many"), 4), 4);
        }
    }
}
