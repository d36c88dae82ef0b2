#!/usr/bin/env bash
# hbase-up.sh — start one standalone HBase (HMaster + embedded ZooKeeper + one
# RegionServer in a single JVM) on 127.0.0.1 for the gateway's tests and local runs.
#
# Run it through `make hbase-up`, which first fetches the jars (`make hbase-jars`
# → .hbase/lib). It waits until HBase is really usable — ZooKeeper answers
# `ruok` with `imok`, the master has completed initialization, and a probe
# client has created, written, read and dropped a table — then prints the
# ZooKeeper address `127.0.0.1:PORT` as the LAST line of stdout (progress goes
# to stderr), so a caller can do
#     GATEWAY_TEST_HBASE_ZK=$(make -s hbase-up | tail -n1)
# If HBase does not come up within HBASE_START_TIMEOUT seconds (or dies), it
# prints the tail of the HBase log, stops the JVM and exits non-zero.
# If an HBase started by this script is already running, it prints its address
# and exits 0. Stop it with `make hbase-down`.
#
# Files (all under the gitignored .hbase/ of the repository):
#   .hbase/lib/          runtime classpath (make hbase-jars)
#   .hbase/conf/         hbase-site.xml generated from hbase-local/conf/hbase-site.xml.in
#   .hbase/data/         HBase root dir, WALs, ZooKeeper data (or $HBASE_DATA_DIR)
#   .hbase/logs/         hbase.log (log4j2), hbase.out (JVM stdout/stderr)
#   .hbase/hbase.pid     pid of the HBase JVM
#   .hbase/hbase.zk      its ZooKeeper address
#
# Environment:
#   HBASE_DATA_DIR       data directory (default .hbase/data)
#   HBASE_ZK_PORT        ZooKeeper client port (default: a free port in 20000–29999)
#   HBASE_START_TIMEOUT  seconds to wait for HBase to be usable (default 180)
#   HBASE_HEAP           JVM heap (default 1g)
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
ADDRFILE="$STATE/hbase.zk"
TEMPLATE="$ROOT/hbase-local/conf/hbase-site.xml.in"
LOG4J="$ROOT/hbase-local/conf/log4j2.properties"
TIMEOUT=${HBASE_START_TIMEOUT:-180}
HEAP=${HBASE_HEAP:-1g}

log() { echo "hbase-up: $*" >&2; }

# zk_ruok PORT: true when the ZooKeeper on 127.0.0.1:PORT answers "imok".
zk_ruok() {
	local ans
	ans=$( (exec 3<>"/dev/tcp/127.0.0.1/$1" && printf ruok >&3 && timeout 2 cat <&3) 2>/dev/null) || true
	[[ $ans == imok ]]
}

# port_in_use PORT: true when something accepts connections on 127.0.0.1:PORT.
port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# is_our_hbase PID: true when PID is alive and is an HBase JVM started by this script.
is_our_hbase() {
	local pid=$1
	[[ -n $pid ]] && kill -0 "$pid" 2>/dev/null || return 1
	tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q -- "-Dhbase.log.dir=$LOGS .*org.apache.hadoop.hbase.master.HMaster"
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
if [[ -f $PIDFILE ]]; then
	oldpid=$(cat "$PIDFILE" 2>/dev/null || true)
	if is_our_hbase "$oldpid"; then
		addr=$(cat "$ADDRFILE" 2>/dev/null || true)
		if [[ -n $addr ]] && zk_ruok "${addr##*:}"; then
			log "HBase already running (pid $oldpid)"
			echo "$addr"
			exit 0
		fi
		log "an HBase (pid $oldpid) is running but its ZooKeeper ${addr:-?} does not answer; run 'make hbase-down' first"
		exit 1
	fi
	rm -f "$PIDFILE" "$ADDRFILE"
fi

# --- prerequisites -----------------------------------------------------------------
if ! compgen -G "$LIB/hbase-server-*.jar" >/dev/null; then
	log "no HBase jars in $LIB: run 'make hbase-jars' (or use 'make hbase-up')"
	exit 1
fi
JAVA=$(pick_java)
log "java: $JAVA ($("$JAVA" -version 2>&1 | head -n1))"

DATA=${HBASE_DATA_DIR:-$STATE/data}
mkdir -p "$DATA" "$CONF" "$LOGS"
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

# --- configuration -----------------------------------------------------------------
sed_escape() { printf '%s' "$1" | sed -e 's/[\\|&]/\\&/g'; }
sed -e "s|@HBASE_DATA_DIR@|$(sed_escape "$DATA")|g" -e "s|@HBASE_ZK_PORT@|$PORT|g" \
	"$TEMPLATE" >"$CONF/hbase-site.xml"
cp "$LOG4J" "$CONF/log4j2.properties"

# JVM flags HBase's bin/hbase adds on JDK 11+ (shared by the server and the probe).
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

# --- start ---------------------------------------------------------------------------
: >"$LOGS/hbase.log"
start=$SECONDS
SETSID=()
command -v setsid >/dev/null && SETSID=(setsid)
# stdin/stdout/stderr detached: a caller reading our stdout through a pipe must
# not wait for the JVM.
"${SETSID[@]}" "$JAVA" -Xms256m "-Xmx$HEAP" "${JVM_FLAGS[@]}" "-Dhbase.log.dir=$LOGS" -Dhbase.log.file=hbase.log \
	-cp "$CONF:$LIB/*" org.apache.hadoop.hbase.master.HMaster start \
	</dev/null >"$LOGS/hbase.out" 2>&1 &
PID=$!
echo "$PID" >"$PIDFILE"
log "started HBase (pid $PID), ZooKeeper $ADDR, data $DATA, logs $LOGS"

fail() {
	log "FAILED: $*"
	for f in "$LOGS/hbase.out" "$LOGS/hbase.log"; do
		if [[ -s $f ]]; then
			echo "----- last 60 lines of $f -----" >&2
			tail -n 60 "$f" >&2
		fi
	done
	if kill -0 "$PID" 2>/dev/null; then
		log "stopping pid $PID"
		kill -TERM "$PID" 2>/dev/null || true
		for _ in $(seq 1 20); do
			kill -0 "$PID" 2>/dev/null || break
			sleep 0.5
		done
		kill -KILL "$PID" 2>/dev/null || true
	fi
	rm -f "$PIDFILE" "$ADDRFILE"
	exit 1
}
trap 'fail "interrupted"' INT TERM

# check_time: sets LEFT to the seconds left of the start budget; fails when none.
check_time() {
	LEFT=$((start + TIMEOUT - SECONDS))
	((LEFT > 0)) || fail "HBase did not become ready within ${TIMEOUT}s"
}
alive() { kill -0 "$PID" 2>/dev/null || fail "the HBase JVM exited"; }

# 1. ZooKeeper answers.
until zk_ruok "$PORT"; do
	alive
	check_time
	sleep 0.3
done
log "ZooKeeper up after $((SECONDS - start))s"

# 2. The master has completed initialization (hbase:meta online, procedures loaded).
until grep -q "Master has completed initialization" "$LOGS/hbase.log"; do
	alive
	check_time
	sleep 0.3
done
log "master initialized after $((SECONDS - start))s"

# 3. A client can create, write, read and drop a table (Java's single-file launcher
#    compiles this probe from source; it uses the same jars and hbase-site.xml).
mkdir -p "$STATE/probe"
cat >"$STATE/probe/HBaseUpProbe.java" <<'JAVA'
import java.util.Arrays;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.ColumnFamilyDescriptorBuilder;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.client.TableDescriptorBuilder;
import org.apache.hadoop.hbase.util.Bytes;

/** Creates, writes, reads and drops a table; exits 0 when all of it worked. */
public class HBaseUpProbe {
  public static void main(String[] args) throws Exception {
    Configuration conf = HBaseConfiguration.create();
    conf.setInt("hbase.client.retries.number", 30);
    conf.setLong("hbase.client.pause", 200);
    TableName tn = TableName.valueOf("hbase_up_probe");
    byte[] f = Bytes.toBytes("f"), q = Bytes.toBytes("q"), row = Bytes.toBytes("r");
    byte[] v = Bytes.toBytes("ok " + System.nanoTime());
    try (Connection c = ConnectionFactory.createConnection(conf); Admin admin = c.getAdmin()) {
      if (!admin.tableExists(tn)) {
        admin.createTable(TableDescriptorBuilder.newBuilder(tn)
            .setColumnFamily(ColumnFamilyDescriptorBuilder.of(f)).build());
      }
      try (Table t = c.getTable(tn)) {
        t.put(new Put(row).addColumn(f, q, v));
        byte[] got = t.get(new Get(row)).getValue(f, q);
        if (!Arrays.equals(got, v)) {
          throw new IllegalStateException("read back " + Bytes.toStringBinary(got));
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
		"-Dhbase.log.dir=$PROBE_LOGS" -cp "$CONF:$LIB/*" "$STATE/probe/HBaseUpProbe.java" \
		</dev/null >"$PROBE_LOGS/probe.out" 2>&1; then
		probe_ok=1
		break
	fi
	log "probe failed (retrying): $(tail -n 3 "$PROBE_LOGS/probe.out" | tr '\n' ' ')"
	sleep 1
done
[[ -n $probe_ok ]] || fail "probe"
trap - INT TERM
log "HBase ready after $((SECONDS - start))s"

echo "$ADDR" >"$ADDRFILE"
echo "$ADDR"
