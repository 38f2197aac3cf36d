//! The `tscope` binary: parse, run, map the outcome to an exit code. Nothing else.

fn main() {
    match tscope::run(tscope::cli::Cli::from_env()) {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            eprintln!("tscope: error: {e:#}");
            std::process::exit(2);
        }
    }
}
