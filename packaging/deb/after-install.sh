#!/bin/sh
# The dotstub package's postinst (scripts/package-deb.mjs runs it as it is): install the service units.
# dotstub.service is not started or enabled: enabling private DNS is the
# user's choice, from the app. dotstub-restore.service is enabled whatever
# that choice: at boot it gives back DNS settings a power cut left taken
# over (with dotstub.service disabled, nothing else would).
set -e
# The dotstub group: its members may control the service through its control
# socket (/run/dotstub/control.sock, root:dotstub 0660) without sudo. A group
# of dotstub's own, not netdev: choosing the resolver decides who sees every
# name this machine looks up, which is more than "manage network
# connections", so it is given on purpose (sudo adduser USER dotstub) and not
# to everyone netdev already holds. Kept on purge (files may still name it),
# as Debian does with system groups.
if ! getent group dotstub >/dev/null; then
  if command -v addgroup >/dev/null; then addgroup --system dotstub >/dev/null; else groupadd --system dotstub; fi
fi
install -m 0644 /opt/dotstub/resources/dotstub.service /lib/systemd/system/dotstub.service
install -m 0644 /opt/dotstub/resources/dotstub-restore.service /lib/systemd/system/dotstub-restore.service
if [ -d /run/systemd/system ]; then systemctl daemon-reload || true; fi
# Works without a running systemd too (symlinks only).
systemctl enable dotstub-restore.service >/dev/null 2>&1 || true
exit 0
