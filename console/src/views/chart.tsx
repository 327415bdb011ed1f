import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import { formatShortDay } from '../format';

const DAY_S = 86_400;
/** Counts are whole: ticks at whole steps only. */
const COUNTS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000, 20_000, 50_000, 100_000, 1_000_000];

export interface ChartSeries {
  label: string;
  stroke: string;
  /** One value per day of `dates`. */
  values: number[];
}

/**
 * Figures per UTC day (uPlot, drawn on a canvas). Screen readers get the same figures from the
 * data table beside it, which `label` points to.
 */
export function DailyChart(props: {
  /** `YYYY-MM-DD` UTC days, oldest first. */
  dates: string[];
  series: ChartSeries[];
  /** Shown above the chart. */
  title: string;
  label: string;
  /** Counts: whole ticks from 0, as integers. Otherwise `format` writes each tick. */
  format?: (value: number) => string;
}) {
  const host = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = host.current;
    if (!element) return;
    const data: uPlot.AlignedData = [props.dates.map((date) => Date.parse(`${date}T00:00:00Z`) / 1000), ...props.series.map((s) => s.values)];
    const size = () => ({ width: Math.max(280, element.clientWidth), height: element.clientWidth < 500 ? 220 : 300 });
    const format = props.format;
    const plot = new uPlot(
      {
        ...size(),
        title: props.title,
        tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
        scales: { y: { range: (_u, _min, max) => [0, Math.max(1, max)] } },
        // Whole UTC days on the time axis, never hours.
        axes: [
          { incrs: [DAY_S, 2 * DAY_S, 7 * DAY_S, 14 * DAY_S, 28 * DAY_S], values: (_u, ticks) => ticks.map((t) => formatShortDay(t)) },
          format ? { values: (_u, ticks) => ticks.map(format), size: 70 } : { incrs: COUNTS, values: (_u, ticks) => ticks.map((t) => t.toLocaleString()) },
        ],
        series: [{ label: 'Day' }, ...props.series.map((s) => ({ label: s.label, stroke: s.stroke, width: 2, points: { show: props.dates.length <= 31 } }))],
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
  }, [props.dates, props.series, props.title]);
  return <div ref={host} class="chart" role="img" aria-label={props.label} />;
}
