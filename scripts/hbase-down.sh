#!/usr/bin/env bash
# hbase-down.sh — stop the HBase started by scripts/hbase-up.sh: the standalone
# JVM (.hbase/hbase.pid) and/or the daemons of a local cluster
# (.hbase/master.pid, .hbase/regionservers.pids, .hbase/zookeeper.pid).
#
# Sends SIGTERM, waits up to HBASE_STOP_TIMEOUT seconds (default 30) for the JVMs
# to exit, then sends SIGKILL. A cluster is stopped master first (so that it does
# not reassign the regions of the region servers that stop next), then the region
# servers together (each flushes and closes its regions), then ZooKeeper. (A
# cluster shutdown through the master, `hbase master stop --shutDownCluster`,
# costs one more JVM start and is no better here: HBase 2.6 still runs a
# ServerCrashProcedure for each previous region server at the next start.) Safe to
# call when nothing runs (exits 0), and it never signals a process that is not a
# JVM this repository started (a stale pid file is just removed; a region server
# a test has killed is skipped). Data in .hbase/data or .hbase/cluster-data (or
# $HBASE_DATA_DIR) is kept; `HBASE_CLEAN=1 make hbase-up` starts from scratch.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
STATE="$ROOT/.hbase"
LOGS="$STATE/logs"
PIDFILE="$STATE/hbase.pid"
ZK_PIDFILE="$STATE/zookeeper.pid"
MASTER_PIDFILE="$STATE/master.pid"
RS_PIDFILE="$STATE/regionservers.pids"
ADDRFILE="$STATE/hbase.zk"
STOP_TIMEOUT=${HBASE_STOP_TIMEOUT:-30}

MASTER_CLASS=org.apache.hadoop.hbase.master.HMaster
RS_CLASS=org.apache.hadoop.hbase.regionserver.HRegionServer
ZK_CLASS=org.apache.hadoop.hbase.zookeeper.HQuorumPeer

log() { echo "hbase-down: $*" >&2; }

# is_ours PID CLASS: true when PID is alive and is a JVM hbase-up.sh started with
# main class CLASS.
is_ours() {
	local pid=$1
	[[ $pid =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null || return 1
	tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q -- "-Dhbase.log.dir=$LOGS .*$2 start"
}

# any_alive PID…: true when one of the pids is alive.
any_alive() {
	local p
	for p in "$@"; do
		kill -0 "$p" 2>/dev/null && return 0
	done
	return 1
}

# stop_jvms WHAT PID…: SIGTERM, wait up to STOP_TIMEOUT seconds, then SIGKILL.
# Fails only if a pid survives SIGKILL.
stop_jvms() {
	local what=$1 t0=$SECONDS
	shift
	(($#)) || return 0
	log "stopping $what (pid $*): SIGTERM"
	kill -TERM "$@" 2>/dev/null || true
	while any_alive "$@" && ((SECONDS - t0 < STOP_TIMEOUT)); do
		sleep 0.2
	done
	if any_alive "$@"; then
		log "$what still running after ${STOP_TIMEOUT}s: SIGKILL"
		kill -KILL "$@" 2>/dev/null || true
		for _ in $(seq 1 50); do
			any_alive "$@" || break
			sleep 0.1
		done
	fi
	if any_alive "$@"; then
		log "$what survived SIGKILL"
		return 1
	fi
	log "$what stopped after $((SECONDS - t0))s"
}

# stop_standalone: the one-JVM HBase of .hbase/hbase.pid.
stop_standalone() {
	local PID reason offset start LOG
	PID=$(cat "$PIDFILE" 2>/dev/null || true)
	if [[ ! $PID =~ ^[0-9]+$ ]] || ! kill -0 "$PID" 2>/dev/null; then
		log "standalone HBase not running (stale pid file removed)"
		rm -f "$PIDFILE" "$ADDRFILE"
		return 0
	fi
	if ! is_ours "$PID" "$MASTER_CLASS"; then
		log "pid $PID is not the HBase started here; stale pid file removed"
		rm -f "$PIDFILE" "$ADDRFILE"
		return 0
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
		return 1
	fi
	rm -f "$PIDFILE" "$ADDRFILE"
	log "stopped after $((SECONDS - start))s"
}

# stop_cluster: the daemons of a local cluster, master first, ZooKeeper last.
stop_cluster() {
	local start=$SECONDS p master=() rs=() zk=() rc=0
	p=$(cat "$MASTER_PIDFILE" 2>/dev/null || true)
	is_ours "$p" "$MASTER_CLASS" && master=("$p")
	if [[ -f $RS_PIDFILE ]]; then
		while read -r p; do
			is_ours "$p" "$RS_CLASS" && rs+=("$p")
		done <"$RS_PIDFILE"
	fi
	p=$(cat "$ZK_PIDFILE" 2>/dev/null || true)
	is_ours "$p" "$ZK_CLASS" && zk=("$p")
	if ((${#master[@]} + ${#rs[@]} + ${#zk[@]} == 0)); then
		log "cluster not running (stale pid files removed)"
	else
		stop_jvms HMaster "${master[@]}" || rc=1
		stop_jvms "${#rs[@]} HRegionServer(s)" "${rs[@]}" || rc=1
		stop_jvms ZooKeeper "${zk[@]}" || rc=1
		((rc == 0)) || return 1
		log "cluster stopped after $((SECONDS - start))s"
	fi
	rm -f "$MASTER_PIDFILE" "$RS_PIDFILE" "$ZK_PIDFILE" "$ADDRFILE"
}

found=
rc=0
if [[ -f $PIDFILE ]]; then
	found=1
	stop_standalone || rc=1
fi
if [[ -f $MASTER_PIDFILE || -f $RS_PIDFILE || -f $ZK_PIDFILE ]]; then
	found=1
	stop_cluster || rc=1
fi
[[ -n $found ]] || log "not running (no pid files in $STATE)"
exit $rc
