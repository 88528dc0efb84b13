"""
The measurements of measure.ts, taken for a Scrapy crawl, and the result line of protocol.ts.
Figures have the same names, units and roundings; how each is taken in Python is said where it
differs from Node.
"""
import json
import os
import resource
import sys
import time

from scrapy import signals
from twisted.internet.task import LoopingCall

# The steady part of a run: its middle 60% of wall time, ramp-up and tail dropped (measure.ts).
STEADY_FROM, STEADY_TO = 0.2, 0.8


class Measurement:
    """Started just before the crawl; `watch` hooks it to the crawler once the reactor is installed."""

    def __init__(self, sample_interval_ms):
        self.sample_interval_ms = sample_interval_ms
        self.start_rss_mb = peak_rss_mb()
        self.start_cpu_sec = process_cpu_sec()
        self.start_ticks = machine_ticks()
        self.started_at_ms = now_ms()
        self.completions = []
        self.inflight_samples = []
        # The reactor thread's CPU time, read with each in-flight sample, for threadBusy.
        self.thread_samples = []
        self.sampler = None

    def watch(self, crawler):
        # response_downloaded fires for every response the download handler returns, before the
        # downloader middlewares: redirects and retried errors count, as at Node's HTTP client.
        # response_received comes after them, so it would miss those; on the clean shop both agree.
        crawler.signals.connect(self._on_response, signal=signals.response_downloaded)
        self.sampler = LoopingCall.withCount(lambda intervals: self._sample(crawler, intervals))
        self.sampler.start(self.sample_interval_ms / 1000, now=False)

    def elapsed_sec(self):
        return (now_ms() - self.started_at_ms) / 1000

    def _on_response(self):
        self.completions.append(now_ms())

    def _sample(self, crawler, intervals):
        # A busy reactor runs this late, once for all the intervals that passed (as Node's setInterval
        # fires once). The suites take the series as one sample per interval, so the value seen now
        # stands for each of them: the nearest reading there is, as only the reactor thread changes it.
        engine = crawler.engine
        self.inflight_samples.extend([len(engine.downloader.active) if engine else 0] * intervals)
        self.thread_samples.append((now_ms(), time.thread_time()))

    def stop(self):
        """Stops sampling; returns what was measured since the start, as measure.ts's stop()."""
        ended_at_ms = now_ms()
        cpu_sec = process_cpu_sec() - self.start_cpu_sec
        idle, total = machine_ticks()
        if self.sampler is not None and self.sampler.running:
            self.sampler.stop()
        started = self.started_at_ms
        duration_sec = (ended_at_ms - started) / 1000
        window_start = started + STEADY_FROM * (ended_at_ms - started)
        window_end = started + STEADY_TO * (ended_at_ms - started)
        in_window = sum(1 for t in self.completions if window_start <= t < window_end)
        start_idle, start_total = self.start_ticks
        return {
            'pages': len(self.completions),
            'durationSec': round(duration_sec, 3),
            'pagesPerSec': round(len(self.completions) / duration_sec, 1),
            'steadyPagesPerSec': round(in_window / ((window_end - window_start) / 1000), 1),
            'peakRssMb': peak_rss_mb(),
            'startRssMb': self.start_rss_mb,
            'cpuSec': round(cpu_sec, 2),
            'machineCpuBusy': round(1 - (idle - start_idle) / ((total - start_total) or 1), 3),
            'threadBusy': round(thread_busy_between(self.thread_samples, window_start, window_end), 3),
            'startedAtMs': started,
            'endedAtMs': ended_at_ms,
            'inflightSamples': self.inflight_samples,
        }


def thread_busy_between(samples, from_ms, to_ms):
    """
    Python has no event-loop utilization: this is the reactor thread's CPU time (time.thread_time(),
    read in the sampler, which runs on that thread) over the wall time between the first sample at
    or after `from_ms` and the last before `to_ms`. Like Node's figure it leaves other threads out
    (Twisted's thread pool, used for DNS). 0 with fewer than two samples.
    """
    in_window = [s for s in samples if from_ms <= s[0] < to_ms]
    if len(in_window) < 2:
        return 0
    (first_ms, first_cpu), (last_ms, last_cpu) = in_window[0], in_window[-1]
    return (last_cpu - first_cpu) / ((last_ms - first_ms) / 1000) if last_ms > first_ms else 0


def machine_ticks():
    """Idle and total CPU ticks of all cores so far, summed as Node's os.cpus() does (user, nice, system, idle, irq)."""
    with open('/proc/stat') as stat:
        user, nice, system, idle, _iowait, irq = (int(field) for field in stat.readline().split()[1:7])
    return idle, user + nice + system + idle + irq


def process_cpu_sec():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def peak_rss_mb():
    # ru_maxrss is in KB on Linux, as Node's process.resourceUsage().maxRSS.
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)


def now_ms():
    return round(time.time() * 1000)


def report(result):
    """Prints the result as the last stdout line (protocol.ts's reportAndExit, but the caller exits)."""
    sys.stdout.write(json.dumps(result) + '\n')
    sys.stdout.flush()


def report_and_exit(result):
    """For the time limit: the crawl is still running, so exit at once, as reportAndExit does."""
    report(result)
    os._exit(0)
