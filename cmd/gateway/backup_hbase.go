package main

import (
	"bytes"
	"cmp"
	"context"
	_ "embed"
	"encoding/json"
	"encoding/xml"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/weibohbase/gateway/hbase/remote"
)

// hbaseToolFlags locate HBase's own tools (ExportSnapshot) for the HBase
// side of backup and restore.
type hbaseToolFlags struct {
	classpath string
	java      string
	rootdir   string
}

// defaultHBaseClasspath is the classpath `make hbase-jars` and `make
// hbase-up` assemble: the generated conf directory (hbase-site.xml) and the
// jars, relative to the repository.
const defaultHBaseClasspath = ".hbase/conf:.hbase/lib/*"

func (f *hbaseToolFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.classpath, "hbase-classpath", env("GATEWAY_HBASE_CLASSPATH", defaultHBaseClasspath),
		"HBase only: Java classpath of HBase's tools: a conf directory with the cluster's hbase-site.xml, then the HBase, hbase-mapreduce and Hadoop jars (env GATEWAY_HBASE_CLASSPATH)")
	fs.StringVar(&f.java, "java", env("GATEWAY_JAVA", defaultJava()), "HBase only: the java binary that runs HBase's ExportSnapshot, a JDK 11-21 (env GATEWAY_JAVA; default $JAVA_HOME/bin/java, else java)")
	fs.StringVar(&f.rootdir, "hbase-rootdir", env("GATEWAY_HBASE_ROOTDIR", ""),
		"HBase restore only: the cluster's hbase.rootdir, where the snapshots are imported (env GATEWAY_HBASE_ROOTDIR; default: hbase.rootdir of the hbase-site.xml on --hbase-classpath)")
}

// defaultJava is $JAVA_HOME/bin/java when JAVA_HOME is set, else "java"
// (found in PATH).
func defaultJava() string {
	if home := os.Getenv("JAVA_HOME"); home != "" {
		return filepath.Join(home, "bin", "java")
	}
	return "java"
}

// hbaseBackupManifest is the file that `gateway backup` on HBase writes
// beside the exported snapshots (.hbase-snapshot/ and archive/ of DIR):
// which snapshot holds which table.
const hbaseBackupManifest = "gateway-backup.json"

// hbaseManifest is hbaseBackupManifest's content.
type hbaseManifest struct {
	// Namespace is the namespace backed up.
	Namespace string `json:"namespace"`
	// Snapshots maps each table's qualifier to its snapshot's name.
	Snapshots map[string]string `json:"snapshots"`
	// Started is when the first snapshot was asked for (RFC 3339, UTC):
	// every write acknowledged before it is in the backup.
	Started time.Time `json:"started"`
	// Finished is when the last snapshot was complete.
	Finished time.Time `json:"finished"`
}

// openRemote opens the HBase store of sf without the namespace mapping:
// snapshots and clones name tables in full.
func openRemote(ctx context.Context, sf storeFlags) (*remote.Store, error) {
	cctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	st, err := remote.Open(cctx, sf.zk, remote.WithCallTimeout(sf.callTimeout))
	if err != nil {
		return nil, fmt.Errorf("open hbase store: %w", err)
	}
	return st, nil
}

// backupHBase snapshots every table of sf's namespace (one snapshot each,
// memstores flushed; not one atomic cut across tables), exports each
// snapshot into dir with HBase's ExportSnapshot (MapReduce in local mode,
// one JVM), writes the manifest and deletes the snapshots from the cluster.
func backupHBase(ctx context.Context, log *slog.Logger, sf storeFlags, hf hbaseToolFlags, to string) error {
	dir, err := filepath.Abs(to)
	if err != nil {
		return err
	}
	if ents, err := os.ReadDir(dir); err == nil && len(ents) > 0 {
		return fmt.Errorf("--to %s is not empty: back up into a new or empty directory", dir)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	st, err := openRemote(ctx, sf)
	if err != nil {
		return err
	}
	defer st.Close()
	names, err := st.Tables(ctx, sf.ns)
	if err != nil {
		return err
	}
	if len(names) == 0 {
		return fmt.Errorf("namespace %q holds no tables", sf.ns)
	}
	m := hbaseManifest{Namespace: sf.ns, Snapshots: map[string]string{}, Started: time.Now().UTC()}
	stamp := m.Started.Format("20060102T150405.000Z")
	stamp = strings.ReplaceAll(stamp, ".", "")
	var taken []string
	defer func() {
		for _, name := range taken {
			dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
			if err := st.DeleteSnapshot(dctx, name); err != nil {
				log.Warn("backup: could not delete a snapshot from the cluster", "snapshot", name, "err", err)
			}
			cancel()
		}
	}()
	for _, t := range names {
		name := fmt.Sprintf("gateway-%s-%s-%s", sf.ns, t, stamp)
		if err := st.Snapshot(ctx, sf.ns+":"+t, name); err != nil {
			return err
		}
		taken = append(taken, name)
		m.Snapshots[t] = name
		log.Info("backup: snapshot taken", "table", sf.ns+":"+t, "snapshot", name)
	}
	m.Finished = time.Now().UTC()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var snaps []string
	for _, t := range names {
		snaps = append(snaps, m.Snapshots[t])
	}
	if err := exportSnapshots(ctx, log, hf, "", "file://"+dir, snaps, nil); err != nil {
		return err
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if err := writeFileAtomic(filepath.Join(dir, hbaseBackupManifest), append(b, '\n'), 0o644); err != nil {
		return err
	}
	log.Info("backup done", "store", "hbase", "namespace", sf.ns, "tables", len(names), "to", dir,
		"snapshots_took", m.Finished.Sub(m.Started).Round(time.Millisecond), "elapsed", time.Since(m.Started).Round(time.Millisecond))
	return nil
}

// restoreHBase imports the snapshots of the backup in dir into the
// cluster's rootdir (ExportSnapshot, each under a new name) and clones
// each into its table of sf's namespace, which must hold no tables (it is
// created when missing); the imported snapshots are deleted afterwards.
func restoreHBase(ctx context.Context, log *slog.Logger, sf storeFlags, hf hbaseToolFlags, from string) error {
	dir, err := filepath.Abs(from)
	if err != nil {
		return err
	}
	b, err := os.ReadFile(filepath.Join(dir, hbaseBackupManifest))
	if err != nil {
		return fmt.Errorf("--from %s is no HBase backup of `gateway backup`: %w", dir, err)
	}
	var m hbaseManifest
	if err := json.Unmarshal(b, &m); err != nil || len(m.Snapshots) == 0 {
		return fmt.Errorf("%s: unreadable or empty manifest (%v)", filepath.Join(dir, hbaseBackupManifest), err)
	}
	rootdir := hf.rootdir
	if rootdir == "" {
		if rootdir, err = hbaseRootdir(hf.classpath); err != nil {
			return err
		}
	}
	st, err := openRemote(ctx, sf)
	if err != nil {
		return err
	}
	defer st.Close()
	if names, err := st.Tables(ctx, sf.ns); err != nil {
		return err
	} else if len(names) > 0 {
		return fmt.Errorf("namespace %q holds %d table(s): restore only into an empty or new namespace (--namespace)", sf.ns, len(names))
	}
	if err := st.EnsureTables(ctx, sf.ns, nil); err != nil {
		return err
	}
	stamp := strings.ReplaceAll(time.Now().UTC().Format("20060102T150405.000Z"), ".", "")
	var imported []string
	defer func() {
		for _, name := range imported {
			dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
			if err := st.DeleteSnapshot(dctx, name); err != nil {
				log.Warn("restore: could not delete an imported snapshot", "snapshot", name, "err", err)
			}
			cancel()
		}
	}()
	targets := map[string]string{}
	var snaps []string
	for _, t := range slices.Sorted(maps.Keys(m.Snapshots)) {
		snap := m.Snapshots[t]
		snaps = append(snaps, snap)
		targets[snap] = fmt.Sprintf("gateway-restore-%s-%s-%s", sf.ns, t, stamp)
	}
	// Delete what was imported, even when the import stopped half-way.
	imported = slices.Collect(maps.Values(targets))
	if err := exportSnapshots(ctx, log, hf, "file://"+dir, rootdir, snaps, targets); err != nil {
		return err
	}
	for _, t := range slices.Sorted(maps.Keys(m.Snapshots)) {
		if err := st.CloneSnapshot(ctx, targets[m.Snapshots[t]], sf.ns+":"+t); err != nil {
			return err
		}
		log.Info("restore: table cloned", "table", sf.ns+":"+t, "from_snapshot", m.Snapshots[t])
	}
	return nil
}

// exportSnapshotsJava runs HBase's ExportSnapshot for several snapshots in
// one JVM (java/ExportSnapshots.java; Java's single-file launcher, which
// needs a JDK, compiles it).
//
//go:embed java/ExportSnapshots.java
var exportSnapshotsJava []byte

// exportLog4j2 is the log4j2 configuration of the ExportSnapshot JVM.
const exportLog4j2 = `status = warn
dest = err
appender.err.type = Console
appender.err.name = err
appender.err.target = SYSTEM_ERR
appender.err.layout.type = PatternLayout
appender.err.layout.pattern = %d{ISO8601} %-5p [%t] %c{2}: %m%n
rootLogger = WARN,err
logger.metrics2.name = org.apache.hadoop.metrics2
logger.metrics2.level = ERROR
logger.nativecodeloader.name = org.apache.hadoop.util.NativeCodeLoader
logger.nativecodeloader.level = ERROR
`

// exportSnapshots runs HBase's ExportSnapshot for each of snapshots from
// copyFrom ("" for the cluster of the classpath's hbase-site.xml) to
// copyTo, each renamed to targets[snapshot] at the destination when there
// is one: local MapReduce jobs, one after the other, in one JVM. Its
// output goes to the log when it fails.
func exportSnapshots(ctx context.Context, log *slog.Logger, hf hbaseToolFlags, copyFrom, copyTo string, snapshots []string, targets map[string]string) error {
	tmp, err := os.MkdirTemp("", "gateway-export-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	src := filepath.Join(tmp, "ExportSnapshots.java")
	if err := os.WriteFile(src, exportSnapshotsJava, 0o644); err != nil {
		return err
	}
	// The tools' own log: warnings and errors on stderr, whatever log4j2
	// configuration the classpath holds.
	logConf := filepath.Join(tmp, "log4j2.properties")
	if err := os.WriteFile(logConf, []byte(exportLog4j2), 0o644); err != nil {
		return err
	}
	args := []string{"-Xmx512m", "-XX:TieredStopAtLevel=1", "-Djava.net.preferIPv4Stack=true",
		"--add-opens", "java.base/java.lang=ALL-UNNAMED", "--add-opens", "java.base/java.nio=ALL-UNNAMED",
		"--add-opens", "java.base/sun.nio.ch=ALL-UNNAMED", "--add-opens", "java.base/java.util=ALL-UNNAMED",
		"--add-exports", "java.base/jdk.internal.misc=ALL-UNNAMED",
		"-Dorg.apache.hbase.thirdparty.io.netty.tryReflectionSetAccessible=true",
		"-Dlog4j2.configurationFile=" + logConf, "-Dhbase.log.dir=" + tmp,
		"-Djava.io.tmpdir=" + tmp, "-Dhadoop.tmp.dir=" + filepath.Join(tmp, "hadoop"),
		"-cp", hf.classpath, src}
	// From a file:// rootdir into a local directory ExportSnapshot reports
	// a checksum mismatch for every HFile it copies (HBase 2.6 on Hadoop
	// 3.4's local filesystem, whose checksums of the two sides are not
	// comparable): between two local directories it compares the files'
	// lengths only.
	fromDir := copyFrom
	if fromDir == "" {
		fromDir = cmp.Or(hf.rootdir, mustRootdir(hf.classpath))
	}
	if strings.HasPrefix(fromDir, "file:") && strings.HasPrefix(copyTo, "file:") {
		args = append(args, "-no-checksum-verify")
	}
	args = append(args, cmp.Or(copyFrom, "-"), copyTo)
	for _, sn := range snapshots {
		if t := targets[sn]; t != "" {
			sn += "=" + t
		}
		args = append(args, sn)
	}
	cmd := exec.CommandContext(ctx, hf.java, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	if err := cmd.Run(); err != nil {
		tail := out.String()
		if len(tail) > 4000 {
			tail = tail[len(tail)-4000:]
		}
		return fmt.Errorf("ExportSnapshot to %s: %w (java %q, classpath %q):\n%s", copyTo, err, hf.java, hf.classpath, tail)
	}
	log.Info("snapshots exported", "snapshots", len(snapshots), "to", copyTo, "elapsed", time.Since(start).Round(time.Millisecond))
	return nil
}

// mustRootdir is hbaseRootdir, "" when it fails.
func mustRootdir(classpath string) string {
	dir, _ := hbaseRootdir(classpath)
	return dir
}

// hbaseRootdir returns hbase.rootdir from the hbase-site.xml of the first
// directory of classpath that has one.
func hbaseRootdir(classpath string) (string, error) {
	for _, e := range filepath.SplitList(classpath) {
		b, err := os.ReadFile(filepath.Join(e, "hbase-site.xml"))
		if err != nil {
			continue
		}
		var conf struct {
			Props []struct {
				Name  string `xml:"name"`
				Value string `xml:"value"`
			} `xml:"property"`
		}
		if err := xml.Unmarshal(b, &conf); err != nil {
			return "", fmt.Errorf("%s: %w", filepath.Join(e, "hbase-site.xml"), err)
		}
		for _, p := range conf.Props {
			if p.Name == "hbase.rootdir" {
				return strings.TrimSpace(p.Value), nil
			}
		}
	}
	return "", fmt.Errorf("no hbase-site.xml with hbase.rootdir on --hbase-classpath %q: give --hbase-rootdir", classpath)
}
