import { useState } from 'preact/hooks';
import { type ApiErrorItem, api, outcome, type Schemas } from '../api';
import { DataTable, Empty, Pager, Problem, Section, useDoneMessage, useLoad, usePages, ViewTitle } from '../components';
import { formatDateTime, formatNumber } from '../format';

const STATUSES = ['', 'pending', 'delivered', 'failed', 'dead'] as const;
type Status = Schemas['WebhookDelivery']['status'];

export function WebhooksView() {
  const [list] = useLoad(() => outcome(api.GET('/admin/webhooks')), []);
  const [selected, setSelected] = useState<string | null>(null);
  return (
    <>
      <ViewTitle>Webhooks</ViewTitle>
      <section aria-labelledby="endpoints-heading">
        <h2 id="endpoints-heading">Endpoints</h2>
        <Section loaded={list} what="the webhook endpoints">
          {(body) => <Endpoints endpoints={body.data.webhooks} selected={selected} onSelect={setSelected} />}
        </Section>
      </section>
      {selected ? <Deliveries key={selected} endpointId={selected} /> : null}
    </>
  );
}

function Endpoints(props: { endpoints: Schemas['Webhook'][]; selected: string | null; onSelect: (id: string) => void }) {
  const { page, pager } = usePages(props.endpoints);
  if (props.endpoints.length === 0) return <Empty>No webhook endpoint (PUT /admin/webhooks/ID adds one).</Empty>;
  return (
    <>
      <DataTable caption="Webhook endpoints" columns={['Endpoint', 'URL', 'Events', 'Enabled', { hidden: 'Actions' }]}>
        {page.map((w) => (
          <tr key={w.id} aria-current={w.id === props.selected ? 'true' : undefined}>
            <th scope="row">{w.id}</th>
            <td class="wrap">{w.url}</td>
            <td>{w.events === null ? 'all' : w.events.join(', ')}</td>
            <td>{w.enabled ? 'yes' : 'no'}</td>
            <td>
              <button type="button" class="link" onClick={() => props.onSelect(w.id)} aria-label={`Deliveries of ${w.id}`}>
                Deliveries
              </button>
            </td>
          </tr>
        ))}
      </DataTable>
      {pager}
    </>
  );
}

function Deliveries(props: { endpointId: string }) {
  const id = props.endpointId;
  const [status, setStatus] = useState<Status | ''>('');
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined]);
  const after = cursors[cursors.length - 1];
  const [list, reload] = useLoad(
    () =>
      outcome(
        api.GET('/admin/webhooks/{id}/deliveries', {
          params: { path: { id }, query: { limit: 20, ...(status ? { status } : {}), ...(after ? { after } : {}) } },
        }),
      ),
    [id, status, after],
  );
  const [errors, setErrors] = useState<ApiErrorItem[]>([]);
  // The list reloads (and the button that had focus goes): focus moves to what was done.
  const { say, message } = useDoneMessage();
  const redeliver = async (messageId: string) => {
    const result = await outcome(api.POST('/admin/webhooks/{id}/deliveries/{message_id}/redeliver', { params: { path: { id, message_id: messageId } } }));
    if (!result.ok) return setErrors(result.errors);
    setErrors([]);
    say(`Delivery ${messageId} queued again.`);
    reload();
  };
  return (
    <section aria-labelledby="deliveries-heading">
      <h2 id="deliveries-heading">Deliveries of {id}</h2>
      <form class="filters" onSubmit={(event) => event.preventDefault()}>
        <div class="field">
          <label for="delivery-status">Delivery status</label>
          <select
            id="delivery-status"
            value={status}
            onChange={(event) => {
              setStatus((event.currentTarget as HTMLSelectElement).value as Status | '');
              setCursors([undefined]);
            }}
          >
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {s || 'any'}
              </option>
            ))}
          </select>
        </div>
      </form>
      {errors.length > 0 ? <Problem errors={errors} /> : null}
      {message}
      <Section loaded={list} what="the deliveries">
        {(body) => (
          <>
            {body.data.deliveries.length === 0 ? (
              <Empty>No delivery{status ? ` with status ${status}` : ''}.</Empty>
            ) : (
              <DataTable
                caption="Deliveries"
                columns={['Message', 'Event', 'Status', 'Attempts', 'Last answer', 'Next attempt', 'Delivered', { hidden: 'Actions' }]}
              >
                {body.data.deliveries.map((d) => (
                  <tr key={d.message_id}>
                    <th scope="row">
                      <code>{d.message_id}</code>
                    </th>
                    <td>{d.event_type}</td>
                    <td>{d.status}</td>
                    <td class="num">{formatNumber(d.attempts)}</td>
                    <td>{d.last_status_code ?? d.last_error ?? '—'}</td>
                    <td>{formatDateTime(d.next_attempt_at)}</td>
                    <td>{formatDateTime(d.delivered_at)}</td>
                    <td>
                      <button type="button" onClick={() => redeliver(d.message_id)} aria-label={`Redeliver ${d.message_id}`}>
                        Redeliver
                      </button>
                    </td>
                  </tr>
                ))}
              </DataTable>
            )}
            <Pager
              label={`Page ${cursors.length}`}
              onPrevious={cursors.length > 1 ? () => setCursors(cursors.slice(0, -1)) : undefined}
              onNext={body.data.next_after ? () => setCursors([...cursors, body.data.next_after ?? undefined]) : undefined}
            />
          </>
        )}
      </Section>
    </section>
  );
}
