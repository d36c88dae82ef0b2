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
