#!/bin/sh
# deb postinst (electron-builder deb.afterInstall): install the service units.
# dotstub.service is not started or enabled: enabling private DNS is the
# user's choice, from the app. dotstub-restore.service is enabled whatever
# that choice: at boot it gives back DNS settings a power cut left taken
# over (with dotstub.service disabled, nothing else would).
set -e
install -m 0644 /opt/dotstub/resources/dotstub.service /lib/systemd/system/dotstub.service
install -m 0644 /opt/dotstub/resources/dotstub-restore.service /lib/systemd/system/dotstub-restore.service
if [ -d /run/systemd/system ]; then systemctl daemon-reload || true; fi
# Works without a running systemd too (symlinks only).
systemctl enable dotstub-restore.service >/dev/null 2>&1 || true
exit 0
