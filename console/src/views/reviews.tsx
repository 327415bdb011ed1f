import { useState } from 'preact/hooks';
import { type ApiErrorItem, api, outcome, type Review } from '../api';
import { DataTable, Empty, Pager, Problem, Section, useDoneMessage, useLoad, UserId, ViewTitle } from '../components';
import { formatDateTime } from '../format';

const STATUSES = ['pending', 'approved', 'rejected'] as const;
const LIMIT = 20;

/** Claims held by a fraud rule (SPEC §13): approve grants the held rewards once, reject drops them. */
export function ReviewsView() {
  const [status, setStatus] = useState<(typeof STATUSES)[number]>('pending');
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined]);
  const after = cursors[cursors.length - 1];
  const [list, reload] = useLoad(
    () => outcome(api.GET('/admin/reviews', { params: { query: { status, limit: LIMIT, ...(after ? { after } : {}) } } })),
    [status, after],
  );
  const [errors, setErrors] = useState<ApiErrorItem[]>([]);
  // The decided row (and the button that had focus) goes: focus moves to what was done.
  const { say, message } = useDoneMessage();
  const decide = async (review: Review, decision: 'approve' | 'reject') => {
    const path = decision === 'approve' ? '/admin/reviews/{id}/approve' : '/admin/reviews/{id}/reject';
    const result = await outcome(api.POST(path, { params: { path: { id: review.id } } }));
    if (!result.ok) {
      // Decided elsewhere meanwhile (REVIEW.ALREADY_DECIDED): the list shows it as it is now.
      say(null);
      setErrors(result.errors);
      return reload();
    }
    setErrors([]);
    say(`Review ${review.id} ${decision === 'approve' ? 'approved' : 'rejected'}.`);
    reload();
  };
  return (
    <>
      <ViewTitle>Reviews</ViewTitle>
      <form class="filters" onSubmit={(event) => event.preventDefault()}>
        <div class="field">
          <label for="review-status">Status</label>
          <select
            id="review-status"
            value={status}
            onChange={(event) => {
              setStatus((event.currentTarget as HTMLSelectElement).value as Review['status']);
              setCursors([undefined]);
              say(null);
              setErrors([]);
            }}
          >
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </div>
      </form>
      {errors.length > 0 ? <Problem errors={errors} /> : null}
      {message}
      <Section loaded={list} what="the review queue">
        {(body) => (
          <>
            {body.data.reviews.length === 0 ? (
              <Empty>No {status} review.</Empty>
            ) : (
              <DataTable caption="Reviews" columns={['Review', 'Rule', 'Code', 'Referrer', 'Claimer', 'Held at', 'Decided', { hidden: 'Actions' }]}>
                {body.data.reviews.map((r) => (
                  <tr key={r.id}>
                    <th scope="row">{r.id}</th>
                    <td>{r.rule_id}</td>
                    <td>{r.code}</td>
                    <td>{r.referrer_app_user_id === null ? '—' : <UserId id={r.referrer_app_user_id} />}</td>
                    <td>
                      <UserId id={r.claimer_app_user_id} />
                    </td>
                    <td>{formatDateTime(r.created_at)}</td>
                    <td>{r.decided_at ? `${r.status}, ${formatDateTime(r.decided_at)}` : '—'}</td>
                    <td class="actions">
                      {r.status === 'pending' ? (
                        <>
                          <button type="button" onClick={() => decide(r, 'approve')} aria-label={`Approve review ${r.id}`}>
                            Approve
                          </button>
                          <button type="button" class="secondary" onClick={() => decide(r, 'reject')} aria-label={`Reject review ${r.id}`}>
                            Reject
                          </button>
                        </>
                      ) : null}
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
    </>
  );
}
