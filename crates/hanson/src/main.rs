// glibc's allocator took about a quarter of the server's time under concurrent reads
// (arena locks, consolidation); mimalloc keeps per-thread heaps.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    hanson::cli::main()
}
