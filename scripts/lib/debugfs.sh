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
