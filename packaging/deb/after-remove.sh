#!/bin/sh
# The dotstub package's postrm (scripts/package-deb.mjs): the restore already ran in
# prerm (before-remove.sh); here only the unit goes, and on purge the state
# dir — unless a journal is still in it (a restore that failed): that holds
# the user's original DNS settings and is never deleted.
rm -f /lib/systemd/system/dotstub.service /lib/systemd/system/dotstub-restore.service /lib/systemd/system/dotstub-enable.service /lib/systemd/system/dotstub-disable.service
if [ -d /run/systemd/system ]; then systemctl daemon-reload || true; fi
if [ "$1" = "purge" ] && [ ! -e /var/lib/dotstub/system-dns.journal.json ]; then rm -rf /var/lib/dotstub; fi
exit 0
