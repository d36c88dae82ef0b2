#!/usr/bin/env bash
# hbase-up.sh — start a local HBase on 127.0.0.1 for the gateway's tests and local
# runs, from the Maven Central jars of `make hbase-jars` (.hbase/lib):
#
#   make hbase-up                          standalone: one JVM (HMaster + embedded
#                                          ZooKeeper + one RegionServer)
#   HBASE_REGIONSERVERS=N make hbase-up    N >= 2: a pseudo-distributed cluster, one
#                                          JVM per daemon — ZooKeeper (HQuorumPeer),
#                                          one HMaster and N HRegionServers, each on
#                                          ports of its own, sharing one root
#                                          directory on the local filesystem
#
# It waits until HBase is really usable — ZooKeeper answers `ruok` with `imok`,
# the master has completed initialization, every region server has checked in,
# and a probe client has created a table with one region on each region server,
# written and read a row in each region and dropped the table — then prints the
# ZooKeeper address `127.0.0.1:PORT` as the LAST line of stdout (progress goes to
# stderr), so a caller can do
#     GATEWAY_TEST_HBASE_ZK=$(make -s hbase-up | tail -n1)
# If HBase does not come up within HBASE_START_TIMEOUT seconds (or a JVM dies), it
# prints the tail of the logs, stops the JVMs it started and exits non-zero.
# If an HBase of the same kind started by this script is already running, it
# prints its address and exits 0; for a cluster it first restarts a master or
# region servers that have died (say, killed by a test) and adds region servers
# up to N. Stop it with `make hbase-down`.
#
# Files (all under the gitignored .hbase/ of the repository):
#   .hbase/lib/                runtime classpath (make hbase-jars)
#   .hbase/conf/               hbase-site.xml generated from hbase-local/conf/
#                              hbase-site.xml.in (standalone) or
#                              hbase-cluster-site.xml.in (cluster)
#   .hbase/hbase.zk            the ZooKeeper address
#   standalone:
#   .hbase/data/               HBase root dir, WALs, ZooKeeper data (or $HBASE_DATA_DIR)
#   .hbase/logs/               hbase.log (log4j2), hbase.out (JVM stdout/stderr)
#   .hbase/hbase.pid           pid of the HBase JVM
#   cluster:
#   .hbase/cluster-data/       HBase root dir, WALs, ZooKeeper data (or $HBASE_DATA_DIR)
#   .hbase/logs/               zookeeper.log, master.log, regionserver-I.log (and .out);
#                              a restarted daemon's previous logs end in .1
#   .hbase/zookeeper.pid       pid of the ZooKeeper JVM
#   .hbase/master.pid          pid of the HMaster JVM
#   .hbase/regionservers.pids  pids of the HRegionServer JVMs, one per line (line I is
#                              region server I; a dead one keeps its line until restarted)
#
# Environment:
#   HBASE_REGIONSERVERS  1 (default): standalone; N >= 2: a cluster of N region servers
#   HBASE_DATA_DIR       data directory (default .hbase/data, or .hbase/cluster-data)
#   HBASE_ZK_PORT        ZooKeeper client port (default: a free port in 20000–29999)
#   HBASE_START_TIMEOUT  seconds to wait for HBase to be usable (default 180)
#   HBASE_HEAP           heap of the standalone JVM (default 1g); its block cache is
#                        hfile.block.cache.size, HBase's default 0.4 of the heap
#   HBASE_ZK_HEAP        cluster: heap of the ZooKeeper JVM (default 128m)
#   HBASE_MASTER_HEAP    cluster: heap of the HMaster JVM (default 512m)
#   HBASE_RS_HEAP        cluster: heap of each HRegionServer JVM (default 640m)
#   HBASE_ZK_SESSION_TIMEOUT  cluster: ZooKeeper session timeout in ms, i.e. how soon
#                        a dead region server is noticed (default 5000, at least 1000)
#   HBASE_CLEAN=1        delete the data directory before starting
#   HBASE_JAVA           java binary (default $JAVA_HOME/bin/java, then `java`; a JDK
#                        11–21 is required — Hadoop 3.4 fails on newer ones — and a
#                        JDK 17 under /usr/lib/jvm is preferred over an unsuitable default)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
STATE="$ROOT/.hbase"
LIB="$STATE/lib"
CONF="$STATE/conf"
LOGS="$STATE/logs"
PIDFILE="$STATE/hbase.pid"
ZK_PIDFILE="$STATE/zookeeper.pid"
MASTER_PIDFILE="$STATE/master.pid"
RS_PIDFILE="$STATE/regionservers.pids"
ADDRFILE="$STATE/hbase.zk"
LOG4J="$ROOT/hbase-local/conf/log4j2.properties"
TIMEOUT=${HBASE_START_TIMEOUT:-180}

# Main classes of the daemons.
MASTER_CLASS=org.apache.hadoop.hbase.master.HMaster
RS_CLASS=org.apache.hadoop.hbase.regionserver.HRegionServer
ZK_CLASS=org.apache.hadoop.hbase.zookeeper.HQuorumPeer

log() { echo "hbase-up: $*" >&2; }

RS_COUNT=${HBASE_REGIONSERVERS:-1}
if [[ ! $RS_COUNT =~ ^[0-9]+$ ]] || ((RS_COUNT < 1 || RS_COUNT > 16)); then
	log "HBASE_REGIONSERVERS=$RS_COUNT: want a number of region servers from 1 to 16"
	exit 1
fi
CLUSTER=
((RS_COUNT >= 2)) && CLUSTER=1

# zk_ruok PORT: true when the ZooKeeper on 127.0.0.1:PORT answers "imok".
zk_ruok() {
	local ans
	ans=$( (exec 3<>"/dev/tcp/127.0.0.1/$1" && printf ruok >&3 && timeout 2 cat <&3) 2>/dev/null) || true
	[[ $ans == imok ]]
}

# port_in_use PORT: true when something accepts connections on 127.0.0.1:PORT.
port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# is_ours PID CLASS: true when PID is alive and is a JVM this script started with
# main class CLASS (hbase-down.sh applies the same test before it signals a pid).
is_ours() {
	local pid=$1
	[[ $pid =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null || return 1
	tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q -- "-Dhbase.log.dir=$LOGS .*$2 start"
}

# java_major JAVA: the feature version of a java binary (8, 11, 17, …).
java_major() {
	"$1" -version 2>&1 | awk -F'"' '/version/ { split($2, v, "."); print (v[1] == "1") ? v[2] : v[1]; exit }'
}

pick_java() {
	local cand major
	for cand in "${HBASE_JAVA:-}" "${JAVA_HOME:+$JAVA_HOME/bin/java}" "$(command -v java || true)" \
		/usr/lib/jvm/java-17-openjdk-amd64/bin/java /usr/lib/jvm/java-17-openjdk*/bin/java /usr/lib/jvm/*17*/bin/java; do
		[[ -n $cand && -x $cand ]] || continue
		major=$(java_major "$cand")
		if [[ $major =~ ^[0-9]+$ ]] && ((major >= 11 && major <= 21)); then
			echo "$cand"
			return 0
		fi
		if [[ -n ${HBASE_JAVA:-} && $cand == "$HBASE_JAVA" ]]; then
			log "HBASE_JAVA=$HBASE_JAVA is Java $major; HBase 2.6 on Hadoop 3.4 needs Java 11–21 (17 preferred)"
			return 1
		fi
		log "skipping $cand (Java ${major:-?}; HBase 2.6 on Hadoop 3.4 needs 11–21)"
	done
	log "no Java 11–21 found (set HBASE_JAVA or JAVA_HOME to a JDK 17)"
	return 1
}

# --- already running? -----------------------------------------------------------
# The cluster's state: ZK_PID, MASTER_PID and RS_PIDS (index I-1 = region server I).
ZK_PID=$(cat "$ZK_PIDFILE" 2>/dev/null || true)
MASTER_PID=$(cat "$MASTER_PIDFILE" 2>/dev/null || true)
RS_PIDS=()
[[ -f $RS_PIDFILE ]] && mapfile -t RS_PIDS <"$RS_PIDFILE"
cluster_running() {
	local p
	is_ours "$ZK_PID" "$ZK_CLASS" || is_ours "$MASTER_PID" "$MASTER_CLASS" && return 0
	for p in "${RS_PIDS[@]}"; do
		is_ours "$p" "$RS_CLASS" && return 0
	done
	return 1
}
STANDALONE_PID=$(cat "$PIDFILE" 2>/dev/null || true)

RESUME= # set when more daemons are started for a running cluster
if [[ -z $CLUSTER ]]; then
	if cluster_running; then
		log "a local HBase cluster is running (.hbase/master.pid); run 'make hbase-down' before starting a standalone HBase"
		exit 1
	fi
	if [[ -f $PIDFILE ]]; then
		if is_ours "$STANDALONE_PID" "$MASTER_CLASS"; then
			addr=$(cat "$ADDRFILE" 2>/dev/null || true)
			if [[ -n $addr ]] && zk_ruok "${addr##*:}"; then
				log "HBase already running (pid $STANDALONE_PID)"
				echo "$addr"
				exit 0
			fi
			log "an HBase (pid $STANDALONE_PID) is running but its ZooKeeper ${addr:-?} does not answer; run 'make hbase-down' first"
			exit 1
		fi
		rm -f "$PIDFILE" "$ADDRFILE"
	fi
else
	if is_ours "$STANDALONE_PID" "$MASTER_CLASS"; then
		log "a standalone HBase is running (pid $STANDALONE_PID); run 'make hbase-down' before starting a cluster"
		exit 1
	fi
	rm -f "$PIDFILE"
	if is_ours "$ZK_PID" "$ZK_CLASS"; then
		addr=$(cat "$ADDRFILE" 2>/dev/null || true)
		if [[ -z $addr ]] || ! zk_ruok "${addr##*:}" || [[ ! -f $CONF/hbase-site.xml ]]; then
			log "the cluster's ZooKeeper (pid $ZK_PID) does not answer at ${addr:-?}; run 'make hbase-down' first"
			exit 1
		fi
		RESUME=1
	elif cluster_running; then
		log "a local HBase cluster is partly running without its ZooKeeper; run 'make hbase-down' first"
		exit 1
	else
		rm -f "$ZK_PIDFILE" "$MASTER_PIDFILE" "$RS_PIDFILE" "$ADDRFILE"
		ZK_PID= MASTER_PID= RS_PIDS=()
	fi
fi

# --- prerequisites -----------------------------------------------------------------
if ! compgen -G "$LIB/hbase-server-*.jar" >/dev/null; then
	log "no HBase jars in $LIB: run 'make hbase-jars' (or use 'make hbase-up')"
	exit 1
fi
JAVA=$(pick_java)
log "java: $JAVA ($("$JAVA" -version 2>&1 | head -n1))"
mkdir -p "$CONF" "$LOGS"

if [[ -n $RESUME ]]; then
	ADDR=$(cat "$ADDRFILE")
	PORT=${ADDR##*:}
	log "cluster running (ZooKeeper $ADDR, pid $ZK_PID): starting the daemons that are missing"
else
	if [[ -n $CLUSTER ]]; then
		DATA=${HBASE_DATA_DIR:-$STATE/cluster-data}
	else
		DATA=${HBASE_DATA_DIR:-$STATE/data}
	fi
	mkdir -p "$DATA"
	DATA=$(cd "$DATA" && pwd)
	if [[ ${HBASE_CLEAN:-} == 1 ]]; then
		case "$DATA" in
		/ | "$HOME" | "$ROOT" | "$STATE")
			log "HBASE_CLEAN=1: refusing to delete $DATA"
			exit 1
			;;
		esac
		log "HBASE_CLEAN=1: deleting $DATA"
		rm -rf "$DATA"
		mkdir -p "$DATA"
	fi
	# ZooKeeper keeps nothing HBase 2 needs across restarts, but stale sessions and
	# znodes of a killed instance would make the new master wait for them to expire.
	rm -rf "$DATA/zookeeper"

	if [[ -n ${HBASE_ZK_PORT:-} ]]; then
		PORT=$HBASE_ZK_PORT
		if [[ ! $PORT =~ ^[0-9]+$ ]] || ((PORT < 1 || PORT > 65535)); then
			log "HBASE_ZK_PORT=$PORT is not a port number"
			exit 1
		fi
		if port_in_use "$PORT"; then
			log "HBASE_ZK_PORT=$PORT is already in use"
			exit 1
		fi
	else
		PORT=
		for _ in $(seq 1 200); do
			p=$((20000 + RANDOM % 10000))
			if ! port_in_use "$p"; then
				PORT=$p
				break
			fi
		done
		if [[ -z $PORT ]]; then
			log "found no free port for ZooKeeper in 20000–29999"
			exit 1
		fi
	fi
	ADDR="127.0.0.1:$PORT"

	# --- configuration ---------------------------------------------------------------
	sed_escape() { printf '%s' "$1" | sed -e 's/[\\|&]/\\&/g'; }
	if [[ -n $CLUSTER ]]; then
		SESSION_TIMEOUT=${HBASE_ZK_SESSION_TIMEOUT:-5000}
		if [[ ! $SESSION_TIMEOUT =~ ^[0-9]+$ ]] || ((SESSION_TIMEOUT < 1000)); then
			log "HBASE_ZK_SESSION_TIMEOUT=$SESSION_TIMEOUT: want milliseconds, at least 1000"
			exit 1
		fi
		sed -e "s|@HBASE_DATA_DIR@|$(sed_escape "$DATA")|g" -e "s|@HBASE_ZK_PORT@|$PORT|g" \
			-e "s|@HBASE_ZK_SESSION_TIMEOUT@|$SESSION_TIMEOUT|g" \
			"$ROOT/hbase-local/conf/hbase-cluster-site.xml.in" >"$CONF/hbase-site.xml"
	else
		sed -e "s|@HBASE_DATA_DIR@|$(sed_escape "$DATA")|g" -e "s|@HBASE_ZK_PORT@|$PORT|g" \
			"$ROOT/hbase-local/conf/hbase-site.xml.in" >"$CONF/hbase-site.xml"
	fi
fi
cp "$LOG4J" "$CONF/log4j2.properties"

# JVM flags HBase's bin/hbase adds on JDK 11+ (shared by the servers and the probe).
JVM_FLAGS=(
	-XX:+UseG1GC -XX:+ExitOnOutOfMemoryError
	-Djava.net.preferIPv4Stack=true
	-Dorg.apache.hbase.thirdparty.io.netty.tryReflectionSetAccessible=true
	--add-modules jdk.unsupported
	--add-opens java.base/java.io=ALL-UNNAMED
	--add-opens java.base/java.nio=ALL-UNNAMED
	--add-opens java.base/sun.nio.ch=ALL-UNNAMED
	--add-opens java.base/java.lang=ALL-UNNAMED
	--add-opens java.base/jdk.internal.ref=ALL-UNNAMED
	--add-opens java.base/java.lang.reflect=ALL-UNNAMED
	--add-opens java.base/java.util=ALL-UNNAMED
	--add-opens java.base/java.util.concurrent=ALL-UNNAMED
	--add-exports java.base/jdk.internal.misc=ALL-UNNAMED
	--add-exports java.security.jgss/sun.security.krb5=ALL-UNNAMED
	--add-exports java.base/sun.net.dns=ALL-UNNAMED
	--add-exports java.base/sun.net.util=ALL-UNNAMED
	-Dzookeeper.admin.enableServer=false
	"-Dlog4j2.configurationFile=$CONF/log4j2.properties"
)
SETSID=()
command -v setsid >/dev/null && SETSID=(setsid)

# launch NAME HEAP CLASS [JVM FLAG…]: starts a daemon JVM logging to
# .hbase/logs/NAME.log and NAME.out (the previous ones are kept as NAME.log.1 and
# NAME.out.1) and sets LAUNCHED to its pid. stdin/stdout/stderr are detached: a
# caller reading our stdout through a pipe must not wait for the JVM.
launch() {
	local name=$1 heap=$2 class=$3 f
	shift 3
	for f in "$LOGS/$name.log" "$LOGS/$name.out"; do
		[[ -s $f ]] && mv -f "$f" "$f.1"
	done
	"${SETSID[@]}" "$JAVA" -Xms64m "-Xmx$heap" "${JVM_FLAGS[@]}" "$@" "-Dproc_$name" \
		"-Dhbase.log.dir=$LOGS" "-Dhbase.log.file=$name.log" \
		-cp "$CONF:$LIB/*" "$class" start \
		</dev/null >"$LOGS/$name.out" 2>&1 &
	LAUNCHED=$!
}

# --- start ---------------------------------------------------------------------------
start=$SECONDS
STARTED=()     # pids started by this run, stopped again if the start fails
STARTED_LOG=() # their log names (NAME of .hbase/logs/NAME.log)

if [[ -z $CLUSTER ]]; then
	: >"$LOGS/hbase.log"
	"${SETSID[@]}" "$JAVA" -Xms256m "-Xmx${HBASE_HEAP:-1g}" "${JVM_FLAGS[@]}" "-Dhbase.log.dir=$LOGS" -Dhbase.log.file=hbase.log \
		-cp "$CONF:$LIB/*" "$MASTER_CLASS" start \
		</dev/null >"$LOGS/hbase.out" 2>&1 &
	PID=$!
	echo "$PID" >"$PIDFILE"
	STARTED=("$PID")
	STARTED_LOG=(hbase)
	log "started HBase (pid $PID), ZooKeeper $ADDR, data $DATA, logs $LOGS"
fi

# write_rs_pids: saves RS_PIDS to .hbase/regionservers.pids, one per line.
write_rs_pids() {
	if ((${#RS_PIDS[@]})); then
		printf '%s\n' "${RS_PIDS[@]}" >"$RS_PIDFILE.tmp"
	else
		: >"$RS_PIDFILE.tmp"
	fi
	mv -f "$RS_PIDFILE.tmp" "$RS_PIDFILE"
}

# stop_started: SIGTERM, then after 10 s SIGKILL, the JVMs this run started.
stop_started() {
	local pid alive
	((${#STARTED[@]})) || return 0
	log "stopping pids ${STARTED[*]}"
	kill -TERM "${STARTED[@]}" 2>/dev/null || true
	for _ in $(seq 1 20); do
		alive=
		for pid in "${STARTED[@]}"; do
			kill -0 "$pid" 2>/dev/null && alive=1
		done
		[[ -n $alive ]] || return 0
		sleep 0.5
	done
	kill -KILL "${STARTED[@]}" 2>/dev/null || true
}

fail() {
	local name f lines=60
	trap - INT TERM
	log "FAILED: $*"
	[[ -n $CLUSTER ]] && lines=25 # per daemon
	for name in "${STARTED_LOG[@]}"; do
		for f in "$LOGS/$name.out" "$LOGS/$name.log"; do
			if [[ -s $f ]]; then
				echo "----- last $lines lines of $f -----" >&2
				tail -n "$lines" "$f" >&2
			fi
		done
	done
	stop_started
	if [[ -z $CLUSTER ]]; then
		rm -f "$PIDFILE" "$ADDRFILE"
	elif [[ -z $RESUME ]]; then
		rm -f "$ZK_PIDFILE" "$MASTER_PIDFILE" "$RS_PIDFILE" "$ADDRFILE"
	fi
	# A resumed cluster keeps its pid files: the daemons stopped above stay listed
	# as dead ones, which the next run restarts.
	exit 1
}
trap 'fail "interrupted"' INT TERM

# check_time: sets LEFT to the seconds left of the start budget; fails when none.
check_time() {
	LEFT=$((start + TIMEOUT - SECONDS))
	((LEFT > 0)) || fail "HBase did not become ready within ${TIMEOUT}s"
}
# alive: fails when a JVM this run started has exited.
alive() {
	local i
	for i in "${!STARTED[@]}"; do
		kill -0 "${STARTED[$i]}" 2>/dev/null || fail "the ${STARTED_LOG[$i]} JVM (pid ${STARTED[$i]}) exited"
	done
}

if [[ -n $CLUSTER ]]; then
	# ZooKeeper first: the master and the region servers find each other through it.
	# `ruok` is a four-letter command ZooKeeper refuses unless listed.
	if [[ -z $RESUME ]]; then
		launch zookeeper "${HBASE_ZK_HEAP:-128m}" "$ZK_CLASS" -Dzookeeper.4lw.commands.whitelist=ruok,srvr,stat
		ZK_PID=$LAUNCHED
		echo "$ZK_PID" >"$ZK_PIDFILE"
		STARTED+=("$ZK_PID")
		STARTED_LOG+=(zookeeper)
		log "started ZooKeeper (pid $ZK_PID) on $ADDR, data $DATA, logs $LOGS"
		until zk_ruok "$PORT"; do
			alive
			check_time
			sleep 0.3
		done
		log "ZooKeeper up after $((SECONDS - start))s"
	fi
	# Then the master and the region servers together (region servers wait for the
	# master in ZooKeeper).
	MASTER_STARTED=
	if ! is_ours "$MASTER_PID" "$MASTER_CLASS"; then
		launch master "${HBASE_MASTER_HEAP:-512m}" "$MASTER_CLASS"
		MASTER_PID=$LAUNCHED
		MASTER_STARTED=1
		echo "$MASTER_PID" >"$MASTER_PIDFILE"
		STARTED+=("$MASTER_PID")
		STARTED_LOG+=(master)
		log "started HMaster (pid $MASTER_PID)"
	fi
	want=$((RS_COUNT > ${#RS_PIDS[@]} ? RS_COUNT : ${#RS_PIDS[@]}))
	for ((i = 1; i <= want; i++)); do
		if is_ours "${RS_PIDS[i - 1]:-}" "$RS_CLASS"; then
			continue
		fi
		launch "regionserver-$i" "${HBASE_RS_HEAP:-640m}" "$RS_CLASS"
		RS_PIDS[i - 1]=$LAUNCHED
		STARTED+=("$LAUNCHED")
		STARTED_LOG+=("regionserver-$i")
		write_rs_pids
		log "started HRegionServer $i (pid $LAUNCHED)"
	done
	if ((${#RS_PIDS[@]} > RS_COUNT)); then
		log "note: the cluster has ${#RS_PIDS[@]} region servers (asked for $RS_COUNT); keeping them all"
	fi
	# Master log to watch (below) and the region servers the probe must see.
	MASTER_LOG="$LOGS/master.log"
	PROBE_SERVERS=${#RS_PIDS[@]}
else
	# 1. ZooKeeper answers.
	until zk_ruok "$PORT"; do
		alive
		check_time
		sleep 0.3
	done
	log "ZooKeeper up after $((SECONDS - start))s"
	MASTER_STARTED=1
	MASTER_LOG="$LOGS/hbase.log"
	PROBE_SERVERS=1
fi

# 2. The master has completed initialization (hbase:meta online, procedures loaded).
if [[ -n $MASTER_STARTED ]]; then
	until grep -q "Master has completed initialization" "$MASTER_LOG" 2>/dev/null; do
		alive
		check_time
		sleep 0.3
	done
	log "master initialized after $((SECONDS - start))s"
fi

# 3. Every region server has checked in, and a client can create a table with one
#    region per region server, move each region onto its server, write and read a
#    row in each region and drop the table (Java's single-file launcher compiles
#    this probe from source; it uses the same jars and hbase-site.xml).
mkdir -p "$STATE/probe"
cat >"$STATE/probe/HBaseUpProbe.java" <<'JAVA'
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.ClusterMetrics;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.ServerName;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.ColumnFamilyDescriptorBuilder;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.RegionInfo;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.client.TableDescriptor;
import org.apache.hadoop.hbase.client.TableDescriptorBuilder;
import org.apache.hadoop.hbase.util.Bytes;

/**
 * Waits until exactly args[0] region servers are live (a killed one still listed
 * does not count as ready), then creates a table with one region per region server,
 * moves each region onto its own server, writes and reads a row in each region and
 * drops the table; exits 0 when all of it worked.
 */
public class HBaseUpProbe {
  public static void main(String[] args) throws Exception {
    int want = args.length > 0 ? Integer.parseInt(args[0]) : 1;
    Configuration conf = HBaseConfiguration.create();
    conf.setInt("hbase.client.retries.number", 30);
    conf.setLong("hbase.client.pause", 200);
    TableName tn = TableName.valueOf("hbase_up_probe");
    byte[] f = Bytes.toBytes("f"), q = Bytes.toBytes("q");
    try (Connection c = ConnectionFactory.createConnection(conf); Admin admin = c.getAdmin()) {
      List<ServerName> servers;
      for (int waited = 0; ; waited++) {
        ClusterMetrics m = admin.getClusterMetrics(
            EnumSet.of(ClusterMetrics.Option.LIVE_SERVERS, ClusterMetrics.Option.MASTER));
        servers = new ArrayList<>(m.getLiveServerMetrics().keySet());
        servers.remove(m.getMasterName());
        if (servers.size() == want) {
          break;
        }
        if (waited % 10 == 0) {
          System.err.println("probe: " + servers.size() + " of " + want + " region servers live");
        }
        Thread.sleep(300);
      }
      servers.sort(Comparator.naturalOrder());
      if (admin.tableExists(tn)) { // left over by an interrupted probe
        if (admin.isTableEnabled(tn)) {
          admin.disableTable(tn);
        }
        admin.deleteTable(tn);
      }
      TableDescriptor desc = TableDescriptorBuilder.newBuilder(tn)
          .setColumnFamily(ColumnFamilyDescriptorBuilder.of(f)).build();
      byte[][] rows = new byte[want][];
      for (int i = 0; i < want; i++) {
        rows[i] = Bytes.toBytes("r" + i);
      }
      if (want == 1) {
        admin.createTable(desc);
      } else {
        admin.createTable(desc, Arrays.copyOfRange(rows, 1, want));
        List<RegionInfo> regions = new ArrayList<>(admin.getRegions(tn));
        regions.sort(RegionInfo.COMPARATOR);
        for (int i = 0; i < want; i++) {
          admin.move(regions.get(i).getEncodedNameAsBytes(), servers.get(i));
        }
      }
      try (Table t = c.getTable(tn)) {
        for (byte[] row : rows) {
          byte[] v = Bytes.toBytes("ok " + System.nanoTime());
          t.put(new Put(row).addColumn(f, q, v));
          byte[] got = t.get(new Get(row)).getValue(f, q);
          if (!Arrays.equals(got, v)) {
            throw new IllegalStateException(Bytes.toString(row) + ": read back " + Bytes.toStringBinary(got));
          }
        }
      }
      admin.disableTable(tn);
      admin.deleteTable(tn);
    }
    System.err.println("probe ok");
  }
}
JAVA
PROBE_LOGS="$LOGS/probe"
mkdir -p "$PROBE_LOGS"
probe_ok=
while :; do
	alive
	check_time
	if timeout "$LEFT" "$JAVA" -Xmx256m -XX:TieredStopAtLevel=1 "${JVM_FLAGS[@]}" \
		"-Dhbase.log.dir=$PROBE_LOGS" -cp "$CONF:$LIB/*" "$STATE/probe/HBaseUpProbe.java" "$PROBE_SERVERS" \
		</dev/null >"$PROBE_LOGS/probe.out" 2>&1; then
		probe_ok=1
		break
	fi
	log "probe failed (retrying): $(tail -n 3 "$PROBE_LOGS/probe.out" | tr '\n' ' ')"
	sleep 1
done
[[ -n $probe_ok ]] || fail "probe"
trap - INT TERM
if [[ -n $CLUSTER ]]; then
	log "HBase cluster ready after $((SECONDS - start))s: ZooKeeper pid $ZK_PID, HMaster pid $MASTER_PID, region servers ${RS_PIDS[*]}"
else
	log "HBase ready after $((SECONDS - start))s"
fi

echo "$ADDR" >"$ADDRFILE"
echo "$ADDR"
