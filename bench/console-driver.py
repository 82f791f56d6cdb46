"""bench/console-driver.py: what bench/console measures in a real headless Chromium (t/console/tconsole).

EJOB_MODE names the run (model, no-model), EJOB_RUNS the page loads; the numbers go to EJOB_RESULT
as "name value" lines, the checks that the page showed what it should as TAP (bench/console counts
the failed ones). Times in ms:
  paint.N         page load N (a new navigation each: run 0 with an empty cache, the others revalidate
                  the files: 304s) until the overview shows data: performance.mark('ejob-overview-data')
                  as the app sets it, from the navigation's start
  jobs.fetch.N    GET /api/v1/jobs in that load, its transfer (the resource timing)
  filter.NEEDLE   the filter typed (its input event) until the table shows the result (after the next
                  frame), with the model's document in the page; and the rows it then shows
  scroll.N        a jump of the window to another place in the 10,000 rows until they are drawn
  longtask        the longest task on the page's main thread while filtering and scrolling (a stall)
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "t", "console"))
from tconsole import Browser, diag, done, ok, wait  # noqa: E402

MODE = os.environ.get("EJOB_MODE", "model")
RUNS = int(os.environ.get("EJOB_RUNS", "5"))
NJOBS = int(os.environ.get("EJOB_NJOBS", "10000"))
out = open(os.environ["EJOB_RESULT"], "w")


def put(name, value):
    out.write(f"{name} {value}\n")
    out.flush()


b = Browser(1366, 768, name=MODE)
for i in range(RUNS):
    b.d.get("about:blank")
    b.d.get(os.environ["EJOB_URL"] + "/#/")
    t = wait(lambda: b.js("const m = performance.getEntriesByName('ejob-overview-data'); return m.length ? m[0].startTime : null"),
             180, "the overview's data")
    put(f"paint.{i}", f"{t:.1f}")
    f = b.js("const r = performance.getEntriesByType('resource').filter(e => e.name.endsWith('/api/v1/jobs'));"
             "return r.length ? [r[0].startTime, r[0].responseEnd, r[0].encodedBodySize] : null")
    if os.environ.get("EJOB_TIMELINE"):
        tl = b.js("return performance.getEntriesByType('resource').map(e => [e.name.replace(location.origin, ''), Math.round(e.startTime), Math.round(e.responseStart), Math.round(e.responseEnd)])"
                  ".concat([['nav', 0, Math.round(performance.getEntriesByType('navigation')[0].responseStart), Math.round(performance.getEntriesByType('navigation')[0].responseEnd)]])")
        diag(f"load {i}: " + " ".join(f"{n}:{a}-{r}-{e}" for n, a, r, e in sorted(tl, key=lambda x: x[1])))
    if f:
        put(f"jobs.fetch.{i}", f"{f[1] - f[0]:.1f}")
        put("jobs.bytes", f[2])
    if i == 0:
        ok(wait(lambda: b.find('#ov-tiles li.total .n').text == str(NJOBS), 10, "the count"), f"{MODE}: the overview counts {NJOBS} jobs")
        ok(len(b.finds("#ov-jobs-table tbody tr")) == 100 and "every job in Jobs" in b.text("#ov-jobs"),
           f"{MODE}: it lists 100 of them, the rest in Jobs")

if MODE == "model":
    b.js("window.__long = 0; new PerformanceObserver(l => { for (const e of l.getEntries()) window.__long = Math.max(window.__long, e.duration); })"
         ".observe({type: 'longtask'})")
    b.go("/jobs")
    ok(wait(lambda: len(b.finds("#jobs-table tr.row")) > 10 and b.text("#jobs-count") == f"{NJOBS} jobs", 30, "the table"),
       f"the jobs table: {NJOBS} jobs, {len(b.finds('#jobs-table tr.row'))} rows in the page")
    measure = """
        const [needle, done] = arguments;
        const q = document.getElementById('jobs-q');
        const t0 = performance.now();
        q.value = needle;
        q.dispatchEvent(new Event('input', {bubbles: true}));
        requestAnimationFrame(() => setTimeout(() => done([performance.now() - t0, document.getElementById('jobs-count').textContent,
            document.querySelectorAll('#jobs-table tr.row').length]), 0));"""
    cron = "0 0 0 1 1 ? 2099"   # bench/lib/bigns's jobs: j00000 .., SCRIPT, this cron, no description
    for needle in ("j0999", "j09999", "j01", "zzz", "1 ? 2099", ""):
        n = sum(1 for i in range(NJOBS) if needle in f"j{i:05d}" or needle in "script" or needle in cron)
        want = f"{n} of {NJOBS} jobs" if needle else f"{NJOBS} jobs"
        for k in range(3):
            ms, count, rows = b.d.execute_async_script(measure, needle)
            put(f"filter.{needle.replace(' ', '_') or 'none'}.{k}", f"{ms:.1f}")
        ok(count == want, f"filter '{needle}': '{count}' ({rows} rows in the page)")
    scroll = """
        const [y, done] = arguments;
        const t0 = performance.now();
        window.scrollTo(0, y);
        requestAnimationFrame(() => requestAnimationFrame(() => { const r = [...document.querySelectorAll('#jobs-table tr.row')]
            .find(e => e.getBoundingClientRect().top >= 0); done([performance.now() - t0, r ? r.dataset.job : null]); }));"""
    for k, y in enumerate((150000, 300000, 5000, 360000, 90000, 200000, 0, 250000, 30000, 330000)):
        ms, first = b.d.execute_async_script(scroll, y)
        put(f"scroll.{k}", f"{ms:.1f}")
        if k == 1:
            ok(first and first.startswith("j"), f"after a jump to {y} px the rows there are drawn (first in sight: {first})")
    put("longtask", f"{b.js('return window.__long'):.1f}")
    b.shot("bench-jobs")
out.close()
done()
