import { api, type Outcome, type Schemas, unanswered } from '../api';
import { Empty, Section, useLoad, ViewTitle, DataTable } from '../components';
import { formatDateTime, formatNumber } from '../format';

type Readiness = Schemas['Readiness'];

/** /readyz answers 503 with the same report when the service is not ready: both are shown. */
async function readiness(): Promise<Outcome<Readiness>> {
  try {
    const { data, error, response } = await api.GET('/readyz');
    const report = (data ?? (error as { data?: Readiness } | undefined))?.data;
    if (report) return { ok: true, data: report };
    const errors = (error as { errors?: Outcome<never> extends { errors: infer E } ? E : never })?.errors ?? [];
    return { ok: false, status: response.status, errors, notBuilt: false };
  } catch (cause) {
    return unanswered(cause);
  }
}

export function HealthView() {
  const [report, reload] = useLoad(readiness, []);
  return (
    <>
      <ViewTitle>Health</ViewTitle>
      <p>
        <button type="button" onClick={reload}>
          Refresh
        </button>
      </p>
      <Section loaded={report} what="the readiness report">
        {(r) => <Report report={r} />}
      </Section>
    </>
  );
}

function Report(props: { report: Readiness }) {
  const r = props.report;
  const replay = r.projections.filter((p) => p.needs_replay);
  return (
    <>
      <dl class="totals">
        <div>
          <dt>Ready</dt>
          <dd>{r.ready ? 'yes' : 'no'}</dd>
        </div>
        <div>
          <dt>Log head</dt>
          <dd>{r.head ?? 'empty log'}</dd>
        </div>
        <div>
          <dt>Needs replay</dt>
          <dd>{replay.length === 0 ? 'no' : replay.map((p) => p.name).join(', ')}</dd>
        </div>
      </dl>
      {replay.length > 0 ? (
        <p role="alert" class="problem">
          Run <code>npm run replay</code>: {replay.map((p) => p.name).join(', ')} must be rebuilt from the log.
        </p>
      ) : null}
      <section aria-labelledby="projections-heading">
        <h2 id="projections-heading">Projections</h2>
        <DataTable caption="Read models" columns={['Projection', 'Checkpoint', 'Lag (events)', 'Caught up', 'Needs replay', 'Failure']}>
          {r.projections.map((p) => (
            <tr key={p.name}>
              <th scope="row">{p.name}</th>
              <td class="num">{p.checkpoint ?? '—'}</td>
              <td class="num">{typeof p.lag === 'number' ? formatNumber(p.lag) : p.lag}</td>
              <td>{p.caught_up ? 'yes' : 'no'}</td>
              <td>{p.needs_replay ? 'yes' : 'no'}</td>
              <td>{p.failure ? `${p.failure.error} (at ${p.failure.position})` : '—'}</td>
            </tr>
          ))}
        </DataTable>
      </section>
      <section aria-labelledby="reactions-heading">
        <h2 id="reactions-heading">Reactions and webhooks</h2>
        <p>
          Reactions:{' '}
          {r.reactions
            ? `checkpoint ${r.reactions.checkpoint ?? '—'}, ${r.reactions.failure ? `held: ${r.reactions.failure.error}` : 'healthy'}`
            : 'not run here'}
        </p>
        {r.webhooks && r.webhooks.disabled_endpoints.length > 0 ? (
          <ul>
            {r.webhooks.disabled_endpoints.map((e) => (
              <li key={e.id}>
                Disabled endpoint {e.id} ({e.url}) since {formatDateTime(e.since)}
              </li>
            ))}
          </ul>
        ) : (
          <Empty>No disabled webhook endpoint.</Empty>
        )}
      </section>
    </>
  );
}
