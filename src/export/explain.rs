//! `simulate --explain MODEL`: the model's table, per syscall and filesystem, with the
//! source of each count.

use super::table::{Align, Table};
use super::{Block, Render, Style};
use crate::kernel::explain::Explanation;

impl Render for Explanation {
    fn json(&self) -> impl serde::Serialize + '_ {
        self
    }

    fn blocks(&self, _style: Style) -> Vec<Block> {
        let mut blocks = vec![Block::Heading(format!(
            "{}: timestamp work per syscall and filesystem (stock {}; policies {})",
            self.model,
            self.stock_policy,
            self.policies.join(", ")
        ))];
        if !self.notes.is_empty() {
            blocks.push(Block::list("note: ", self.notes.clone()));
        }
        blocks.push(Block::Table(self.csv()));
        blocks.push(Block::Text(
            "reads: clock reads at the stock setting (a-b: Linux updates only when the coarse \
             time moved; BSD flushes only when a flag is pending); status: read = checked \
             against the source text, cited = from a second-hand reading of the source, \
             recalled = not re-read\n"
                .into(),
        ));
        blocks
    }

    fn csv(&self) -> Table {
        let mut t = Table::new(&[
            ("syscall", Align::Left),
            ("fs", Align::Left),
            ("work", Align::Left),
            ("reads", Align::Right),
            ("repo", Align::Left),
            ("file", Align::Left),
            ("function", Align::Left),
            ("at", Align::Left),
            ("status", Align::Left),
        ]);
        for r in &self.rows {
            t.row(vec![
                r.syscall.to_string(),
                r.filesystems.join(","),
                r.work.clone(),
                r.reads.clone(),
                r.source.repo.to_string(),
                r.source.file.to_string(),
                r.source.function.to_string(),
                r.source.at.to_string(),
                r.source.status.to_string(),
            ]);
        }
        t
    }
}
