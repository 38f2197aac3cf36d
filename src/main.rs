//! The `tscope` binary: parse, run, map the outcome to an exit code. Nothing else.

use clap::Parser;

fn main() {
    let cli = tscope::cli::Cli::parse();
    match tscope::run(cli) {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            eprintln!("tscope: error: {e:#}");
            std::process::exit(2);
        }
    }
}
