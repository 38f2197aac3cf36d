//! `vfsmix`: will-it-scale's `tests/vfsmix.c` (read in `heatd/will-it-scale` at 78effd3d; the
//! mix is Ingo Molnar's from 2015, <https://lkml.org/lkml/2015/5/19/1009>), which calls
//! `mkstemp("/tmp/willitscale.XXXXXX")` and then the steps below. Per iteration, in the private
//! scratch directory:
//!
//! 0. `open(name, O_RDWR|O_CREAT|O_EXCL, 0600)` — what glibc's `mkstemp` issues (a fresh name
//!    each iteration, as `mkstemp`'s random suffix gives; here a per-task counter). BSD libcs'
//!    `mkstemp` first `stat()`s the directory; that sequence is the `netbsd-seed-vfsmix`
//!    scenario, and this Linux workload follows glibc;
//! 1. `lstat(name)`;
//! 2. `lseek(fd, pagesize - 1, SEEK_SET)`;
//! 3. `close(fd)`;
//! 4. `open(name, O_RDWR|O_CREAT|O_TRUNC, 0600)`;
//! 5. `write(fd, 1 byte)`;
//! 6. `mmap(pagesize, PROT_READ|PROT_WRITE, MAP_SHARED, fd)`;
//! 7. a store to the first byte (a write fault on the shared file page);
//! 8. `munmap`;
//! 9. `close(fd)`;
//! 10. `unlink(name)`.
//!
//! Ten system calls and one write fault, one fresh inode per iteration; the directory's
//! entries change twice (create, unlink).

use std::ffi::CStr;
use std::os::fd::AsFd;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

use super::def::OpHook;
use super::runner::{count_until_stop, step, StepError, Workload};
use crate::sys::mem::{page_size, store_through_shared_mapping_marked, Control, Slot};
use crate::sys::{fs, worker};

/// The names of the steps, in order.
pub const STEPS: [&str; 11] = [
    "open O_CREAT|O_EXCL",
    "lstat",
    "lseek",
    "close",
    "open O_TRUNC",
    "write",
    "mmap",
    "store",
    "munmap",
    "close",
    "unlink",
];

/// vfsmix in one directory.
#[derive(Debug)]
pub struct Vfsmix {
    pub dir: PathBuf,
}

/// A NUL-terminated path `<dir>/vfsmix.<task>.<16 hex digits>` whose suffix is rewritten in
/// place each iteration (no allocation in the loop).
#[derive(Debug)]
pub struct NameBuf {
    bytes: Vec<u8>,
    digits_at: usize,
}

impl NameBuf {
    pub fn new(dir: &std::path::Path, prefix: &str, task: usize) -> NameBuf {
        let mut bytes = dir.as_os_str().as_bytes().to_vec();
        bytes.extend_from_slice(format!("/{prefix}.{task}.").as_bytes());
        let digits_at = bytes.len();
        bytes.extend_from_slice(b"0000000000000000\0");
        NameBuf { bytes, digits_at }
    }

    /// Sets the suffix to `n` in hex and returns the path.
    pub fn set(&mut self, mut n: u64) -> &CStr {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        for i in (0..16).rev() {
            self.bytes[self.digits_at + i] = HEX[(n & 15) as usize];
            n >>= 4;
        }
        CStr::from_bytes_with_nul(&self.bytes).expect("one NUL, at the end")
    }
}

/// One iteration of vfsmix on the file `path` (the steps above, [`STEPS`]), `page` the page
/// size; `hook` told the end of each step.
#[inline(always)]
pub fn vfsmix_iteration<H: OpHook>(
    path: &CStr,
    page: usize,
    hook: &mut H,
) -> Result<(), StepError> {
    let excl = libc::O_RDWR | libc::O_CREAT | libc::O_EXCL;
    let fd = fs::open(path, excl, 0o600).map_err(step(0))?;
    hook.op();
    fs::lstat(path).map_err(step(1))?;
    hook.op();
    fs::lseek(fd.as_fd(), page as i64 - 1).map_err(step(2))?;
    hook.op();
    fs::close(fd).map_err(step(3))?;
    hook.op();
    let trunc = libc::O_RDWR | libc::O_CREAT | libc::O_TRUNC;
    let fd = fs::open(path, trunc, 0o600).map_err(step(4))?;
    hook.op();
    worker::write_byte(fd.as_fd(), 1).map_err(step(5))?;
    hook.op();
    store_through_shared_mapping_marked(fd.as_fd(), page, &mut || hook.op()).map_err(step(6))?;
    fs::close(fd).map_err(step(9))?;
    hook.op();
    fs::unlink(path).map_err(step(10))?;
    hook.op();
    Ok(())
}

impl Workload for Vfsmix {
    type Worker = usize;

    fn prepare(&self, task: usize) -> crate::error::Result<Vec<usize>> {
        Ok(vec![task])
    }

    fn run(&self, task: usize, slot: &Slot, control: &Control) -> Result<(), StepError> {
        let page = page_size();
        let mut name = NameBuf::new(&self.dir, "vfsmix", task);
        let mut seq = 0u64;
        count_until_stop(slot, control, || {
            let path = name.set(seq);
            seq += 1;
            vfsmix_iteration(path, page, &mut ())
        })
    }

    fn step_name(&self, i: u32) -> String {
        STEPS
            .get(i as usize)
            .map_or_else(|| "setup".into(), |s| s.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_change_in_place() {
        let mut n = NameBuf::new(std::path::Path::new("/tmp/x"), "vfsmix", 3);
        assert_eq!(
            n.set(0).to_str().unwrap(),
            "/tmp/x/vfsmix.3.0000000000000000"
        );
        assert_eq!(
            n.set(0xabc).to_str().unwrap(),
            "/tmp/x/vfsmix.3.0000000000000abc"
        );
    }
}
