#!/bin/sh
# deb postinst (electron-builder deb.afterInstall): install the service unit,
# don't start it — enabling private DNS is the user's choice, from the app.
set -e
install -m 0644 /opt/dotstub/resources/dotstub.service /lib/systemd/system/dotstub.service
if [ -d /run/systemd/system ]; then systemctl daemon-reload || true; fi
exit 0
