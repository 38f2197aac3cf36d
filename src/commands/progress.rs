//! The one progress type of every command: [`StderrProgress`], the [`Progress`] a long job
//! reports to.

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::progress::Progress;

/// Progress on stderr for a command that runs longer than a moment: notes as `tscope: …`
/// lines and, only when stderr is a terminal, a spinner line below them with the elapsed time
/// and what the job is doing now (the last step or note). Not a terminal (a pipe, a file, a
/// test): the notes alone, no spinner, no escape sequences. The spinner is cleared when the
/// value is dropped, before the result is printed.
#[derive(Debug)]
pub struct StderrProgress {
    bar: ProgressBar,
    job: String,
}

impl StderrProgress {
    /// A spinner for `job` ("run pipe1: 4 runs of 6 s") when stderr is a terminal.
    pub fn new(job: impl Into<String>) -> StderrProgress {
        StderrProgress::to(job.into(), terminal(), None)
    }

    /// A bar of `steps` steps (a report's parts) when stderr is a terminal: each
    /// [`Progress::step`] fills one.
    pub fn steps(steps: u64) -> StderrProgress {
        StderrProgress::to(String::new(), terminal(), Some(steps))
    }

    /// Notes only, never a spinner.
    pub fn lines() -> StderrProgress {
        StderrProgress::to(String::new(), None, None)
    }

    /// The spinner (or the bar of `steps`) drawn to `target`; `None` draws nothing.
    fn to(job: String, target: Option<ProgressDrawTarget>, steps: Option<u64>) -> StderrProgress {
        let Some(target) = target else {
            return StderrProgress {
                bar: ProgressBar::hidden(),
                job,
            };
        };
        let bar = ProgressBar::with_draw_target(steps, target);
        let template = match steps {
            Some(_) => "{bar:30} {pos}/{len} {msg}",
            None => "{spinner} {elapsed:>4} {wide_msg}",
        };
        if let Ok(style) = ProgressStyle::with_template(template) {
            bar.set_style(style);
        }
        bar.set_message(job.clone());
        bar.enable_steady_tick(std::time::Duration::from_millis(120));
        StderrProgress { bar, job }
    }

    /// What the spinner says while `now` is under way.
    fn message(&self, now: &str) -> String {
        match (self.job.is_empty(), now.is_empty()) {
            (true, _) => now.to_string(),
            (false, true) => self.job.clone(),
            (false, false) => format!("{}: {now}", self.job),
        }
    }
}

impl Progress for StderrProgress {
    fn step(&self, what: &str) {
        self.bar.inc(1);
        self.bar
            .set_message(self.message(&crate::fmt::for_locale(what)));
    }

    /// Spelt in ASCII where the locale is not UTF-8, as the results are.
    fn note(&self, line: &str) {
        let line = crate::fmt::for_locale(line);
        if self.bar.is_hidden() {
            eprintln!("tscope: {line}");
        } else {
            self.bar.println(format!("tscope: {line}"));
            self.bar.set_message(self.message(&line));
        }
    }
}

/// Stderr as a draw target when it is a terminal.
fn terminal() -> Option<ProgressDrawTarget> {
    std::io::stderr()
        .is_terminal()
        .then(ProgressDrawTarget::stderr)
}

impl Drop for StderrProgress {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// A terminal that keeps what is written to it.
    #[derive(Debug, Clone, Default)]
    struct Screen(Arc<Mutex<String>>);

    impl indicatif::TermLike for Screen {
        fn width(&self) -> u16 {
            80
        }
        fn move_cursor_up(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn move_cursor_down(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn move_cursor_right(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn move_cursor_left(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn write_line(&self, s: &str) -> std::io::Result<()> {
            self.write_str(&format!("{s}\n"))
        }
        fn write_str(&self, s: &str) -> std::io::Result<()> {
            self.0.lock().unwrap().push_str(s);
            Ok(())
        }
        fn clear_line(&self) -> std::io::Result<()> {
            Ok(())
        }
        fn flush(&self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn on_a_terminal_the_spinner_shows_the_job_its_steps_and_notes() {
        let screen = Screen::default();
        let target = ProgressDrawTarget::term_like(Box::new(screen.clone()));
        let p = StderrProgress::to("run pipe1: 2 runs of 2 s".into(), Some(target), None);
        assert!(!p.bar.is_hidden());
        p.step("tasks=2");
        p.note("booting the guest");
        p.bar.tick();
        let shown = screen.0.lock().unwrap().clone();
        assert!(shown.contains("run pipe1: 2 runs of 2 s"), "{shown:?}");
        assert!(
            shown.contains("run pipe1: 2 runs of 2 s: tasks=2"),
            "{shown:?}"
        );
        assert!(shown.contains("tscope: booting the guest\n"), "{shown:?}");
        assert!(
            shown.contains("run pipe1: 2 runs of 2 s: booting the guest"),
            "the last note is what the spinner says now: {shown:?}"
        );
    }

    #[test]
    fn a_bar_of_steps_fills_one_per_step() {
        let screen = Screen::default();
        let target = ProgressDrawTarget::term_like(Box::new(screen.clone()));
        let p = StderrProgress::to(String::new(), Some(target), Some(3));
        p.step("probing the sources");
        p.bar.tick();
        assert_eq!(p.bar.position(), 1);
        let shown = screen.0.lock().unwrap().clone();
        assert!(shown.contains("/3 probing the sources"), "{shown:?}");
    }

    #[test]
    fn off_a_terminal_there_is_no_spinner() {
        let p = StderrProgress::to("vm guest".into(), None, None);
        assert!(p.bar.is_hidden());
        assert!(StderrProgress::lines().bar.is_hidden());
        assert_eq!(p.message("booting"), "vm guest: booting");
        assert_eq!(p.message(""), "vm guest");
        assert_eq!(StderrProgress::lines().message("x"), "x");
    }
}
