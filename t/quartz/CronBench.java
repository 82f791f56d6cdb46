/* t/quartz/CronBench.java: times Quartz 2.3's own CronExpression.getTimeAfter for bench/cron.
 *
 *   java -cp /usr/share/java/quartz2.jar t/quartz/CronBench.java < questions
 *
 * Input: "Z <zone>", then per expression "E <hex of the expression> <n>" followed by n lines of
 * epoch seconds. Output per expression: "<median ns> <p99 ns> <sum of the answers' epoch
 * seconds, -1 for none>". Each call is timed alone with System.nanoTime(), minus the timer's
 * own median cost, after the same calls have run a few times to let the JIT compile them.
 */
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Date;
import java.util.TimeZone;

import org.quartz.CronExpression;

public class CronBench {
    private static String unhex(String h) {
        byte[] b = new byte[h.length() / 2];
        for (int i = 0; i < b.length; i++)
            b[i] = (byte) Integer.parseInt(h.substring(2 * i, 2 * i + 2), 16);
        return new String(b, StandardCharsets.UTF_8);
    }

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.US_ASCII));
        TimeZone tz = TimeZone.getTimeZone("UTC");
        long[] probe = new long[100001];
        for (int i = 0; i < probe.length; i++) {
            long a = System.nanoTime();
            probe[i] = System.nanoTime() - a;
        }
        Arrays.sort(probe);
        long overhead = probe[probe.length / 2];
        String line;
        while ((line = in.readLine()) != null) {
            String[] f = line.split(" ");
            if (f[0].equals("Z")) {
                tz = TimeZone.getTimeZone(f[1]);
                continue;
            }
            CronExpression ce = new CronExpression(unhex(f[1]));
            ce.setTimeZone(tz);
            int n = Integer.parseInt(f[2]);
            Date[] at = new Date[n];
            for (int i = 0; i < n; i++)
                at[i] = new Date(Long.parseLong(in.readLine().trim()) * 1000L);
            long sum = 0;
            for (int round = 0; round < 4; round++) /* warm-up: let the JIT compile it */
                for (int i = 0; i < n; i++)
                    ce.getTimeAfter(at[i]);
            long[] ns = new long[n];
            for (int i = 0; i < n; i++) {
                long a = System.nanoTime();
                Date d = ce.getTimeAfter(at[i]);
                ns[i] = Math.max(0, System.nanoTime() - a - overhead);
                sum += d == null ? -1 : d.getTime() / 1000L;
            }
            Arrays.sort(ns);
            System.out.println(ns[n / 2] + " " + ns[(int) Math.min(n - 1, (long) n * 99 / 100)] + " " + sum);
        }
    }
}
