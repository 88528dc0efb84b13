/** The run report's stylesheet, inlined into the page: system fonts, light cards, a two-column grid. */
export const REPORT_CSS = `
:root { --ink: #1f2937; --muted: #6b7280; --line: #e5e7eb; --bg: #f5f6f8; --card: #fff;
  --ok: #1f8a3b; --warn: #b26b00; --bad: #c62828; }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--ink);
  font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
main { max-width: 1280px; margin: 0 auto; padding: 24px 28px 40px; }
header { margin-bottom: 18px; }
.eyebrow { margin: 0; color: var(--muted); text-transform: uppercase; letter-spacing: .08em; font-size: 12px; }
h1 { margin: 2px 0 4px; font-size: 28px; display: flex; align-items: center; gap: 12px; flex-wrap: wrap; word-break: \
break-all; }
h2 { margin: 28px 0 10px; font-size: 16px; color: var(--muted); font-weight: 600; text-transform: uppercase; \
letter-spacing: .06em; }
h3 { margin: 0; font-size: 15px; }
.facts { margin: 0; color: var(--muted); }
.facts b { color: var(--ink); }
.badge { font-size: 13px; font-weight: 600; padding: 3px 10px; border-radius: 999px; color: #fff; }
.badge.ok { background: var(--ok); } .badge.warn { background: var(--warn); } .badge.bad { background: var(--bad); }
.tiles { display: grid; grid-template-columns: repeat(auto-fit, minmax(170px, 1fr)); gap: 12px; }
.tile { background: var(--card); border: 1px solid var(--line); border-left: 4px solid #4269d0; border-radius: 8px; \
padding: 10px 14px; }
.tile.warn { border-left-color: var(--warn); }
.tile .label { color: var(--muted); font-size: 12px; text-transform: uppercase; letter-spacing: .05em; }
.tile .value { font-size: 26px; font-weight: 650; font-variant-numeric: tabular-nums; }
.tile .note { color: var(--muted); font-size: 12px; overflow-wrap: anywhere; }
.grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(480px, 1fr)); gap: 14px; align-items: start; }
.panel { margin: 0; background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 12px 14px; \
min-width: 0; }
figcaption { margin-bottom: 6px; }
.caption { margin: 2px 0 0; color: var(--muted); font-size: 12.5px; }
svg.chart { display: block; width: 100%; height: auto; overflow: visible; font-size: 11px; }
svg .grid { stroke: #eef0f3; }
svg .axis { stroke: #9ca3af; }
svg .tick { fill: #4b5563; }
svg .unit { fill: var(--muted); font-size: 10.5px; }
svg .line { fill: none; stroke-width: 2; stroke-linejoin: round; stroke-linecap: round; }
svg .area { opacity: .12; }
svg .reference { stroke: #374151; stroke-dasharray: 3 3; }
svg .reference-label { fill: #374151; font-size: 10.5px; paint-order: stroke; stroke: #fff; stroke-width: 3px; }
svg .marker line { stroke: var(--bad); stroke-width: 1.5; stroke-dasharray: 4 3; }
svg .marker text { fill: var(--bad); font-size: 10.5px; font-weight: 600; paint-order: stroke; stroke: #fff; \
stroke-width: 3px; }
svg .marker.move line { stroke: #0f766e; }
svg .marker.move text { fill: #0f766e; }
svg .hover { fill: #000; fill-opacity: 0; }
svg .hover:hover { fill-opacity: .05; }
svg .group { font-weight: 600; fill: var(--ink); font-size: 12px; }
svg .track { fill: #f0f1f4; }
svg .value { fill: var(--ink); font-variant-numeric: tabular-nums; }
svg .bar:hover .track { fill: #e4e7ec; }
.legend { list-style: none; margin: 6px 0 0; padding: 0; display: flex; flex-wrap: wrap; gap: 4px 16px; font-size: \
12.5px; color: #374151; }
.legend li { display: flex; align-items: center; gap: 6px; overflow-wrap: anywhere; }
.swatch { width: 16px; height: 0; border-top: 3px solid var(--c); display: inline-block; }
.swatch.dashed { border-top-style: dashed; }
.empty { display: flex; align-items: center; justify-content: center; min-height: 120px; color: var(--muted);
  background: repeating-linear-gradient(45deg, #fafbfc, #fafbfc 8px, #f3f4f6 8px, #f3f4f6 16px); border-radius: 6px;
  text-align: center; padding: 12px; overflow-wrap: anywhere; }
.tables { display: block; columns: 2 480px; column-gap: 14px; }
.tables .panel { break-inside: avoid; margin-bottom: 14px; }
.panel.table h3 { margin-bottom: 8px; }
.panel.table .caption { margin: -4px 0 8px; }
.stack { display: grid; gap: 14px; }
table { width: 100%; border-collapse: collapse; font-size: 13px; }
th, td { padding: 4px 6px; border-bottom: 1px solid var(--line); text-align: left; vertical-align: top; overflow-wrap: \
anywhere; }
th { font-weight: 500; color: #374151; }
thead th { color: var(--muted); font-size: 12px; font-weight: 600; }
td { text-align: right; font-variant-numeric: tabular-nums; }
.grid-table td, .grid-table thead th:not(:first-child) { text-align: right; }
tr:last-child th, tr:last-child td { border-bottom: none; }
code { font-size: 12.5px; }
.alert { margin-top: 16px; background: #fdecea; border: 1px solid #f5c2bd; border-left: 4px solid var(--bad); \
border-radius: 8px; padding: 12px 16px; }
.alert h2 { margin: 0 0 6px; color: var(--bad); text-transform: none; letter-spacing: 0; font-size: 17px; }
.alert .trip + .trip { margin-top: 10px; padding-top: 10px; border-top: 1px solid #f5c2bd; }
.alert p { margin: 4px 0; }
.alert ul { margin: 4px 0 0; padding-left: 20px; font-size: 12.5px; }
.alert li { overflow-wrap: anywhere; }
.alert .issues { color: #7f1d1d; }
footer { margin-top: 28px; color: var(--muted); font-size: 12px; overflow-wrap: anywhere; }
`;
