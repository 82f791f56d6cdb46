// t/java/EjNodeOracle.java: what the real ElasticJob-Lite 3.0.4 does with a config node, for
// t/44-conf-node-ej (`java -cp ELASTICJOB_JAR:quartz2:snakeyaml:guava:commons-lang3:gson ...`).
//
// One question line per node: "N <hex of the node's bytes>". The answer says what ElasticJob's
// own classes make of it, key by key, at the moments ElasticJob uses each key:
//   "LOAD <exception>"   YamlEngine.unmarshal(node, JobConfigurationPOJO).toJobConfiguration()
//                        throws: no instance can load the node at all;
//   "OK total=N cron=C strategy=S sip=P tz=O1,O2,O3,O4" otherwise, where
//     C  NONE (no cron: a one-off job), OK, or BAD when CronScheduleBuilder.cronSchedule (what
//        JobScheduleController's trigger is made with) throws;
//     S  OK:<type> when JobShardingStrategyFactory.getStrategy finds the strategy, else BAD (every
//        resharding throws);
//     P  BAD when new ShardingItemParameters(...) throws (each fire does), else the parameters
//        of items 0..total-1 as ElasticJob reads them, "i=hex;..." ("-" for none);
//     Oi the zone's offset in seconds at four instants, as TimeZone.getTimeZone makes the zone
//        (an id Java does not know is GMT); "D" when timeZone is null or empty (the JVM's).
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.TimeZone;
import java.util.TreeMap;
import org.apache.shardingsphere.elasticjob.api.JobConfiguration;
import org.apache.shardingsphere.elasticjob.infra.context.ShardingItemParameters;
import org.apache.shardingsphere.elasticjob.infra.handler.sharding.JobShardingStrategyFactory;
import org.apache.shardingsphere.elasticjob.infra.pojo.JobConfigurationPOJO;
import org.apache.shardingsphere.elasticjob.infra.yaml.YamlEngine;
import org.quartz.CronScheduleBuilder;

public class EjNodeOracle {
    static final long[] AT = { 1736899200000L, 1752537600000L, 631152000000L, 2224972800000L };

    static String hex(String s) {
        StringBuilder b = new StringBuilder();
        for (byte x : s.getBytes(StandardCharsets.UTF_8))
            b.append(String.format("%02x", x & 0xff));
        return b.length() == 0 ? "-" : b.toString();
    }

    static String unhex(String h) {
        byte[] b = new byte[h.length() / 2];
        for (int i = 0; i < b.length; i++)
            b[i] = (byte) Integer.parseInt(h.substring(2 * i, 2 * i + 2), 16);
        return new String(b, StandardCharsets.UTF_8);
    }

    static String answer(String yaml) {
        JobConfiguration c;
        try {
            c = YamlEngine.unmarshal(yaml, JobConfigurationPOJO.class).toJobConfiguration();
        } catch (Throwable e) {
            return "LOAD " + e.getClass().getSimpleName();
        }
        StringBuilder a = new StringBuilder("OK total=").append(c.getShardingTotalCount());
        String cron = c.getCron();
        if (cron == null || cron.isEmpty()) {
            a.append(" cron=NONE");
        } else {
            try {
                CronScheduleBuilder.cronSchedule(cron);
                a.append(" cron=OK");
            } catch (Throwable e) {
                a.append(" cron=BAD");
            }
        }
        try {
            String type = JobShardingStrategyFactory.getStrategy(c.getJobShardingStrategyType()).getType();
            a.append(" strategy=OK:").append(type);
        } catch (Throwable e) {
            a.append(" strategy=BAD");
        }
        try {
            Map<Integer, String> m = new ShardingItemParameters(c.getShardingItemParameters()).getMap();
            StringBuilder p = new StringBuilder();
            for (Map.Entry<Integer, String> e : new TreeMap<>(m).entrySet())
                if (e.getKey() >= 0 && e.getKey() < c.getShardingTotalCount())
                    p.append(p.length() == 0 ? "" : ";").append(e.getKey()).append('=').append(hex(e.getValue()));
            a.append(" sip=").append(p.length() == 0 ? "-" : p.toString());
        } catch (Throwable e) {
            a.append(" sip=BAD");
        }
        String tz = c.getTimeZone();
        if (tz == null || tz.isEmpty()) {
            a.append(" tz=D");
        } else {
            TimeZone z = TimeZone.getTimeZone(tz);
            a.append(" tz=");
            for (int i = 0; i < AT.length; i++)
                a.append(i == 0 ? "" : ",").append(z.getOffset(AT[i]) / 1000);
        }
        return a.toString();
    }

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.US_ASCII));
        PrintWriter out = new PrintWriter(System.out);
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isEmpty())
                continue;
            String a;
            try {
                a = line.startsWith("N ") ? answer(unhex(line.substring(2).equals("-") ? "" : line.substring(2))) : "BAD " + line;
            } catch (Throwable e) {
                a = "BAD " + e;
            }
            out.println(a);
        }
        out.flush();
    }
}
