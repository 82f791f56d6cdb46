// t/java/ShardOracle.java: ElasticJob 3.0.4's and 3.0.5's sharding, answered by Java itself, so that
// t/40-shard can compare supervisor/coord/shard.c with it (`java t/java/ShardOracle.java < q > a`).
//
// Strings travel as hex of their UTF-8 bytes ("-" for the empty string) and are decoded with
// new String(bytes, UTF_8), as the ZooKeeper client decodes node names; hashing, ordering and
// Math.abs are Java's own. The strategy arithmetic is ElasticJob's, written from its source:
// the instance ids are sorted with Comparator.reverseOrder() (ZookeeperRegistryCenter.
// getChildrenKeys); ODEVITY reverses the list when (long) hashCode % 2 == 0; ROUND_ROBIN builds
// a new list with get((i + Math.abs(hashCode) % n) % n) unless that offset is 0; 3.0.5's
// SINGLE_SHARDING_BALANCE builds one with get((i + Math.abs(hashCode + ((Long) millis).intValue())
// % n) % n), millis being System.currentTimeMillis() at the sharding; then AVG_ALLOCATION gives
// the k-th instance [k * (total / n), (k + 1) * (total / n)) and, for k < total % n, the item
// total / n * n + k. One answer line per question line:
//
//   H <hex>                   -> hashCode, as a signed decimal
//   C <hexA> <hexB>           -> signum(a.compareTo(b))
//   S <strategy> <total> <millis> <job> <inst>...
//                             -> "OK o0 o1 ..." with oi the index (in the question) of the
//                                instance that owns item i; "DUP" when two ids are equal
//                                strings; "EXC <exception class>" when ElasticJob's code throws
//   O <strategy> <total> <n> <millis> <job>
//                             -> the strategy alone on a list of n, as ElasticJob's unit tests
//                                call it: "OK o0 o1 ..." positions in that list, or "EXC ..."
import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

public class ShardOracle {
    static String unhex(String h) {
        if (h.equals("-"))
            return "";
        byte[] b = new byte[h.length() / 2];
        for (int i = 0; i < b.length; i++)
            b[i] = (byte) Integer.parseInt(h.substring(2 * i, 2 * i + 2), 16);
        return new String(b, StandardCharsets.UTF_8);
    }

    // AVG_ALLOCATION: instance -> its items, in the order of the list.
    static Map<Integer, List<Integer>> average(List<Integer> units, int total) {
        Map<Integer, List<Integer>> r = new LinkedHashMap<>();
        int n = units.size();
        int per = total / n;
        for (int k = 0; k < n; k++) {
            List<Integer> items = new ArrayList<>();
            for (int i = k * per; i < (k + 1) * per; i++)
                items.add(i);
            r.put(units.get(k), items);
        }
        int rest = total % n, k = 0;
        for (List<Integer> items : r.values()) {
            if (k < rest)
                items.add(total / n * n + k);
            k++;
        }
        return r;
    }

    static Map<Integer, List<Integer>> strategy(String type, List<Integer> units, String job, int total, long millis) {
        switch (type) {
        case "AVG_ALLOCATION":
            return average(units, total);
        case "SINGLE_SHARDING_BALANCE": {
            int n = units.size();
            int offset = Math.abs(job.hashCode() + ((Long) millis).intValue()) % n;
            List<Integer> rotated = new ArrayList<>(n);
            for (int i = 0; i < n; i++)
                rotated.add(units.get((i + offset) % n));
            return average(rotated, total);
        }
        case "ODEVITY": {
            long h = job.hashCode();
            if (0 == h % 2)
                Collections.reverse(units);
            return average(units, total);
        }
        case "ROUND_ROBIN": {
            int n = units.size();
            int offset = Math.abs(job.hashCode()) % n;
            if (offset == 0)
                return average(units, total);
            List<Integer> rotated = new ArrayList<>(n);
            for (int i = 0; i < n; i++)
                rotated.add(units.get((i + offset) % n));
            return average(rotated, total);
        }
        default:
            throw new IllegalArgumentException(type);
        }
    }

    static String owners(Map<Integer, List<Integer>> m, int total) {
        int[] owner = new int[total];
        java.util.Arrays.fill(owner, -1);
        for (Map.Entry<Integer, List<Integer>> e : m.entrySet())
            for (int item : e.getValue())
                owner[item] = e.getKey();
        StringBuilder sb = new StringBuilder("OK");
        for (int o : owner)
            sb.append(' ').append(o);
        return sb.toString();
    }

    static String answer(String line) {
        String[] f = line.split(" ");
        switch (f[0]) {
        case "H":
            return Integer.toString(unhex(f[1]).hashCode());
        case "C":
            return Integer.toString(Integer.signum(unhex(f[1]).compareTo(unhex(f[2]))));
        case "S": {
            int total = Integer.parseInt(f[2]);
            long millis = Long.parseLong(f[3]);
            String job = unhex(f[4]);
            List<String> ids = new ArrayList<>();
            Map<String, Integer> index = new HashMap<>();
            for (int i = 5; i < f.length; i++) {
                String id = unhex(f[i]);
                if (index.put(id, i - 5) != null)
                    return "DUP";
                ids.add(id);
            }
            ids.sort(Comparator.reverseOrder());
            List<Integer> units = new ArrayList<>();
            for (String id : ids)
                units.add(index.get(id));
            try {
                return owners(strategy(f[1], units, job, total, millis), total);
            } catch (RuntimeException e) {
                return "EXC " + e.getClass().getSimpleName();
            }
        }
        case "O": {
            int total = Integer.parseInt(f[2]), n = Integer.parseInt(f[3]);
            long millis = Long.parseLong(f[4]);
            List<Integer> units = new ArrayList<>();
            for (int i = 0; i < n; i++)
                units.add(i);
            try {
                return owners(strategy(f[1], units, unhex(f[5]), total, millis), total);
            } catch (RuntimeException e) {
                return "EXC " + e.getClass().getSimpleName();
            }
        }
        default:
            return "BAD " + line;
        }
    }

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.US_ASCII));
        PrintWriter out = new PrintWriter(new BufferedWriter(new OutputStreamWriter(System.out, StandardCharsets.US_ASCII)));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isEmpty())
                continue;
            String a;
            try {
                a = answer(line);
            } catch (RuntimeException e) {
                a = "BAD " + e;
            }
            out.println(a);
        }
        out.flush();
    }
}
