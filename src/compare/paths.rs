//! The paths the sources run: which sources read one clock through the same code, so that one
//! change moves them alike. [`super::path`] gives each path one word; [`super::noise`] lets a
//! path cast one vote for a shift.

/// A path and the sources that run it.
#[derive(Debug, Clone, Copy)]
pub struct Path {
    pub name: &'static str,
    pub sources: &'static [&'static str],
}

/// The paths compare knows.
pub const PATHS: &[Path] = &[
    Path {
        name: "the vDSO clock read (clocksource read and conversion in user space)",
        sources: &[
            "vdso:realtime",
            "vdso:monotonic",
            "vdso:monotonic_raw",
            "vdso:boottime",
            "vdso:tai",
            "vdso:gettimeofday",
            "std:instant",
            "std:systemtime",
        ],
    },
    Path {
        name: "the kernel's clock read by syscall (clock_gettime, gettimeofday)",
        sources: &[
            "syscall:realtime",
            "syscall:monotonic",
            "syscall:monotonic_raw",
            "syscall:boottime",
            "syscall:tai",
            "syscall:gettimeofday",
        ],
    },
];
