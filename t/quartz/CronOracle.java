/* t/quartz/CronOracle.java: answers cron questions with the real Quartz 2.3 and java.util.Calendar,
 * so the C tests can compare ejob's cron and tz modules with them.
 *
 *   java -cp /usr/share/java/quartz2.jar t/quartz/CronOracle.java < questions > answers
 *
 * One answer line per question line. Expressions travel hex-encoded (UTF-8 bytes) so that
 * spaces, tabs and control characters survive. Questions:
 *   V                              -> "V <quartz MAX_YEAR> <tzdb version>"
 *   E <hex>                        -> "OK" | "ERR <message>"
 *   N <zone> <after> <count> <hex> -> "OK t1 t2 ..." epoch seconds, each fire time after the one
 *                                     before; it ends early with "never" when getTimeAfter gives
 *                                     null, "EXC <exception>" when it throws, or "TIMEOUT" when a
 *                                     search runs over 0.5 s. "ERR <message>" when the expression
 *                                     is refused
 *   O <zone> <epoch>               -> "<offset seconds east of UTC>"
 *   L <zone> <y> <mon1> <d> <h> <mi> <s> -> "<epoch>" of the lenient GregorianCalendar with those fields
 */
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.io.BufferedWriter;
import java.io.OutputStreamWriter;
import java.nio.charset.StandardCharsets;
import java.text.ParseException;
import java.util.Calendar;
import java.util.Date;
import java.util.GregorianCalendar;
import java.util.Locale;
import java.util.TimeZone;

import org.quartz.CronExpression;

public class CronOracle {
    private static final long TIMEOUT_MS = 500;

    private static String unhex(String h) {
        byte[] b = new byte[h.length() / 2];
        for (int i = 0; i < b.length; i++)
            b[i] = (byte) Integer.parseInt(h.substring(2 * i, 2 * i + 2), 16);
        return new String(b, StandardCharsets.UTF_8);
    }

    private static String oneLine(String s) {
        return s == null ? "" : s.replace('\n', ' ').replace('\r', ' ');
    }

    private static TimeZone zone(String id) {
        TimeZone tz = TimeZone.getTimeZone(id);
        if (!tz.getID().equals(id))
            throw new IllegalArgumentException("unknown zone " + id);
        return tz;
    }

    /* Answers the N question into sb (a StringBuffer: the main thread reads what is there if
     * the question overruns). */
    private static void next(StringBuffer sb, String zoneId, long after, int count, String expr) {
        CronExpression ce;
        try {
            ce = new CronExpression(expr);
        } catch (ParseException e) {
            sb.append("ERR ").append(oneLine(e.getMessage()));
            return;
        }
        ce.setTimeZone(zone(zoneId));
        sb.append("OK");
        Date d = new Date(after * 1000L);
        for (int i = 0; i < count; i++) {
            Date n;
            try {
                n = ce.getTimeAfter(d);
            } catch (RuntimeException e) {
                sb.append(" EXC ").append(e.getClass().getSimpleName());
                break;
            }
            if (n == null) {
                sb.append(" never");
                break;
            }
            sb.append(' ').append(n.getTime() / 1000L);
            d = n;
        }
    }

    @SuppressWarnings({"deprecation", "removal"})
    private static void stop(Thread t) throws InterruptedException {
        t.stop(); /* deprecated, but the loop it ends never checks for interruption */
        t.join(TIMEOUT_MS);
    }

    private static String answer(String line) throws Exception {
        String[] f = line.split(" ");
        switch (f[0]) {
        case "V":
            return "V " + CronExpression.MAX_YEAR + " "
                + java.time.zone.ZoneRulesProvider.getVersions("UTC").keySet().iterator().next();
        case "E":
            try {
                new CronExpression(unhex(f.length > 1 ? f[1] : ""));
                return "OK";
            } catch (ParseException e) {
                return "ERR " + oneLine(e.getMessage());
            }
        case "N": {
            final String z = f[1];
            final long after = Long.parseLong(f[2]);
            final int count = Integer.parseInt(f[3]);
            final String expr = unhex(f.length > 4 ? f[4] : "");
            /* Some expressions send getTimeAfter into an endless loop ("0 0 0 0W * ?"), so each
             * question runs in its own thread, which is stopped if it overruns: a thread left
             * spinning would starve the questions after it. */
            final StringBuffer sb = new StringBuffer();
            Thread t = new Thread(() -> next(sb, z, after, count, expr));
            t.setDaemon(true);
            t.start();
            t.join(TIMEOUT_MS);
            if (t.isAlive()) {
                stop(t);
                return sb.length() > 0 ? sb + " TIMEOUT" : "TIMEOUT";
            }
            return sb.toString();
        }
        case "O":
            return Integer.toString(zone(f[1]).getOffset(Long.parseLong(f[2]) * 1000L) / 1000);
        case "L": {
            Calendar c = new GregorianCalendar(zone(f[1]), Locale.US);
            c.clear();
            c.set(Integer.parseInt(f[2]), Integer.parseInt(f[3]) - 1, Integer.parseInt(f[4]),
                  Integer.parseInt(f[5]), Integer.parseInt(f[6]), Integer.parseInt(f[7]));
            return Long.toString(Math.floorDiv(c.getTimeInMillis(), 1000L));
        }
        default:
            return "BAD " + line;
        }
    }

    public static void main(String[] args) throws Exception {
        Locale.setDefault(Locale.US);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.US_ASCII));
        PrintWriter out = new PrintWriter(new BufferedWriter(new OutputStreamWriter(System.out, StandardCharsets.UTF_8)));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isEmpty())
                continue;
            String a;
            try {
                a = answer(line);
            } catch (Exception e) {
                a = "BAD " + e;
            }
            out.println(a);
        }
        out.flush();
    }
}
