//! The `tscope` binary: parse, run, map the outcome to an exit code. Nothing else.

use clap::Parser;

fn main() {
    // As /init of a `tscope vm guest` guest (PID 1, started by the kernel as "/init").
    let cli = if std::process::id() == 1 && std::env::args().next().as_deref() == Some("/init") {
        tscope::cli::Cli::parse_from(["tscope", "vm", "guest-init"])
    } else {
        tscope::cli::Cli::parse()
    };
    match tscope::run(cli) {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            eprintln!("tscope: error: {e:#}");
            std::process::exit(2);
        }
    }
}
