import java.util.ArrayList;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.snapshot.ExportSnapshot;
import org.apache.hadoop.util.ToolRunner;

/**
 * Runs HBase's ExportSnapshot for several snapshots in one JVM (`gateway
 * backup` and `gateway restore` on HBase; Java's single-file launcher
 * compiles it): a JVM start and a MapReduce job set-up cost seconds each.
 *
 * <p>Arguments: [-no-checksum-verify] COPY_FROM COPY_TO SNAPSHOT[=TARGET]...
 * where -no-checksum-verify is passed on to ExportSnapshot and COPY_FROM is
 * "-" for the cluster of the hbase-site.xml on the classpath (its
 * hbase.rootdir), COPY_TO a Hadoop URI (file:///dir, hdfs://nn/dir), and
 * TARGET the snapshot's name at the destination (default: its own). Each
 * export is a MapReduce job in local mode (mapreduce.framework.name=local)
 * with one mapper. Exits 1 at the first export that fails.
 */
public class ExportSnapshots {
  public static void main(String[] args) throws Exception {
    int first = 0;
    boolean noVerify = args.length > 0 && args[0].equals("-no-checksum-verify");
    if (noVerify) {
      first = 1;
    }
    if (args.length < first + 3) {
      System.err.println("usage: ExportSnapshots [-no-checksum-verify] COPY_FROM|- COPY_TO SNAPSHOT[=TARGET]...");
      System.exit(2);
    }
    String from = args[first], to = args[first + 1];
    for (int i = first + 2; i < args.length; i++) {
      String snapshot = args[i], target = null;
      int eq = snapshot.indexOf('=');
      if (eq >= 0) {
        target = snapshot.substring(eq + 1);
        snapshot = snapshot.substring(0, eq);
      }
      List<String> a = new ArrayList<>(List.of("-snapshot", snapshot, "-copy-to", to, "-mappers", "1"));
      if (!from.equals("-")) {
        a.add("-copy-from");
        a.add(from);
      }
      if (noVerify) {
        a.add("-no-checksum-verify");
      }
      if (target != null) {
        a.add("-target");
        a.add(target);
      }
      Configuration conf = HBaseConfiguration.create();
      conf.set("mapreduce.framework.name", "local");
      long start = System.nanoTime();
      int rc = ToolRunner.run(conf, new ExportSnapshot(), a.toArray(new String[0]));
      if (rc != 0) {
        System.err.println("ExportSnapshots: export of " + snapshot + " failed (exit " + rc + ")");
        System.exit(1);
      }
      System.out.println("exported " + snapshot + " in " + (System.nanoTime() - start) / 1000000 + " ms");
    }
  }
}
