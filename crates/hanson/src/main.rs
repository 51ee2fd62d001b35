fn main() -> std::process::ExitCode {
    hanson::cli::main()
}
