#!/bin/bash
# Latency at a peer's UDP socket, from a packet capture on lo (not dnsperf's own
# timing, which shows ~5 ms at 200 qps for some peers whose wire latency is
# 0.4 ms), and CPU per query from perf stat. Needs a running bench/probe-lab.ts.
# usage: bench/probe/wire.sh PEER QPS SECONDS
set -eu
dir=${PROBE_DIR:-/tmp/dotstub-probe}; lab=$dir/lab.json
p=$1; rate=$2; secs=$3
Q=$(jq -r .queryFile $lab); port=$(jq -r ".\"$p\".port" $lab); pid=$(jq -r ".\"$p\".pid" $lab)
pcap=$(mktemp /tmp/dotstub-probe-XXXX.pcap); stat=$(mktemp /tmp/dotstub-probe-XXXX.txt)
trap 'rm -f $pcap $stat' EXIT
timeout $((secs + 3)) tcpdump -i lo -n -B 16384 -w $pcap "udp port $port" 2>/dev/null & tp=$!
perf stat -e task-clock,context-switches -p $pid -o $stat -- sleep $((secs + 1)) >/dev/null 2>&1 & sp=$!
sleep 0.5
dnsperf -s 127.0.0.1 -p $port -d $Q -l $secs -Q $rate >/dev/null 2>&1
wait $sp; sleep 0.3; kill $tp 2>/dev/null || true; wait $tp 2>/dev/null || true
tshark -r $pcap -d udp.port==$port,dns -T fields -e frame.time_epoch -e udp.srcport -e udp.dstport -e dns.id -e dns.flags.response 2>/dev/null | awk '
 $5=="False" || $5==0 {q[$2" "$4]=$1; next}
 { k=$3" "$4; if (k in q) { print ($1-q[k])*1000; delete q[k] } }' | sort -n |
 awk -v p=$p -v r=$rate '{a[NR]=$1} END{printf "%s @%s qps: n=%d p50=%.3f p90=%.3f p99=%.3f max=%.3f ms", p, r, NR, a[int(NR*0.5)], a[int(NR*0.9)], a[int(NR*0.99)], a[NR]}'
awk -v n=$((rate * secs)) '/task-clock/{printf " cpu=%.0f us/query", $1*1000/n} /context-switches/{printf " cs=%.2f/query", $1/n} END{print ""}' $stat
