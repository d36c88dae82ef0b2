import com.sun.tools.attach.VirtualMachine;
import java.util.ArrayList;
import java.util.List;
import javax.management.MBeanServerConnection;
import javax.management.ObjectName;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;

/**
 * Waits until the HBase RegionServers running in the local JVMs of the given
 * pids have settled: the compactionQueueLength and flushQueueLength of their
 * bean Hadoop:service=HBase,name=RegionServer,sub=Server are 0 in every JVM,
 * read once a second, for QUIET seconds in a row. Used by scripts/procs.sh
 * (hbase_settle) after a benchmark imports the data set.
 *
 * <p>The HBase of scripts/hbase-up.sh serves no web UI (the Maven jars have no
 * hbase-webapps), so there is no /jmx over HTTP: this attaches to each JVM
 * (the JDK's attach API, same user), starts its local JMX agent, and reads
 * the bean over JMX.
 *
 * <p>Usage: java HBaseSettle.java TIMEOUT_S QUIET_S PID... Exits 0 once settled,
 * 1 when TIMEOUT_S passes first (or a JVM cannot be read), 2 on bad arguments.
 * Progress goes to stderr, once every 10 s.
 */
public class HBaseSettle {
  public static void main(String[] args) throws Exception {
    if (args.length < 3) {
      System.err.println("usage: HBaseSettle TIMEOUT_S QUIET_S PID...");
      System.exit(2);
    }
    long timeout = Long.parseLong(args[0]) * 1000;
    long quiet = Long.parseLong(args[1]) * 1000;
    ObjectName bean = new ObjectName("Hadoop:service=HBase,name=RegionServer,sub=Server");
    List<MBeanServerConnection> jvms = new ArrayList<>();
    List<JMXConnector> conns = new ArrayList<>();
    for (int i = 2; i < args.length; i++) {
      VirtualMachine vm = VirtualMachine.attach(args[i]);
      String addr;
      try {
        addr = vm.startLocalManagementAgent();
      } finally {
        vm.detach();
      }
      JMXConnector c = JMXConnectorFactory.connect(new JMXServiceURL(addr));
      conns.add(c);
      jvms.add(c.getMBeanServerConnection());
    }
    long start = System.currentTimeMillis();
    long quietSince = -1;
    long lastReport = 0;
    int code = 1;
    while (true) {
      long now = System.currentTimeMillis();
      long compactions = 0, flushes = 0;
      boolean found = true;
      for (MBeanServerConnection m : jvms) {
        if (!m.isRegistered(bean)) {
          found = false; // the RegionServer is not up yet
          continue;
        }
        compactions += ((Number) m.getAttribute(bean, "compactionQueueLength")).longValue();
        flushes += ((Number) m.getAttribute(bean, "flushQueueLength")).longValue();
      }
      if (found && compactions == 0 && flushes == 0) {
        if (quietSince < 0) {
          quietSince = now;
        }
        if (now - quietSince >= quiet) {
          System.err.printf("settle: compaction and flush queues empty for %d s (after %d s)%n",
              quiet / 1000, (now - start) / 1000);
          code = 0;
          break;
        }
      } else {
        quietSince = -1;
      }
      if (now - start >= timeout) {
        System.err.printf("settle: not settled after %d s: compaction queue %d, flush queue %d%s%n",
            timeout / 1000, compactions, flushes, found ? "" : ", a RegionServer bean missing");
        break;
      }
      if (now - lastReport >= 10000) {
        System.err.printf("settle: compaction queue %d, flush queue %d%s (%d s)%n",
            compactions, flushes, found ? "" : ", a RegionServer bean missing", (now - start) / 1000);
        lastReport = now;
      }
      Thread.sleep(1000);
    }
    for (JMXConnector c : conns) {
      c.close();
    }
    System.exit(code);
  }
}
