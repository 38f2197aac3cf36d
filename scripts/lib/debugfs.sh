# Sourced by the scripts that read the kernel's multigrain counters
# (/sys/kernel/debug/multigrain_timestamps): debugfs_mount mounts debugfs where it is not
# mounted (root; a failure is left to the caller to notice), debugfs_restore unmounts it again
# only when this script mounted it, so a script run by another leaves the outer one's mount.
debugfs_mounted_here=
debugfs_mount() {
  if [ -d /sys/kernel/debug ] && ! mountpoint -q /sys/kernel/debug; then
    mount -t debugfs none /sys/kernel/debug 2>/dev/null && debugfs_mounted_here=1
  fi
  return 0
}
debugfs_restore() {
  [ -z "$debugfs_mounted_here" ] || umount /sys/kernel/debug 2>/dev/null || true
}
# The same for tracefs (/sys/kernel/tracing), where tscope counts journal commits in an
# instance of its own: tracefs_mount, tracefs_restore.
tracefs_mounted_here=
tracefs_mount() {
  if [ -d /sys/kernel/tracing ] && ! mountpoint -q /sys/kernel/tracing; then
    mount -t tracefs none /sys/kernel/tracing 2>/dev/null && tracefs_mounted_here=1
  fi
  return 0
}
tracefs_restore() {
  [ -z "$tracefs_mounted_here" ] || umount /sys/kernel/tracing 2>/dev/null || true
}
