#!/bin/sh
# The dotstub package's prerm (scripts/package-deb.mjs): give the machine its
# old DNS back while the package's files still exist. It must run BEFORE
# removal: in postrm /opt/dotstub is already gone and the restore command
# with it.
# Never fails the removal: a failed restore is reported, and the journal
# stays in /var/lib/dotstub for `dotstub system-dns restore` or by hand.
DOTSTUB_CLI="${DOTSTUB_CLI:-/opt/dotstub/dotstub-cli}"
STATE_DIR="${DOTSTUB_STATE_DIR:-/var/lib/dotstub}"
if [ -d /run/systemd/system ] && systemctl is-active --quiet dotstub.service 2>/dev/null; then
  # Its stop stops dotstub-enable.service, which restores; the explicit restore below is then a no-op.
  systemctl stop dotstub.service || true
fi
# A takeover made from the app holds its watchdog in dotstub-enable.service.
if [ -d /run/systemd/system ]; then systemctl stop dotstub-enable.service >/dev/null 2>&1 || true; fi
systemctl disable dotstub.service dotstub-restore.service >/dev/null 2>&1 || true
if ! $DOTSTUB_CLI system-dns restore --state-dir "$STATE_DIR"; then
  echo "dotstub: could not restore the DNS settings; the journal is kept in $STATE_DIR" >&2
fi
exit 0
