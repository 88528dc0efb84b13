/**
 * Charts for the run report as inline SVG strings: one line chart over time and one horizontal
 * bar chart, nothing else. No library and no script: the page renders from the markup alone,
 * and hovering a chart shows the values through SVG `<title>` tooltips.
 *
 * Every string that comes from data (series names, bar labels) goes through `escapeHtml`.
 */

/** Escapes text for HTML element content and quoted attribute values. */
export function escapeHtml(value: unknown): string {
    return String(value).replace(/[&<>"']/g, (char) => HTML_ESCAPES[char] ?? char);
}

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Colours for series without their own, distinguishable and readable on white. */
export const PALETTE = [
    '#4269d0',
    '#efb118',
    '#ff725c',
    '#6cc5b0',
    '#3ca951',
    '#ff8ab7',
    '#a463f2',
    '#97bbf5',
    '#9c6b4e',
    '#9498a0',
] as const;

/** The colour of the `index`-th series without one of its own: PALETTE's colours in turn. */
export function paletteColor(index: number): string {
    return PALETTE[index % PALETTE.length] ?? PALETTE[0];
}

export interface Series {
    name: string;
    /** [x, y] pairs, x ascending; x is seconds since the run started. */
    points: Array<[number, number]>;
    /** Default: the next colour of PALETTE. */
    color?: string;
    dashed?: boolean;
}

/**
 * A moment of the run on a chart: `stop` (default, red) for
 * what stopped something, `move` (teal) for a change of course.
 */
export interface Marker {
    /** Seconds since the run started. */
    x: number;
    label: string;
    kind?: 'stop' | 'move';
}

export interface LineChartOptions {
    title: string;
    /** Unit of the y values, written above the y axis, e.g. `pages/s`. */
    unit: string;
    /** One sentence under the title saying what is drawn. */
    caption?: string;
    /** Horizontal reference lines, e.g. the run's mean rate. */
    references?: Array<{ value: number; label: string }>;
    /** Vertical markers at moments of the run, e.g. when the drift breaker stopped a route. */
    markers?: Marker[];
    /** Fill the area under the lines (for a single series). Default: false. */
    area?: boolean;
    /** Shown instead of the chart when no series has two points. */
    emptyText?: string;
    /** Round y ticks to whole numbers (counts). Default: false. */
    integer?: boolean;
    /** SVG coordinate size; the chart scales to its container. Defaults: 640 x 220. */
    width?: number;
    height?: number;
}

const MARGIN = { top: 26, right: 16, bottom: 30, left: 52 };
/** Most hover bands per chart; each shows every series' value at its middle. */
const HOVER_BANDS = 120;

export function lineChart(series: Series[], options: LineChartOptions): string {
    const { width = 640, height = 220 } = options;
    const drawn = series.filter((one) => one.points.length >= 2);
    if (drawn.length === 0)
        return panel(options.title, options.caption, emptyState(options.emptyText ?? 'no data for this chart'));

    // Colours go into attributes: escaped like any other string.
    const colored = drawn.map((one, index) => ({ ...one, color: escapeHtml(one.color ?? paletteColor(index)) }));
    const xs = colored.flatMap((one) => one.points.map(([x]) => x));
    const ys = colored.flatMap((one) => one.points.map(([, y]) => y));
    for (const reference of options.references ?? []) ys.push(reference.value);
    // Time since the start: the axis starts at 0 even when the first sample came a little later.
    const xMin = Math.min(0, ...xs);
    const xMax = Math.max(xMin + 1, ...xs);
    // The y axis always includes zero, so lines of different charts read alike.
    const yTicks = niceTicks(Math.min(0, ...ys), Math.max(...ys, options.integer ? 1 : 0.001), 5, options.integer);
    // The ticks run from at or below zero to above it: there are always two or more.
    const [yMin = 0] = yTicks;
    const yMax = yTicks.at(-1) ?? yMin;
    const plot = { left: MARGIN.left, top: MARGIN.top, right: width - MARGIN.right, bottom: height - MARGIN.bottom };
    const sx = (x: number) => plot.left + ((x - xMin) / (xMax - xMin)) * (plot.right - plot.left);
    const sy = (y: number) => plot.bottom - ((y - yMin) / (yMax - yMin)) * (plot.bottom - plot.top);

    const parts: string[] = [];
    for (const tick of yTicks) {
        const y = px(sy(tick));
        parts.push(`<line class="grid" x1="${plot.left}" x2="${plot.right}" y1="${y}" y2="${y}"/>`);
        parts.push(
            `<text class="tick" x="${plot.left - 6}" y="${y}" text-anchor="end" ` +
                `dominant-baseline="middle">${formatNumber(tick)}</text>`,
        );
    }
    for (const tick of timeTicks(xMin, xMax, 6)) {
        const x = px(sx(tick));
        parts.push(`<line class="axis" x1="${x}" x2="${x}" y1="${plot.bottom}" y2="${plot.bottom + 4}"/>`);
        parts.push(
            `<text class="tick" x="${x}" y="${plot.bottom + 16}" text-anchor="middle">${formatDuration(tick)}</text>`,
        );
    }
    parts.push(`<line class="axis" x1="${plot.left}" x2="${plot.right}" y1="${px(sy(0))}" y2="${px(sy(0))}"/>`);
    parts.push(`<text class="unit" x="4" y="${MARGIN.top - 14}">${escapeHtml(options.unit)}</text>`);
    parts.push(`<text class="unit" x="${plot.right}" y="${height - 2}" text-anchor="end">time since start</text>`);

    for (const one of colored) {
        const line = one.points.map(([x, y], index) => `${index === 0 ? 'M' : 'L'}${px(sx(x))},${px(sy(y))}`).join('');
        // Each series drawn has two points or more.
        const first = one.points[0];
        const last = one.points.at(-1);
        if (options.area && first && last) {
            const zero = px(sy(0));
            const area = `${line}L${px(sx(last[0]))},${zero}L${px(sx(first[0]))},${zero}Z`;
            parts.push(`<path class="area" d="${area}" fill="${one.color}"/>`);
        }
        const dash = one.dashed ? ' stroke-dasharray="5 4"' : '';
        parts.push(
            `<path class="line" d="${line}" stroke="${one.color}"${dash}><title>${escapeHtml(one.name)}</title></path>`,
        );
    }
    for (const reference of options.references ?? []) {
        const y = sy(reference.value);
        parts.push(`<line class="reference" x1="${plot.left}" x2="${plot.right}" y1="${px(y)}" y2="${px(y)}"/>`);
        parts.push(
            `<text class="reference-label" x="${plot.right - 4}" y="${px(y - 4)}" ` +
                `text-anchor="end">${escapeHtml(reference.label)}</text>`,
        );
    }
    for (const marker of options.markers ?? []) {
        if (marker.x < xMin || marker.x > xMax) continue;
        const x = px(sx(marker.x));
        const title = escapeHtml(`${marker.label} at ${formatDuration(marker.x)}`);
        parts.push(
            `<g class="marker${marker.kind === 'move' ? ' move' : ''}"><title>${title}</title>` +
                `<line x1="${x}" x2="${x}" y1="${plot.top}" y2="${plot.bottom}"/>` +
                `<text x="${x}" y="${plot.top - 3}" ` +
                `text-anchor="middle">${escapeHtml(truncate(marker.label, 24))}</text></g>`,
        );
    }
    parts.push(hoverBands(colored, options.unit, { xMin, xMax, plot, sx }));

    const svg =
        `<svg class="chart" viewBox="0 0 ${width} ${height}" role="img" aria-label="${escapeHtml(options.title)}">` +
        `${parts.join('')}</svg>`;
    const legend = colored
        .map(
            (one) =>
                `<li><span class="swatch${one.dashed ? ' dashed' : ''}" ` +
                `style="--c:${one.color}"></span>${escapeHtml(one.name)}</li>`,
        )
        .join('');
    return panel(options.title, options.caption, `${svg}<ul class="legend">${legend}</ul>`);
}

export interface Bar {
    label: string;
    value: number;
    /** Bars of one group are drawn under the group's heading. */
    group?: string;
    /** Default: the chart's `color`. */
    color?: string;
}

export interface BarChartOptions {
    title: string;
    caption?: string;
    /** The value of a full-width bar. Default: the largest value. */
    max?: number;
    /** How a value is written at the end of its bar. Default: formatNumber. */
    format?: (value: number) => string;
    /** Default: the first colour of PALETTE. */
    color?: string;
    /** Shown instead of the chart when there are no bars. */
    emptyText?: string;
    /** SVG coordinate width; the chart scales to its container. Default: 640. */
    width?: number;
}

const BAR_ROW = 22;
const GROUP_ROW = 24;

export function barChart(bars: Bar[], options: BarChartOptions): string {
    if (bars.length === 0)
        return panel(options.title, options.caption, emptyState(options.emptyText ?? 'no data for this chart'));
    const { width = 640, format = formatNumber, color = PALETTE[0] } = options;
    const max = options.max ?? Math.max(...bars.map((bar) => bar.value), 1e-9);
    // Room for the longest label (about 6.5 units a character at 11px), within limits.
    const labelWidth = Math.min(200, Math.max(60, ...bars.map((bar) => Math.min(bar.label.length, 28) * 6.5)));
    const barLeft = labelWidth + 8;
    const barSpace = width - barLeft - 64;

    const parts: string[] = [];
    let y = 4;
    let group: string | undefined;
    for (const bar of bars) {
        if (bar.group !== undefined && bar.group !== group) {
            group = bar.group;
            parts.push(`<text class="group" x="0" y="${y + 16}">${escapeHtml(truncate(group, 40))}</text>`);
            y += GROUP_ROW;
        }
        const length = Math.max(0, Math.min(1, bar.value / max)) * barSpace;
        const middle = y + BAR_ROW / 2;
        const name = escapeHtml(bar.group ? `${bar.group} · ${bar.label}` : bar.label);
        parts.push(
            `<g class="bar"><title>${name}: ${escapeHtml(format(bar.value))}</title>` +
                `<text class="tick" x="${px(labelWidth)}" y="${middle}" text-anchor="end" ` +
                `dominant-baseline="middle">${escapeHtml(truncate(bar.label, 28))}</text>` +
                `<rect class="track" x="${barLeft}" y="${y + 3}" width="${barSpace}" height="${BAR_ROW - 6}" rx="2"/>` +
                `<rect x="${barLeft}" y="${y + 3}" width="${px(Math.max(length, 1))}" height="${BAR_ROW - 6}" rx="2" ` +
                `fill="${escapeHtml(bar.color ?? color)}"/>` +
                `<text class="value" x="${px(barLeft + barSpace + 6)}" y="${middle}" ` +
                `dominant-baseline="middle">${escapeHtml(format(bar.value))}</text></g>`,
        );
        y += BAR_ROW;
    }
    const svg =
        `<svg class="chart" viewBox="0 0 ${width} ${y + 4}" role="img" ` +
        `aria-label="${escapeHtml(options.title)}">${parts.join('')}</svg>`;
    return panel(options.title, options.caption, svg);
}

/** A titled chart panel; `body` is markup. */
export function panel(title: string, caption: string | undefined, body: string): string {
    const note = caption ? `<p class="caption">${escapeHtml(caption)}</p>` : '';
    return `<figure class="panel"><figcaption><h3>${escapeHtml(title)}</h3>${note}</figcaption>${body}</figure>`;
}

export function emptyState(text: string): string {
    return `<div class="empty">${escapeHtml(text)}</div>`;
}

/** 1234 → `1,234`; 12345 → `12.3k`; 0.456 → `0.46`. */
export function formatNumber(value: number): string {
    const abs = Math.abs(value);
    if (abs >= 1e6) return `${trim(value / 1e6)}M`;
    if (abs >= 1e4) return `${trim(value / 1e3)}k`;
    if (abs >= 100 || Number.isInteger(value)) return Math.round(value).toLocaleString('en-US');
    return trim(value);
}

/** Seconds as `45s`, `2m`, `2m30s`, `1h05m`. */
export function formatDuration(seconds: number): string {
    const total = Math.round(seconds);
    if (total < 60) return `${total}s`;
    if (total < 3600)
        return total % 60 === 0
            ? `${total / 60}m`
            : `${Math.floor(total / 60)}m${String(total % 60).padStart(2, '0')}s`;
    const minutes = Math.floor((total % 3600) / 60);
    return `${Math.floor(total / 3600)}h${String(minutes).padStart(2, '0')}m`;
}

function trim(value: number): string {
    return String(Number(value.toFixed(value >= 100 ? 0 : value >= 10 ? 1 : 2)));
}

function truncate(text: string, length: number): string {
    return text.length > length ? `${text.slice(0, length - 1)}…` : text;
}

function px(value: number): string {
    return String(Math.round(value * 10) / 10);
}

/** Round tick values covering `min`..`max`, about `target` steps of 1, 2 or 5 times a power of ten. */
function niceTicks(min: number, max: number, target: number, integer = false): number[] {
    const raw = (max - min) / target;
    const power = 10 ** Math.floor(Math.log10(raw));
    let step = [1, 2, 5, 10].map((factor) => factor * power).find((candidate) => candidate >= raw) ?? 10 * power;
    if (integer) step = Math.max(1, Math.round(step));
    const ticks: number[] = [];
    const last = Math.ceil(max / step - 1e-9);
    for (let index = Math.floor(min / step + 1e-9); index <= last; index += 1)
        ticks.push(Number((index * step).toPrecision(12)));
    return ticks;
}

/** Time ticks at round durations (5s, 30s, 5m, …), about `target` of them. */
function timeTicks(min: number, max: number, target: number): number[] {
    const steps = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400];
    const step =
        steps.find((candidate) => (max - min) / candidate <= target) ?? Math.ceil((max - min) / target / 86400) * 86400;
    const ticks: number[] = [];
    for (let tick = Math.ceil(min / step) * step; tick <= max; tick += step) ticks.push(tick);
    return ticks;
}

/** Invisible vertical bands, each with a tooltip of every series' value at its middle. */
function hoverBands(
    series: Array<Series & { color: string }>,
    unit: string,
    geometry: {
        xMin: number;
        xMax: number;
        plot: { left: number; top: number; right: number; bottom: number };
        sx: (x: number) => number;
    },
): string {
    const { xMin, xMax, plot, sx } = geometry;
    const longest = Math.max(...series.map((one) => one.points.length));
    const bands = Math.min(HOVER_BANDS, longest);
    const span = (xMax - xMin) / bands;
    const parts: string[] = [];
    for (let band = 0; band < bands; band += 1) {
        const x = xMin + span * (band + 0.5);
        const lines = series.map((one) => {
            const [, y] = nearest(one.points, x);
            return `${one.name}: ${formatNumber(y)} ${unit}`;
        });
        const left = sx(xMin + span * band);
        parts.push(
            `<rect class="hover" x="${px(left)}" y="${plot.top}" width="${px(sx(xMin + span * (band + 1)) - left)}" ` +
                `height="${plot.bottom - plot.top}">` +
                `<title>${escapeHtml([`at ${formatDuration(x)}`, ...lines].join('\n'))}</title></rect>`,
        );
    }
    return `<g class="hover-bands">${parts.join('')}</g>`;
}

function nearest(points: Array<[number, number]>, x: number): [number, number] {
    let low = 0;
    let high = points.length - 1;
    while (high - low > 1) {
        const middle = (low + high) >> 1;
        const point = points[middle];
        if (point !== undefined && point[0] <= x) low = middle;
        else high = middle;
    }
    const below = points[low];
    const above = points[high];
    if (!below || !above) throw new RangeError('nearest: a series without points');
    return Math.abs(below[0] - x) <= Math.abs(above[0] - x) ? below : above;
}
