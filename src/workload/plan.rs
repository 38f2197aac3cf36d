//! The shape of one run: how many tasks, processes or threads, which CPUs, how long. The
//! runner carries it out and `summary` reads it back into the result.

use std::time::Duration;

use super::result::{Mode, Placement};

/// One run's shape.
#[derive(Debug, Clone)]
pub struct RunPlan {
    pub tasks: usize,
    pub mode: Mode,
    pub placement: Option<Placement>,
    /// CPUs to pin to (empty: no pinning).
    pub cpus: Vec<usize>,
    pub warmup: Duration,
    pub interval: Duration,
    pub samples: usize,
}

impl RunPlan {
    /// The CPU of worker `role` of task `task`.
    pub fn cpu(&self, task: usize, role: usize, per_task: usize) -> Option<usize> {
        if self.cpus.is_empty() {
            return None;
        }
        let n = self.cpus.len();
        let i = match (per_task, self.placement) {
            (1, _) | (_, Some(Placement::SameCpu)) | (_, None) => task,
            _ => task * per_task + role,
        };
        Some(self.cpus[i % n])
    }
}

#[cfg(test)]
impl RunPlan {
    /// A three-sample plan of processes, for tests.
    pub(crate) fn for_test(tasks: usize, cpus: Vec<usize>, placement: Option<Placement>) -> Self {
        RunPlan {
            tasks,
            mode: Mode::Processes,
            placement,
            cpus,
            warmup: Duration::ZERO,
            interval: Duration::from_millis(100),
            samples: 3,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tasks_wrap_around_the_cpus() {
        let plan = RunPlan::for_test;
        let p = plan(3, vec![4, 5], None);
        assert_eq!(
            (0..3).map(|t| p.cpu(t, 0, 1)).collect::<Vec<_>>(),
            vec![Some(4), Some(5), Some(4)]
        );
        assert_eq!(plan(1, vec![], None).cpu(0, 0, 1), None);
        let same = plan(1, vec![0, 1], Some(Placement::SameCpu));
        assert_eq!((same.cpu(0, 0, 2), same.cpu(0, 1, 2)), (Some(0), Some(0)));
        let diff = plan(1, vec![0, 1], Some(Placement::DifferentCpus));
        assert_eq!((diff.cpu(0, 0, 2), diff.cpu(0, 1, 2)), (Some(0), Some(1)));
    }
}
