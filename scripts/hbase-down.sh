#!/usr/bin/env bash
# hbase-down.sh — stop the standalone HBase started by scripts/hbase-up.sh.
#
# Sends SIGTERM to the pid in .hbase/hbase.pid, waits up to HBASE_STOP_TIMEOUT
# seconds (default 30) for the JVM to exit, then sends SIGKILL. Safe to call when
# nothing runs (exits 0), and it never signals a process that is not the HBase JVM
# this repository started (a stale pid file is just removed). Data in .hbase/data
# (or $HBASE_DATA_DIR) is kept; `HBASE_CLEAN=1 make hbase-up` starts from scratch.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
STATE="$ROOT/.hbase"
LOGS="$STATE/logs"
PIDFILE="$STATE/hbase.pid"
ADDRFILE="$STATE/hbase.zk"
STOP_TIMEOUT=${HBASE_STOP_TIMEOUT:-30}

log() { echo "hbase-down: $*" >&2; }

if [[ ! -f $PIDFILE ]]; then
	log "not running (no $PIDFILE)"
	exit 0
fi
PID=$(cat "$PIDFILE" 2>/dev/null || true)
if [[ ! $PID =~ ^[0-9]+$ ]] || ! kill -0 "$PID" 2>/dev/null; then
	log "not running (stale pid file removed)"
	rm -f "$PIDFILE" "$ADDRFILE"
	exit 0
fi
if ! tr '\0' ' ' <"/proc/$PID/cmdline" 2>/dev/null |
	grep -q -- "-Dhbase.log.dir=$LOGS .*org.apache.hadoop.hbase.master.HMaster"; then
	log "pid $PID is not the HBase started here; stale pid file removed"
	rm -f "$PIDFILE" "$ADDRFILE"
	exit 0
fi

# In standalone mode the master often shuts the embedded ZooKeeper down before
# the regionserver has deleted its znode; the regionserver then retries for
# ~20 s after it has closed (flushed) its regions and WALs. Once the log shows
# both, nothing is left to lose: SIGKILL at once instead of waiting.
LOG="$LOGS/hbase.log"
offset=$(stat -c %s "$LOG" 2>/dev/null || echo 0)
rs_done() {
	local new
	new=$(tail -c +$((offset + 1)) "$LOG" 2>/dev/null) || return 1
	grep -q "Shutdown MiniZK cluster" <<<"$new" &&
		grep -Eq '\[RS:0;[^]]*\] ipc\.NettyRpcServer: Stopping server' <<<"$new"
}

start=$SECONDS
log "stopping HBase (pid $PID): SIGTERM"
kill -TERM "$PID" 2>/dev/null || true
reason=
while kill -0 "$PID" 2>/dev/null; do
	if ((SECONDS - start >= STOP_TIMEOUT)); then
		reason="still running after ${STOP_TIMEOUT}s"
		break
	fi
	if rs_done; then
		sleep 1 # let the last log lines and file closes land
		reason="regions and WALs closed, ZooKeeper gone"
		break
	fi
	sleep 0.2
done
if kill -0 "$PID" 2>/dev/null; then
	log "$reason: SIGKILL"
	kill -KILL "$PID" 2>/dev/null || true
	for _ in $(seq 1 50); do
		kill -0 "$PID" 2>/dev/null || break
		sleep 0.1
	done
fi
if kill -0 "$PID" 2>/dev/null; then
	log "pid $PID survived SIGKILL"
	exit 1
fi
rm -f "$PIDFILE" "$ADDRFILE"
log "stopped after $((SECONDS - start))s"
