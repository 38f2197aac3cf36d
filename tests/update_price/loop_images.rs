//! The update price on loop images of ext4 (plain, lazytime, without a journal), xfs and
//! btrfs, each as its kernel code says: made, mounted, probed and removed by the test (root).

use super::*;

/// A filesystem image made and loop-mounted in a temporary directory, unmounted and removed on
/// drop (even when the test fails).
struct LoopFs {
    _dir: tempfile::TempDir,
    mnt: std::path::PathBuf,
    /// Made with a journal (not ext4's `^has_journal`).
    journal: bool,
}

impl LoopFs {
    fn new(mkfs: &[&str], options: &str) -> LoopFs {
        // The image in memory where it can be: the filesystem's code is the same, and the
        // fsyncs of the write-stat-fsync pair leave the machine's disk to the other tests.
        let dir = if std::path::Path::new("/dev/shm").is_dir() {
            tempfile::tempdir_in("/dev/shm").unwrap()
        } else {
            tempfile::tempdir().unwrap()
        };
        let img = dir.path().join("fs.img");
        let mnt = dir.path().join("mnt");
        std::fs::create_dir(&mnt).unwrap();
        // Sparse: 512 MiB is what mkfs.xfs accepts; only the metadata is written.
        std::fs::File::create(&img)
            .unwrap()
            .set_len(512 << 20)
            .unwrap();
        let ok = |c: &mut std::process::Command| {
            let o = c.output().unwrap();
            assert!(
                o.status.success(),
                "{c:?}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
        };
        ok(std::process::Command::new(mkfs[0])
            .args(&mkfs[1..])
            .arg(&img));
        let opts = if options.is_empty() {
            "loop".to_string()
        } else {
            format!("loop,{options}")
        };
        ok(std::process::Command::new("mount")
            .args(["-o", &opts])
            .arg(&img)
            .arg(&mnt));
        LoopFs {
            _dir: dir,
            mnt,
            journal: !mkfs.contains(&"^has_journal"),
        }
    }
}

impl Drop for LoopFs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.mnt).status();
    }
}

#[test]
fn loop_images_price_each_filesystem_as_its_kernel_code_says() {
    for cap in [
        "loop-mount",
        "multigrain",
        "mkfs.ext4",
        "mkfs.xfs",
        "mkfs.btrfs",
    ] {
        if crate::skip::without(cap) {
            return;
        }
    }
    let _cpu = cpu_lock();
    let images = [
        ("ext4", LoopFs::new(&["mkfs.ext4", "-q", "-F"], "")),
        ("ext4", LoopFs::new(&["mkfs.ext4", "-q", "-F"], "lazytime")),
        (
            "ext4",
            LoopFs::new(&["mkfs.ext4", "-q", "-F", "-O", "^has_journal"], ""),
        ),
        ("xfs", LoopFs::new(&["mkfs.xfs", "-q", "-f"], "")),
        ("btrfs", LoopFs::new(&["mkfs.btrfs", "-q", "-f"], "")),
    ];
    let mut args = vec!["probe", "--quick", "--json"];
    for (_, fs) in &images {
        args.extend(["--dir", fs.mnt.to_str().unwrap()]);
    }
    let v = json(&args);
    let fss = v["filesystems"].as_array().unwrap();
    assert_eq!(fss.len(), images.len());
    for ((kind, img), f) in images.iter().zip(fss) {
        assert_eq!(f["fs_type"], *kind, "{f}");
        assert_eq!(f["dir"], img.mnt.to_str().unwrap());
        assert_eq!(f["multigrain"], true, "{f}");
        // Every filesystem's query is priced by its chmod-stat pair's statx timed on its own.
        assert!(f["query_ns"]["point"].as_f64().is_some(), "{f}");
        assert_eq!(f["query_pattern"], "chmod-stat", "{f}");
        assert_eq!(f["query_pair"]["pattern"]["kind"], "chmod", "{f}");
        // Every filesystem's atime update is priced by the read after the write.
        assert_eq!(f["read_pair"]["pattern"]["kind"], "write_read", "{f}");
        assert_eq!(
            f["priced_by"]["atime_update_ns"], "write-read-stat pair against write-stat",
            "{f}"
        );
        // A journal handle, a log transaction, or at least the inode's own store: a price
        // above 0, decided on a probe of this directory as long as it takes. Every btrfs
        // write stores its time: the question changes no c/mtime update of write-stat, so
        // btrfs has none to price there, and its atime update is the one it stores apart.
        if *kind == "btrfs" {
            assert!(f["update_ns"].is_null(), "{f}");
            assert_price_above_zero(f, "atime_update_ns", &img.mnt);
        } else {
            assert_price_above_zero(f, "update_ns", &img.mnt);
        }
        // The commit a full fsync forces is measured where the model counts one (ext4, xfs),
        // by write-stat-fsync; where the journal's tracepoints are counted, every queried
        // fsync commits, whatever the speed (its write always stores a new time).
        let sync = &f["sync_pair"];
        if *kind == "btrfs" {
            assert!(sync.is_null(), "{f}");
            continue;
        }
        assert_eq!(sync["pattern"]["kind"], "write_fsync", "{f}");
        if let Some(q) = sync["kernel_counts"]["queried"]["journal_commits"].as_f64() {
            if img.journal {
                assert!(q >= 0.9, "{sync}");
            }
        }
    }
    let lazy = fss[1]["mount_options"].as_array().unwrap();
    assert!(lazy.iter().any(|o| o == "lazytime"), "{lazy:?}");
}

/// Most probes of one directory `update_above_zero` takes before it gives up deciding.
const PROBES: usize = 4;

/// The price `field` of `f` (a `filesystems[]` entry of `dir`) is above 0. A probe whose
/// interval holds 0 decides nothing (another job on the machine widens it): the directory is
/// probed again, longer, until the interval is clear of 0. An interval wholly at or below 0
/// fails whenever it comes; one still holding 0 after [`PROBES`] probes is said on stderr
/// (the machine was too busy to decide), never a failure a load can cause.
fn assert_price_above_zero(f: &serde_json::Value, field: &str, dir: &std::path::Path) {
    let mut entry = f.clone();
    for probe in 1..=PROBES {
        let (lower, upper) = (
            f64_at(&entry, &[field, "lower"]),
            f64_at(&entry, &[field, "upper"]),
        );
        assert!(upper > 0.0, "{field} below 0: {entry}");
        if lower > 0.0 {
            return;
        }
        if probe == PROBES {
            break;
        }
        let mut args = vec!["probe", "--json", "--dir", dir.to_str().unwrap()];
        if probe < PROBES - 1 {
            args.insert(1, "--quick");
        }
        entry = json(&args)["filesystems"][0].clone();
    }
    eprintln!(
        "undecided: {PROBES} probes of {} left {field}'s interval holding 0 (a busy machine): \
         {entry}",
        dir.display()
    );
}
