# SPDX-License-Identifier: GPL-2.0
#
# scripts/bench-common.sh: helpers that scripts/bench, bench-pairs,
# bench-wire and bench-scale source.  The caller sets addr (the rxe
# device's address), dev (the RDMA device), t (seconds per qperf run)
# and repeat (runs per median).
# shellcheck shell=bash disable=SC2154

# qperf prints "latency = 243 us" / "bw = 21.3 MB/sec"; normalise to
# microseconds and MB/s.
qperf_value() {
	awk -v key="$1" '$1 == key && $2 == "=" {
		v = $3; u = $4
		if (u == "ns") v /= 1000; else if (u == "ms") v *= 1000
		else if (u == "sec") v *= 1000000
		else if (u == "GB/sec") v *= 1000; else if (u == "KB/sec") v /= 1000
		else if (u == "bytes/sec") v /= 1000000
		print v; exit }'
}

# pin=(taskset -c 0) runs the qperf server and clients on one CPU.
pin=()
qperf_server=
start_qperf() {
	"${pin[@]}" qperf > /dev/null 2>&1 &
	qperf_server=$!
	sleep 1
}
stop_qperf() {
	kill "$qperf_server" 2> /dev/null
	wait "$qperf_server" 2> /dev/null
}

# Every program runs under a timeout: on a loaded host a perftest
# client can miss its server, which would then wait forever.
qperf_run() {	# qperf_run TEST MSGSIZE KEY
	echo "bench: qperf $1 $2" >&2
	timeout $((t + 60)) "${pin[@]}" qperf -t "$t" -m "$2" "$addr" "$1" 2>&1 | qperf_value "$3"
}

# perftest over the RDMA CM (-R); server first, then the client.
perftest_run() {	# perftest_run PROGRAM SIZE ITERS COLUMN
	local prog=$1 size=$2 iters=$3 col=$4 out
	echo "bench: $prog $size" >&2
	timeout 180 "$prog" -R -d "$dev" -s "$size" -n "$iters" > /dev/null 2>&1 &
	local srv=$!
	sleep 1
	out=$(timeout 180 "$prog" -R -d "$dev" -s "$size" -n "$iters" "$addr" 2>&1)
	wait "$srv" 2> /dev/null
	# The result row is the last line that starts with the size.
	echo "$out" | awk -v s="$size" -v c="$col" '$1 == s { v = $c } END { print v }'
}

# median CMD...: run CMD $repeat times, print the median of its outputs.
median() {
	local _
	for _ in $(seq "$repeat"); do
		"$@"
	done | sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'
}

ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b == 0) print "-";
		else printf "%.2f", a / b }'
}
