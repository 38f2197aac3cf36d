//! The `tscope` binary: parse, run, map the outcome to an exit code. Nothing else.

fn main() {
    match tscope::run(tscope::cli::Cli::from_env()) {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            // A file name in the message drives no terminal.
            let line = format!("{e:#}");
            eprintln!("tscope: error: {}", tscope::export::safe::text(&line));
            std::process::exit(2);
        }
    }
}
