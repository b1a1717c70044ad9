#!/bin/bash
# RSS of a dotstub as users run it (control API and answer cache on): idle
# (3 s after start, and at 15 s, after its idle collection: proxy/runtime/idle-collect.ts),
# under 2,000 qps, during a flood of malformed datagrams, and 30/60 s after.
# Needs a running bench/probe-lab.ts (for its upstream). The node flags are
# given explicitly (PROXY_NODE_FLAGS by default) so variants can be compared.
# usage: bench/probe/mem.sh LABEL ["node flags"]
set -eu
here=$(cd "$(dirname "$0")" && pwd); root=$(cd "$here/../.." && pwd)
dir=${PROBE_DIR:-/tmp/dotstub-probe}; lab=$dir/lab.json
label=$1; flags=${2:---max-semi-space-size=4 --expose-gc}
Q=$(jq -r .queryFile $lab)
port=$((20000 + RANDOM % 20000)); cfg=$(mktemp -d /tmp/dotstub-probe-cfg-XXXX)
node $flags "$root/bin/dotstub.js" --listen 127.0.0.1:$port --resolver "$(jq -r .resolver $lab)" --ca "$(jq -r .ca $lab)" \
  --config-dir $cfg --control 127.0.0.1:$((port + 1)) >$cfg/log.txt 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; rm -rf $cfg' EXIT
rss() { awk '/VmRSS/{printf "%.1f", $2/1024}' /proc/$pid/status; }
peak() { local m=0 r; local end=$((SECONDS + $1)); while [ $SECONDS -lt $end ]; do r=$(awk '/VmRSS/{print int($2/1024)}' /proc/$pid/status); [ "$r" -gt "$m" ] && m=$r; sleep 0.5; done; echo $m; }
sleep 3; idle=$(rss); sleep 12; idle15=$(rss)
dnsperf -s 127.0.0.1 -p $port -d $Q -l 10 -Q 2000 >/dev/null 2>&1 & dp=$!; load=$(peak 10); wait $dp; sleep 6; after=$(rss)
node "$here/flood.mjs" $port 10 >$cfg/flood.txt & fp=$!; flood=$(peak 10); wait $fp
f0=$(rss); sleep 30; f30=$(rss); sleep 30; f60=$(rss)
echo "$label: RSS MiB idle $idle (3 s), $idle15 (15 s) | 2000 qps peak $load | idle after $after | flood peak $flood ($(cat $cfg/flood.txt)) | after flood $f0, +30 s $f30, +60 s $f60"
