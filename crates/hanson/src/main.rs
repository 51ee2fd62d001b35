//! The `hanson` binary: the process-wide allocator and memory settings, then the CLI.

// glibc's allocator took about a quarter of the server's time under concurrent reads
// (arena locks, consolidation); mimalloc keeps per-thread heaps.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    disable_transparent_huge_pages();
    hanson::cli::main()
}

/// Where the kernel backs memory with transparent huge pages by default, each first touch of
/// memory the allocator takes or takes back zeroes a whole 2 MiB page: that was the largest
/// single cost of filling the search caches. Plain pages are zeroed as they are used.
fn disable_transparent_huge_pages() {
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_THP_DISABLE only sets a flag on this process; it reads no memory.
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
}
