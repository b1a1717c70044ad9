#!/bin/sh
# The dotstub package's postinst (scripts/package-deb.mjs runs it as it is): install the service units.
# dotstub.service is not started or enabled: enabling private DNS is the
# user's choice, from the app. dotstub-restore.service is enabled whatever
# that choice: at boot it gives back DNS settings a power cut left taken
# over (with dotstub.service disabled, nothing else would).
set -e
# The dotstub group: its members may control the service through its control
# socket (/run/dotstub/control.sock, _dotstub:dotstub 0660) without sudo. A group
# of dotstub's own, not netdev: choosing the resolver decides who sees every
# name this machine looks up, which is more than "manage network
# connections", so it is given on purpose (sudo adduser USER dotstub) and not
# to everyone netdev already holds. Kept on purge (files may still name it),
# as Debian does with system groups.
if ! getent group dotstub >/dev/null; then
  if command -v addgroup >/dev/null; then addgroup --system dotstub >/dev/null; else groupadd --system dotstub; fi
fi
# _dotstub: the system user the proxy runs as (everything that reads the
# network), without a home or a shell. A user of its own, not the dotstub
# group above: that group is the desktop users allowed to drive the service;
# the unit gives the proxy that group as a supplementary one (not a member
# in /etc/group) only so it can give its socket to the group.
# Kept on purge, as Debian does with system users.
if ! getent passwd _dotstub >/dev/null; then
  if command -v adduser >/dev/null; then
    adduser --system --group --home /nonexistent --no-create-home --quiet _dotstub
  else
    useradd --system --user-group --home-dir /nonexistent --no-create-home --shell /usr/sbin/nologin _dotstub
  fi
fi
# /var/lib/dotstub is root's: the takeover's journal (what root's restore
# puts back) must not be writable or replaceable by the proxy. The proxy's
# own state (settings, token) is in /var/lib/dotstub/proxy, which systemd
# gives to _dotstub at the service's start. Before the proxy had a user of
# its own it kept that state in /var/lib/dotstub itself: moved on upgrade.
install -d -m 0755 /var/lib/dotstub
chmod 0755 /var/lib/dotstub
if [ ! -d /var/lib/dotstub/proxy ]; then
  mkdir -m 0700 /var/lib/dotstub/proxy
  for f in /var/lib/dotstub/* /var/lib/dotstub/.[!.]*; do
    [ -e "$f" ] || continue
    case "${f##*/}" in proxy|system-dns.*) ;; *) mv "$f" /var/lib/dotstub/proxy/ ;; esac
  done
fi
for unit in dotstub.service dotstub-restore.service dotstub-enable.service dotstub-disable.service; do
  install -m 0644 "/opt/dotstub/resources/$unit" "/lib/systemd/system/$unit"
done
if [ -d /run/systemd/system ]; then systemctl daemon-reload || true; fi
# Works without a running systemd too (symlinks only).
systemctl enable dotstub-restore.service >/dev/null 2>&1 || true
exit 0
