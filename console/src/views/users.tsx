import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { api, type Outcome, outcome, type Schemas } from '../api';
import {
  Empty,
  type Loaded,
  PAGE_SIZE,
  Problem,
  Scroller,
  Section,
  type ServerPage,
  useLoad,
  useServerPages,
  UserId,
  ViewTitle,
  DataTable,
} from '../components';
import { formatDateTime, formatNumber } from '../format';

type EventRow = Schemas['EventPage']['events'][number];
type LedgerRow = Schemas['CreditLedger']['entries'][number];

/** Events of the user's stream (`user-{app_user_id}` holds everything about one user), a page at a time, newest first (SPEC §14). */
async function historyPage(appUserId: string, after: string | null): Promise<Outcome<ServerPage<EventRow>>> {
  // One more than a page: whether a next page exists (the log's cursor never says the stream ended).
  const query = { stream: `user-${appUserId}`, order: 'desc' as const, limit: PAGE_SIZE + 1, ...(after ? { after } : {}) };
  const page = await outcome(api.GET('/admin/events', { params: { query } }));
  if (!page.ok) return page;
  const events = page.data.data.events;
  const shown = events.slice(0, PAGE_SIZE);
  return { ok: true, data: { items: shown, next: events.length > PAGE_SIZE ? shown[shown.length - 1]!.position : null } };
}

/** The user's credit ledger, a page at a time, oldest first. */
async function ledgerPage(appUserId: string, after: string | null): Promise<Outcome<ServerPage<LedgerRow>>> {
  const query = { limit: PAGE_SIZE, ...(after ? { after } : {}) };
  const page = await outcome(api.GET('/admin/users/{app_user_id}/credit-ledger', { params: { path: { app_user_id: appUserId }, query } }));
  return page.ok ? { ok: true, data: { items: page.data.data.entries, next: page.data.data.next_after } } : page;
}

export function UsersView() {
  const [query, setQuery] = useState(() => new URLSearchParams(window.location.hash.split('?')[1] ?? '').get('app_user_id') ?? '');
  const [userId, setUserId] = useState(query);
  return (
    <>
      <ViewTitle>Users</ViewTitle>
      <form
        class="filters"
        onSubmit={(event) => {
          event.preventDefault();
          // App user ids may begin or end with spaces: the id is looked up as typed (a blank one is no id).
          setUserId(query.trim() === '' ? '' : query);
        }}
      >
        <div class="field">
          <label for="user-search">App user ID</label>
          <input
            id="user-search"
            type="search"
            value={query}
            autoComplete="off"
            spellcheck={false}
            onInput={(event) => setQuery((event.currentTarget as HTMLInputElement).value)}
          />
        </div>
        <button type="submit">Search</button>
      </form>
      {userId ? (
        <UserDetail key={userId} appUserId={userId} />
      ) : (
        <Empty>Enter an app user ID to see the user's rewards, stats, credit ledger and history.</Empty>
      )}
    </>
  );
}

/**
 * A browser reads a path segment `.` or `..` (even percent-encoded) as a folder step, so the user
 * `.` or `..` cannot be asked for by its URL path from here: their profile and ledger are
 * reachable with `curl --path-as-is` only. Their history reads the log by query and shows.
 */
const PATH_UNREACHABLE = new Set(['.', '..']);

function UserDetail(props: { appUserId: string }) {
  const id = props.appUserId;
  return PATH_UNREACHABLE.has(id) ? <DotUserDetail appUserId={id} /> : <FullUserDetail appUserId={id} />;
}

function DotUserDetail(props: { appUserId: string }) {
  const id = props.appUserId;
  return (
    <>
      <p role="status">
        A browser cannot ask for the user “{id}” by its URL path, so its profile and credit ledger are not shown here: use <code>curl --path-as-is</code> on{' '}
        <code>/admin/users/{id}</code> and <code>/admin/users/{id}/credit-ledger</code>.
      </p>
      <EventHistory appUserId={id} />
    </>
  );
}

function FullUserDetail(props: { appUserId: string }) {
  const id = props.appUserId;
  const [user] = useLoad(() => outcome(api.GET('/admin/users/{app_user_id}', { params: { path: { app_user_id: id } } })), [id]);
  if (user.state === 'error' && user.errors.some((e) => e.code === 'NOT_FOUND.USER')) return <p role="status">No user has the app user ID “{id}”.</p>;
  return (
    <>
      <Section loaded={user} what="the user">
        {(body) => <Profile user={body.data.user} />}
      </Section>
      <section aria-labelledby="ledger-heading">
        <h2 id="ledger-heading">Credit ledger</h2>
        <Ledger appUserId={id} />
      </section>
      <EventHistory appUserId={id} />
    </>
  );
}

/** The user's stream, newest first (read by query: reachable for every id). */
function EventHistory(props: { appUserId: string }) {
  const id = props.appUserId;
  const { loaded, pager } = useServerPages((after) => historyPage(id, after), [id]);
  return (
    <section aria-labelledby="history-heading">
      <h2 id="history-heading">Event history</h2>
      <History loaded={loaded} pager={pager} />
    </section>
  );
}

function Profile(props: { user: Omit<Schemas['OperatorUser'], 'last_seen_at'> }) {
  const u = props.user;
  const active = Object.entries(u.rewards.active).flatMap(([kind, list]) => list.map((entry) => ({ kind, entry })));
  const expired = Object.values(u.rewards.expired ?? {}).flat().length;
  return (
    <>
      <section aria-labelledby="profile-heading">
        <h2 id="profile-heading">
          User <UserId id={u.app_user_id} />
        </h2>
        <dl class="totals">
          <div>
            <dt>Referral code</dt>
            <dd>{u.referral_code ?? '—'}</dd>
          </div>
          <div>
            <dt>Claims</dt>
            <dd>{formatNumber(u.stats.claims)}</dd>
          </div>
          <div>
            <dt>Conversions</dt>
            <dd>{formatNumber(u.stats.conversions)}</dd>
          </div>
          <div>
            <dt>Churns</dt>
            <dd>{formatNumber(u.stats.churns)}</dd>
          </div>
          <div>
            <dt>Refunds</dt>
            <dd>{formatNumber(u.stats.refunds)}</dd>
          </div>
          <div>
            <dt>Referred by</dt>
            <dd>{u.referred_by ? `${u.referred_by.code ?? '—'} (${u.referred_by.type})` : '—'}</dd>
          </div>
          <div>
            <dt>First seen</dt>
            <dd>{formatDateTime(u.first_seen_at)}</dd>
          </div>
        </dl>
      </section>
      <section aria-labelledby="rewards-heading">
        <h2 id="rewards-heading">Rewards</h2>
        {active.length === 0 ? (
          <Empty>No active reward{expired ? ` (${formatNumber(expired)} expired)` : ''}.</Empty>
        ) : (
          <DataTable caption="Active rewards" columns={['Reward', 'Kind', 'Credits', 'Granted', 'Expires']}>
            {active.map(({ kind, entry }) => (
              <tr key={`${entry.reward.key}${entry.created_at}`}>
                <th scope="row">{entry.reward.name}</th>
                <td>{kind}</td>
                <td class="num">{entry.credits === undefined ? '—' : formatNumber(entry.credits)}</td>
                <td>{formatDateTime(entry.created_at)}</td>
                <td>{entry.expires_at ? formatDateTime(entry.expires_at) : 'never'}</td>
              </tr>
            ))}
          </DataTable>
        )}
      </section>
    </>
  );
}

function Ledger(props: { appUserId: string }) {
  const id = props.appUserId;
  const { loaded, pager } = useServerPages((after) => ledgerPage(id, after), [id]);
  // The pager stays while the next page loads, so the button just pressed keeps the focus.
  return (
    <>
      <Section loaded={loaded} what="the credit ledger">
        {(page) => (page.length === 0 ? <Empty>No credit movement.</Empty> : <LedgerTable page={page} />)}
      </Section>
      {pager}
    </>
  );
}

function LedgerTable(props: { page: LedgerRow[] }) {
  const { page } = props;
  return (
    <Scroller label="Credit ledger table">
      <table id="credit-ledger">
        <caption class="visually-hidden">Credit ledger</caption>
        <thead>
          <tr>
            <th scope="col">Event</th>
            <th scope="col">At</th>
            <th scope="col">Kind</th>
            <th scope="col">Reward</th>
            <th scope="col">Change</th>
            <th scope="col">Balance</th>
            <th scope="col">Cause</th>
            <th scope="col">Operation ID</th>
          </tr>
        </thead>
        <tbody>
          {page.map((e) => (
            <tr key={`${e.event_id}${e.key}${e.kind}`}>
              <th scope="row">
                <code>{e.event_id}</code>
              </th>
              <td>
                <time dateTime={e.at}>{formatDateTime(e.at)}</time>
              </td>
              <td>{e.kind}</td>
              <td>{e.key}</td>
              <td class="num">{e.delta > 0 ? `+${formatNumber(e.delta)}` : formatNumber(e.delta)}</td>
              <td class="num">{formatNumber(e.balance_after)}</td>
              <td>{typeof e.cause.description === 'string' ? e.cause.description : String(e.cause.type ?? '')}</td>
              <td>{e.operation_id === null ? '' : <code>{e.operation_id}</code>}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </Scroller>
  );
}

function History(props: { loaded: Loaded<EventRow[]>; pager: ComponentChildren }) {
  const page = props.loaded.state === 'ok' ? props.loaded.data : [];
  const { pager } = props;
  if (props.loaded.state === 'loading') {
    // The pager stays while the next page loads, so the button just pressed keeps the focus.
    return (
      <>
        <p class="muted" role="status" aria-live="polite">
          Loading the event history…
        </p>
        {pager}
      </>
    );
  }
  if (props.loaded.state === 'error') return <Problem errors={props.loaded.errors} />;
  if (page.length === 0) return <Empty>No event.</Empty>;
  return (
    <>
      <ol class="events">
        {page.map((e) => (
          <li key={e.id}>
            <details>
              <summary>
                <strong>{e.type}</strong> · <time dateTime={e.recorded_at}>{formatDateTime(e.recorded_at)}</time> · position {e.position}
              </summary>
              <pre>{JSON.stringify(e.data, null, 2)}</pre>
            </details>
          </li>
        ))}
      </ol>
      {pager}
    </>
  );
}
