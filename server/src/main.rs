//! The `fevlint` binary: a thin shell over `fevlint::cli`.
fn main() -> std::process::ExitCode {
    fevlint::cli::main()
}
