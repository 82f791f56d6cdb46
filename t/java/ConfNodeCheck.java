// t/java/ConfNodeCheck.java: ElasticJob's side of t/38-conf-snakeyaml (run by the test with
// `java -cp snakeyaml.jar t/java/ConfNodeCheck.java DIR`).
//
// For every DIR/NAME.yaml (a config node written by ejob) it does what ElasticJob does with a
// config node (props put in the order listed in DIR/NAME.keys, when there is one): YamlEngine.unmarshal (SnakeYAML loadAs into a JobConfigurationPOJO, which fails on
// keys the bean does not have) and YamlEngine.marshal (dumpAsMap with a representer that leaves
// out nulls and empty collections). It writes what SnakeYAML dumped to DIR/NAME.java, or the
// exception to DIR/NAME.err. The bean below has JobConfigurationPOJO's properties and types
// (ElasticJob 3.0.x); jobExtraConfigurations is left out, its elements need ElasticJob's classes.
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Properties;
import org.yaml.snakeyaml.DumperOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.introspector.Property;
import org.yaml.snakeyaml.nodes.CollectionNode;
import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.NodeTuple;
import org.yaml.snakeyaml.nodes.SequenceNode;
import org.yaml.snakeyaml.nodes.Tag;
import org.yaml.snakeyaml.representer.Representer;

public class ConfNodeCheck {
    public static class Pojo {
        private String jobName, cron, timeZone, shardingItemParameters, jobParameter;
        private int shardingTotalCount, maxTimeDiffSeconds = -1, reconcileIntervalMinutes;
        private boolean monitorExecution, failover, misfire, disabled, overwrite, staticSharding;
        private String jobShardingStrategyType, jobExecutorServiceHandlerType, jobErrorHandlerType;
        private Collection<String> jobListenerTypes = new ArrayList<>();
        private String description, label;
        private Properties props = new Properties();

        public String getJobName() { return jobName; }
        public void setJobName(String v) { jobName = v; }
        public String getCron() { return cron; }
        public void setCron(String v) { cron = v; }
        public String getTimeZone() { return timeZone; }
        public void setTimeZone(String v) { timeZone = v; }
        public int getShardingTotalCount() { return shardingTotalCount; }
        public void setShardingTotalCount(int v) { shardingTotalCount = v; }
        public String getShardingItemParameters() { return shardingItemParameters; }
        public void setShardingItemParameters(String v) { shardingItemParameters = v; }
        public String getJobParameter() { return jobParameter; }
        public void setJobParameter(String v) { jobParameter = v; }
        public boolean isMonitorExecution() { return monitorExecution; }
        public void setMonitorExecution(boolean v) { monitorExecution = v; }
        public boolean isFailover() { return failover; }
        public void setFailover(boolean v) { failover = v; }
        public boolean isMisfire() { return misfire; }
        public void setMisfire(boolean v) { misfire = v; }
        public int getMaxTimeDiffSeconds() { return maxTimeDiffSeconds; }
        public void setMaxTimeDiffSeconds(int v) { maxTimeDiffSeconds = v; }
        public int getReconcileIntervalMinutes() { return reconcileIntervalMinutes; }
        public void setReconcileIntervalMinutes(int v) { reconcileIntervalMinutes = v; }
        public String getJobShardingStrategyType() { return jobShardingStrategyType; }
        public void setJobShardingStrategyType(String v) { jobShardingStrategyType = v; }
        public String getJobExecutorServiceHandlerType() { return jobExecutorServiceHandlerType; }
        public void setJobExecutorServiceHandlerType(String v) { jobExecutorServiceHandlerType = v; }
        public String getJobErrorHandlerType() { return jobErrorHandlerType; }
        public void setJobErrorHandlerType(String v) { jobErrorHandlerType = v; }
        public Collection<String> getJobListenerTypes() { return jobListenerTypes; }
        public void setJobListenerTypes(Collection<String> v) { jobListenerTypes = v; }
        public String getDescription() { return description; }
        public void setDescription(String v) { description = v; }
        public Properties getProps() { return props; }
        public void setProps(Properties v) { props = v; }
        public boolean isDisabled() { return disabled; }
        public void setDisabled(boolean v) { disabled = v; }
        public boolean isOverwrite() { return overwrite; }
        public void setOverwrite(boolean v) { overwrite = v; }
        public String getLabel() { return label; }
        public void setLabel(String v) { label = v; }
        public boolean isStaticSharding() { return staticSharding; }
        public void setStaticSharding(boolean v) { staticSharding = v; }
    }

    // Leaves out a property whose value is null or an empty collection, as ElasticJob does.
    static class DropUnset extends Representer {
        DropUnset(DumperOptions o) { super(o); }
        @Override
        protected NodeTuple representJavaBeanProperty(Object bean, Property p, Object v, Tag t) {
            NodeTuple tuple = super.representJavaBeanProperty(bean, p, v, t);
            Node n = tuple.getValueNode();
            if (Tag.NULL.equals(n.getTag())) return null;
            if (n instanceof SequenceNode && ((SequenceNode) n).getValue().isEmpty()) return null;
            if (n instanceof MappingNode && ((MappingNode) n).getValue().isEmpty()) return null;
            return tuple;
        }
    }

    public static void main(String[] args) throws Exception {
        // SnakeYAML finds the bean class by name through this loader (source-launch mode keeps
        // the compiled classes in their own loader)
        Thread.currentThread().setContextClassLoader(Pojo.class.getClassLoader());
        try (DirectoryStream<Path> dir = Files.newDirectoryStream(Paths.get(args[0]), "*.yaml")) {
            for (Path in : dir) {
                String base = in.toString().substring(0, in.toString().length() - 5);
                String yaml = new String(Files.readAllBytes(in), StandardCharsets.UTF_8);
                try {
                    Pojo pojo = new Yaml().loadAs(yaml, Pojo.class);
                    // NAME.keys: the order in which the job's props were put into its
                    // Properties (when hashes collide, a ConcurrentHashMap's order depends on it)
                    Path keys = Paths.get(base + ".keys");
                    if (Files.exists(keys)) {
                        String list = new String(Files.readAllBytes(keys), StandardCharsets.UTF_8);
                        Properties p = new Properties();
                        for (Object k : new Yaml().loadAs(list, java.util.List.class))
                            p.put(k, pojo.getProps().get(k));
                        pojo.setProps(p);
                    }
                    String out = new Yaml(new DropUnset(new DumperOptions())).dumpAsMap(pojo);
                    Files.write(Paths.get(base + ".java"), out.getBytes(StandardCharsets.UTF_8));
                } catch (Exception e) {
                    Files.write(Paths.get(base + ".err"), e.toString().getBytes(StandardCharsets.UTF_8));
                }
            }
        }
    }
}
