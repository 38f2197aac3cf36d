//! The `tscope` binary: parse, run, map the outcome to an exit code. Nothing else.

fn main() {
    let outcome = match tscope::cli::Cli::from_env() {
        Ok(cli) => tscope::run(cli),
        // A bad command line, or the text of --help or --version.
        Err(e) => tscope::clap_exit(e),
    };
    match outcome {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            // A file name in the message drives no terminal; ASCII under a non-UTF-8 locale.
            let line = format!("{e:#}");
            let line = tscope::export::safe::text(&line);
            eprintln!("tscope: error: {}", tscope::fmt::for_locale(&line));
            std::process::exit(2);
        }
    }
}
