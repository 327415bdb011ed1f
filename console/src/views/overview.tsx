import { useMemo, useState } from 'preact/hooks';
import { type AnalyticsDay, api, outcome, type Revenue } from '../api';
import { Empty, Scroller, Section, useLoad, UserId, ViewTitle, DataTable } from '../components';
import { formatDay, formatMoney, formatNumber, formatRevenue, lastDays } from '../format';
import { DailyChart } from './chart';

const RANGES = [7, 30, 90] as const;

const COUNT_SERIES = [
  { label: 'Claims', key: 'claims', stroke: '#2563eb' },
  { label: 'Conversions', key: 'conversions', stroke: '#16a34a' },
  { label: 'Churns', key: 'churns', stroke: '#dc2626' },
] as const;

/**
 * The figures per day as charts: claims, conversions and churns on one; revenue on one chart per
 * currency (amounts in several currencies share no axis), gross and refunded as the API gives them.
 */
function DailyCharts(props: { days: AnalyticsDay[]; table: string }) {
  const dates = useMemo(() => props.days.map((d) => d.date), [props.days]);
  const counts = useMemo(() => COUNT_SERIES.map((s) => ({ label: s.label, stroke: s.stroke, values: props.days.map((d) => d[s.key]) })), [props.days]);
  const revenue = useMemo(() => {
    const currencies = [...new Set(props.days.flatMap((d) => d.revenue.map((r) => r.currency)))].sort();
    return currencies.map((currency) => {
      const of = (d: AnalyticsDay) => d.revenue.find((r) => r.currency === currency);
      const series = [
        { label: 'Gross', stroke: '#7c3aed', values: props.days.map((d) => of(d)?.gross_minor ?? 0) },
        { label: 'Refunded', stroke: '#ea580c', values: props.days.map((d) => of(d)?.refunded_minor ?? 0) },
      ];
      return { currency, series, format: (minor: number) => formatMoney(minor, currency) };
    });
  }, [props.days]);
  return (
    <>
      <DailyChart
        dates={dates}
        series={counts}
        title="Claims, conversions and churns"
        label={`Claims, conversions and churns per day; the table “${props.table}” lists the same figures`}
      />
      {revenue.map(({ currency, series, format }) => (
        <DailyChart
          key={currency}
          dates={dates}
          series={series}
          format={format}
          title={`Revenue in ${currency}`}
          label={`Revenue in ${currency} per day, gross and refunded; the table “${props.table}” lists the same figures`}
        />
      ))}
    </>
  );
}

/** Sums per currency (gross and refunded kept apart, as the API gives them). */
function addRevenue(days: AnalyticsDay[]): Revenue {
  const byCurrency = new Map<string, { currency: string; gross_minor: number; refunded_minor: number }>();
  for (const day of days) {
    for (const r of day.revenue) {
      const sum = byCurrency.get(r.currency) ?? { currency: r.currency, gross_minor: 0, refunded_minor: 0 };
      sum.gross_minor += r.gross_minor;
      sum.refunded_minor += r.refunded_minor;
      byCurrency.set(r.currency, sum);
    }
  }
  return [...byCurrency.values()].sort((a, b) => a.currency.localeCompare(b.currency));
}

function Totals(props: { days: AnalyticsDay[] }) {
  const sum = (key: 'claims' | 'conversions' | 'churns') => props.days.reduce((total, d) => total + d[key], 0);
  const figures: [string, string][] = [
    ['Claims', formatNumber(sum('claims'))],
    ['Conversions', formatNumber(sum('conversions'))],
    ['Churns', formatNumber(sum('churns'))],
    ['Revenue', formatRevenue(addRevenue(props.days))],
  ];
  return (
    <section aria-labelledby="totals-heading">
      <h2 id="totals-heading">Totals</h2>
      <dl class="totals">
        {figures.map(([name, value]) => (
          <div key={name}>
            <dt>{name}</dt>
            <dd>{value}</dd>
          </div>
        ))}
      </dl>
    </section>
  );
}

function DailyTable(props: { days: AnalyticsDay[] }) {
  return (
    <Scroller label="Per day (UTC) table">
      <table id="daily-table">
        <caption>Per day (UTC)</caption>
        <thead>
          <tr>
            <th scope="col">Date</th>
            <th scope="col">Claims</th>
            <th scope="col">Conversions</th>
            <th scope="col">Churns</th>
            <th scope="col">Revenue</th>
          </tr>
        </thead>
        <tbody>
          {[...props.days].reverse().map((d) => (
            <tr key={d.date}>
              <th scope="row">
                <time dateTime={d.date}>{formatDay(d.date)}</time>
              </th>
              <td class="num">{formatNumber(d.claims)}</td>
              <td class="num">{formatNumber(d.conversions)}</td>
              <td class="num">{formatNumber(d.churns)}</td>
              <td class="num">{formatRevenue(d.revenue)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </Scroller>
  );
}

export function OverviewView() {
  const [days, setDays] = useState<number>(30);
  const [program, setProgram] = useState('');
  const range = useMemo(() => lastDays(days), [days]);
  const query = { ...range, ...(program ? { program_id: program } : {}) };
  const [programs] = useLoad(() => outcome(api.GET('/admin/programs')), []);
  const [daily] = useLoad(() => outcome(api.GET('/admin/analytics/daily', { params: { query } })), [range, program]);
  const [top] = useLoad(() => outcome(api.GET('/admin/analytics/top-codes', { params: { query: { ...query, by: 'claims', limit: 10 } } })), [range, program]);
  return (
    <>
      <ViewTitle>Overview</ViewTitle>
      <form class="filters" onSubmit={(event) => event.preventDefault()}>
        <div class="field">
          <label for="range">Range</label>
          <select id="range" value={String(days)} onChange={(event) => setDays(Number((event.currentTarget as HTMLSelectElement).value))}>
            {RANGES.map((n) => (
              <option key={n} value={String(n)}>
                Last {n} days
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for="program-filter">Program</label>
          <select id="program-filter" value={program} onChange={(event) => setProgram((event.currentTarget as HTMLSelectElement).value)}>
            <option value="">All programs</option>
            {programs.state === 'ok'
              ? programs.data.data.programs.map((p) => (
                  <option key={p.id} value={p.id}>
                    {p.name} ({p.id})
                  </option>
                ))
              : null}
          </select>
        </div>
        <p class="muted">
          {formatDay(range.from)} – {formatDay(range.to)} (UTC days)
        </p>
      </form>
      <Section loaded={daily} what="the daily figures">
        {(body) => (
          <>
            <Totals days={body.data.days} />
            <section aria-labelledby="daily-heading">
              <h2 id="daily-heading">Per day</h2>
              <DailyCharts days={body.data.days} table="Per day (UTC)" />
              <DailyTable days={body.data.days} />
            </section>
          </>
        )}
      </Section>
      <section aria-labelledby="top-heading">
        <h2 id="top-heading">Top 10 codes by claims</h2>
        <Section loaded={top} what="the top codes">
          {(body) =>
            body.data.codes.length === 0 ? (
              <Empty>No code was claimed in this range.</Empty>
            ) : (
              <DataTable caption="Top 10 codes by claims" columns={['Code', 'Kind', 'Program', 'Owner', 'Claims', 'Conversions', 'Revenue']}>
                {body.data.codes.map((c) => (
                  <tr key={c.code}>
                    <th scope="row">{c.code}</th>
                    <td>{c.kind}</td>
                    <td>{c.program_id ?? '—'}</td>
                    <td>{c.app_user_id === null ? '—' : <UserId id={c.app_user_id} />}</td>
                    <td class="num">{formatNumber(c.claims)}</td>
                    <td class="num">{formatNumber(c.conversions)}</td>
                    <td class="num">{formatRevenue(c.revenue)}</td>
                  </tr>
                ))}
              </DataTable>
            )
          }
        </Section>
      </section>
    </>
  );
}
