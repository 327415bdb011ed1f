import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import type { AnalyticsDay } from '../api';
import { formatShortDay } from '../format';

const DAY_S = 86_400;
/** Counts are whole: ticks at whole steps only. */
const COUNTS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000, 20_000, 50_000, 100_000, 1_000_000];

const SERIES = [
  { label: 'Claims', key: 'claims', stroke: '#2563eb' },
  { label: 'Conversions', key: 'conversions', stroke: '#16a34a' },
  { label: 'Churns', key: 'churns', stroke: '#dc2626' },
] as const;

/**
 * Claims, conversions and churns per UTC day (uPlot, drawn on a canvas). Screen readers get the
 * same figures from the data table beside it, which the chart's label points to.
 */
export function DailyChart(props: { days: AnalyticsDay[]; tableId: string }) {
  const host = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = host.current;
    if (!element) return;
    const data: uPlot.AlignedData = [props.days.map((d) => Date.parse(`${d.date}T00:00:00Z`) / 1000), ...SERIES.map((s) => props.days.map((d) => d[s.key]))];
    const size = () => ({ width: Math.max(280, element.clientWidth), height: element.clientWidth < 500 ? 220 : 300 });
    const plot = new uPlot(
      {
        ...size(),
        tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
        scales: { y: { range: (_u, _min, max) => [0, Math.max(1, max)] } },
        // Whole UTC days on the time axis, never hours.
        axes: [
          { incrs: [DAY_S, 2 * DAY_S, 7 * DAY_S, 14 * DAY_S, 28 * DAY_S], values: (_u, ticks) => ticks.map((t) => formatShortDay(t)) },
          { incrs: COUNTS, values: (_u, ticks) => ticks.map((t) => t.toLocaleString()) },
        ],
        series: [{ label: 'Day' }, ...SERIES.map((s) => ({ label: s.label, stroke: s.stroke, width: 2, points: { show: props.days.length <= 31 } }))],
        legend: { live: false },
        cursor: { drag: { x: false, y: false } },
      },
      data,
      element,
    );
    const observer = new ResizeObserver(() => plot.setSize(size()));
    observer.observe(element);
    return () => {
      observer.disconnect();
      plot.destroy();
    };
  }, [props.days]);
  return (
    <div
      ref={host}
      class="chart"
      role="img"
      aria-label={`Claims, conversions and churns per day; the table “${props.tableId}” lists the same figures, with revenue`}
    />
  );
}
