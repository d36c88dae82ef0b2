# Sourced by scripts/bench.sh and scripts/peer.sh: starting and stopping the
# servers a benchmark runs in the background.

# wait_ready PID LOG WHAT CMD...: waits up to 60 s until CMD succeeds (a
# readiness probe); fails, printing LOG, as soon as PID has exited, or
# saying that WHAT did not become ready.
wait_ready() {
	local pid=$1 log=$2 what=$3
	shift 3
	for _ in $(seq 600); do
		"$@" >/dev/null 2>&1 && return 0
		kill -0 "$pid" 2>/dev/null || { cat "$log" >&2; return 1; }
		sleep 0.1
	done
	echo "$what did not become ready" >&2
	return 1
}

# stop_pid PID: stops the background process PID (none when empty) and
# waits for it to exit.
stop_pid() {
	[[ -n ${1:-} ]] || return 0
	kill "$1" 2>/dev/null || true
	wait "$1" 2>/dev/null || true
}

# hbase_restart ZK: stops the HBase make hbase-up started from this tree
# (scripts/hbase-down.sh) and starts it again with make hbase-up, with the
# caller's environment (HBASE_HEAP, HBASE_REGIONSERVERS: the settings it
# was started with), its data kept (HBASE_CLEAN=0) and its ZooKeeper on
# the same port as ZK (127.0.0.1:PORT): a benchmark measures an HBase
# that has opened its regions afresh, not the one the import filled.
# Prints the ZooKeeper address.
hbase_restart() {
	echo "bench: restarting HBase after the import" >&2
	bash scripts/hbase-down.sh >&2 || return 1
	HBASE_CLEAN=0 HBASE_ZK_PORT=${1##*:} make -s hbase-up | tail -n 1
}

# hbase_settle DIR: waits until the RegionServers of the HBase whose
# .hbase directory is DIR (its pid files: hbase.pid, or
# regionservers.pids of a cluster) have settled: their compaction and
# flush queues (compactionQueueLength, flushQueueLength of the bean
# Hadoop:service=HBase,name=RegionServer,sub=Server) empty for 10 s in a
# row, at most BENCH_SETTLE_TIMEOUT (default 600) s. That HBase serves no
# web UI, hence no /jmx: scripts/HBaseSettle.java reads the bean over the
# JVMs' local JMX agent (the JDK's attach API, with the JVM's own java).
# Without a running JVM in DIR it says so and returns; a timeout or a JVM
# it cannot read is a warning, not a failure.
hbase_settle() {
	local dir=$1 f pid pids=()
	for f in "$dir/hbase.pid" "$dir/regionservers.pids"; do
		[[ -f $f ]] || continue
		while read -r pid; do
			[[ $pid =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null && pids+=("$pid")
		done <"$f"
	done
	if ((${#pids[@]} == 0)); then
		echo "bench: no running HBase JVM in $dir: not waiting for it to settle" >&2
		return 0
	fi
	echo "bench: waiting for HBase (pid ${pids[*]}) to settle: compaction and flush queues empty for 10 s" >&2
	"$(readlink "/proc/${pids[0]}/exe")" -XX:TieredStopAtLevel=1 scripts/HBaseSettle.java \
		"${BENCH_SETTLE_TIMEOUT:-600}" 10 "${pids[@]}" ||
		echo "bench: warning: HBase did not settle (or could not be read); measuring anyway" >&2
}
