/**
 * Which of a domain's transient failures are about load, for the concurrency controller
 * (concurrencyController.ts). A site may drop a few percent of requests however gently it is
 * asked; cutting the limit for those only slows the crawl, and AIMD would ratchet it down (a noisy
 * window cuts, and no window is ever clean). So:
 *
 * - the domain's error rate is tracked as a moving average of every outcome (the trend);
 * - a window has too many errors only when it is over the threshold *and* more than chance gives
 *   at the ambient rate (`tooMany`);
 * - every cut for errors is a trial: if the fetches started after it fail as often as before it,
 *   within the noise of both estimates (and at most 20%), the failures are ambient — the cut is
 *   undone, and their rate becomes the ambient rate the thresholds count from. Failures of load
 *   fall after a cut, or they came with it;
 * - the ambient rate follows the trend down when the failures stop, but not its noise.
 */

/** The trend is a moving average over about this many outcomes (a plain average of the first ones). */
const TREND_SAMPLES = 200;
/**
 * Fetches started after a cut that judge whether it lowered the error rate, once all of them have
 * an outcome: counted by start, not by end, so slow failures (timeouts) started in the trial count
 * in it, as they did in the rate before. The rate before needs as many outcomes to compare with.
 */
const TRIAL_SAMPLES = 100;
/** Most errors taken for ambient: a site failing more often is in trouble, not noisy, and cuts stand. */
const MAX_AMBIENT_ERROR_RATE = 0.2;
/**
 * How far, in standard deviations, a count must be from what chance gives to count as a change:
 * errors over the ambient rate in a window, an error rate after a cut against the one before it.
 * At 2, a site failing 5% of requests at random trips a window of 20 about once in 60 windows.
 */
const NOISE_SIGMAS = 2;

/** A cut for errors under judgement: the limit before it, the error rate then, and the fetches started since. */
export interface Trial {
    from: number;
    rateBefore: number;
    /** Outcomes the rate before was taken from (few at the start of a run). */
    samplesBefore: number;
    started: number;
    samples: number;
    errors: number;
}

export class AmbientErrors {
    /** Share of fetches that fail whatever the load; the thresholds count from it. */
    rate = 0;
    /** Share of recent outcomes that were transient failures. */
    private trend = 0;
    /** Outcomes counted into the trend, up to TREND_SAMPLES. */
    private trendSamples = 0;
    /** The trend when the current window began: the rate before a cut, without the burst of errors that caused it. */
    private windowStartTrend = { rate: 0, samples: 0 };
    private trial: Trial | undefined;

    /** A fetch starts: returns the trial it counts in, while the open one has fewer than TRIAL_SAMPLES. */
    enrol(): Trial | undefined {
        if (!this.trial || this.trial.started >= TRIAL_SAMPLES) return undefined;
        this.trial.started += 1;
        return this.trial;
    }

    /** An outcome of a fetch (1: a transient failure), whatever the limit it was started under. */
    record(error: 0 | 1, trial: Trial | undefined): void {
        this.trendSamples = Math.min(TREND_SAMPLES, this.trendSamples + 1);
        this.trend += (error - this.trend) / this.trendSamples;
        if (trial) {
            trial.samples += 1;
            trial.errors += error;
        }
    }

    /** True when `errors` in a window judged as `judged` outcomes are over `ambient + threshold` and beyond chance. */
    tooMany(errors: number, judged: number, threshold: number): boolean {
        const observed = errors / judged;
        const overChance = errors - this.rate * judged > NOISE_SIGMAS * Math.sqrt(judged * observed * (1 - observed));
        return errors > (this.rate + threshold) * judged && overChance;
    }

    /**
     * The limit is cut for errors from `from`: a trial starts. Chained cuts are judged together, from
     * the limit and the rate before the first, by the fetches started after the last: those started
     * between them were still over the site's ceiling, and would make the cut look as if it did not help.
     */
    cut(from: number): void {
        const first = this.trial ?? {
            from,
            rateBefore: this.windowStartTrend.rate,
            samplesBefore: this.windowStartTrend.samples,
        };
        const { rateBefore, samplesBefore } = first;
        this.trial = { from: first.from, rateBefore, samplesBefore, started: 0, samples: 0, errors: 0 };
    }

    /**
     * Once the trial's fetches all have an outcome: returns the limit from before the cut when the
     * cut is to be undone, or undefined when it stands (or no trial is done). It is undone when the
     * failures went on at the same rate, which is learned as ambient; and, learning nothing, when
     * the cut came before there was a rate to compare with (the run's first fetches): if the errors
     * come back at the higher limit, the next cut is judged against their rate.
     */
    judgeTrial(lowThreshold: number): number | undefined {
        if (!this.trial || this.trial.samples < TRIAL_SAMPLES) return undefined;
        const { from, rateBefore, samplesBefore, samples, errors } = this.trial;
        this.trial = undefined;
        const rateAfter = errors / samples;
        if (rateAfter < lowThreshold || rateAfter > MAX_AMBIENT_ERROR_RATE) return undefined;
        if (samplesBefore < TRIAL_SAMPLES) return from;
        const pooled = (rateBefore + rateAfter) / 2;
        const noise = NOISE_SIGMAS * Math.sqrt(pooled * (1 - pooled) * (1 / samples + 1 / samplesBefore));
        if (Math.abs(rateAfter - rateBefore) > noise) return undefined;
        // The trend holds the trial's outcomes and those before it: the better estimate of the ambient rate.
        this.rate = Math.max(rateAfter, this.trend);
        return from;
    }

    /** A window ended: ambient failures that stopped show in the trend, and the rate follows them down. */
    windowEnded(): void {
        this.rate = Math.min(
            this.rate,
            this.trend + NOISE_SIGMAS * Math.sqrt((this.trend * (1 - this.trend)) / Math.max(1, this.trendSamples)),
        );
    }

    /** A new window begins: the trend now is what a cut in it is judged against. */
    windowStarted(): void {
        this.windowStartTrend = { rate: this.trend, samples: this.trendSamples };
    }
}
