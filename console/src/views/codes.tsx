import { useRef, useState } from 'preact/hooks';
import { type ApiErrorItem, api, type Outcome, outcome, type Schemas } from '../api';
import {
  Empty,
  Field,
  PAGE_SIZE,
  Problem,
  Section,
  type ServerPage,
  splitErrors,
  useLoad,
  useServerPages,
  ViewTitle,
  DataTable,
  useDoneMessage,
  useFocusOnErrors,
} from '../components';
import { formatDateTime, formatNumber } from '../format';

const pageQuery = (after: string | null) => ({ limit: PAGE_SIZE, ...(after ? { after } : {}) });

/** The promo codes a page at a time, in code order (a catalog of thousands is never read whole). */
async function promoPage(after: string | null): Promise<Outcome<ServerPage<Schemas['PromoCode']>>> {
  const page = await outcome(api.GET('/admin/promo-codes', { params: { query: pageQuery(after) } }));
  return page.ok ? { ok: true, data: { items: page.data.data.promo_codes, next: page.data.data.next_after } } : page;
}

/** The affiliates a page at a time, in id order. */
async function affiliatePage(after: string | null): Promise<Outcome<ServerPage<Schemas['AdminAffiliate']>>> {
  const page = await outcome(api.GET('/admin/affiliates', { params: { query: pageQuery(after) } }));
  return page.ok ? { ok: true, data: { items: page.data.data.affiliates, next: page.data.data.next_after } } : page;
}

export function CodesView() {
  const promos = useServerPages(promoPage, []);
  const affiliates = useServerPages(affiliatePage, []);
  const [rewards] = useLoad(() => outcome(api.GET('/admin/rewards')), []);
  return (
    <>
      <ViewTitle>Codes</ViewTitle>
      <section aria-labelledby="promo-heading">
        <h2 id="promo-heading">Promo codes</h2>
        <Section loaded={promos.loaded} what="the promo codes">
          {(codes) => <PromoTable codes={codes} />}
        </Section>
        {promos.pager}
      </section>
      <section aria-labelledby="affiliate-heading">
        <h2 id="affiliate-heading">Affiliate codes</h2>
        <Section loaded={affiliates.loaded} what="the affiliates">
          {(page) => <AffiliateTable affiliates={page} />}
        </Section>
        {affiliates.pager}
      </section>
      <section aria-labelledby="pool-heading">
        <h2 id="pool-heading">Offer-code pools</h2>
        <Section loaded={rewards} what="the offer-code rewards">
          {(body) => <Pools rewards={body.data.rewards.filter((r) => r.kind === 'offer_code' || r.kind === 'store_promo_code')} />}
        </Section>
      </section>
    </>
  );
}

function PromoTable(props: { codes: Schemas['PromoCode'][] }) {
  const { codes: page } = props;
  if (props.codes.length === 0) return <Empty>No promo code yet (PUT /admin/promo-codes/CODE creates one).</Empty>;
  return (
    <DataTable caption="Promo codes" columns={['Code', 'Active', 'Limit', 'Claims', 'Conversions', 'Left', 'Created']}>
      {page.map((c) => (
        <tr key={c.code}>
          <th scope="row">{c.code}</th>
          <td>{c.is_active ? 'yes' : 'no'}</td>
          <td class="num">{c.limit === 0 ? 'none' : formatNumber(c.limit)}</td>
          <td class="num">{formatNumber(c.stats.claims)}</td>
          <td class="num">{formatNumber(c.stats.conversions)}</td>
          <td class="num">{c.limit === 0 ? '∞' : c.stats.claims >= c.limit ? 'used up' : formatNumber(c.limit - c.stats.claims)}</td>
          <td>{formatDateTime(c.created_at)}</td>
        </tr>
      ))}
    </DataTable>
  );
}

function AffiliateTable(props: { affiliates: Schemas['AdminAffiliate'][] }) {
  const { affiliates: page } = props;
  if (props.affiliates.length === 0) return <Empty>No affiliate yet (PUT /admin/affiliates/ID creates one).</Empty>;
  return (
    <DataTable caption="Affiliates" columns={['Affiliate', 'Status', 'Codes', 'Claims', 'Conversions', 'Earnings']}>
      {page.map((a) => (
        <tr key={a.id}>
          <th scope="row">
            {a.name} <span class="muted">({a.id})</span>
          </th>
          <td>{a.status}</td>
          <td>{a.codes.map((c) => c.code).join(', ') || '—'}</td>
          <td class="num">{formatNumber(a.stats.claims)}</td>
          <td class="num">{formatNumber(a.stats.conversions)}</td>
          <td class="num">{formatNumber(a.stats.earnings)}</td>
        </tr>
      ))}
    </DataTable>
  );
}

/** What adding codes to a pool did, in words: how many were added and skipped (already in the pool), and a past expiry. */
function poolAdditionSaid(key: string, result: { added: number; skipped: number; available: number }, expiredAlready: boolean): string {
  const codes = (count: number) => `${formatNumber(count)} ${count === 1 ? 'code' : 'codes'}`;
  const parts = [`Added ${codes(result.added)} to ${key}`];
  if (result.skipped > 0) parts.push(`skipped ${codes(result.skipped)} already in the pool`);
  const said = `${parts.join('; ')}. ${formatNumber(result.available)} remaining.`;
  return expiredAlready && result.added > 0 ? `${said} Their expiry has passed: none of them will be handed out.` : said;
}

/** Rewards that hand out codes from a pool, with each pool's figures; codes are added here. */
function Pools(props: { rewards: Schemas['AdminReward'][] }) {
  const [key, setKey] = useState(props.rewards[0]?.key ?? '');
  const [codes, setCodes] = useState('');
  const [expires, setExpires] = useState('');
  const [errors, setErrors] = useState<ApiErrorItem[]>([]);
  const formRef = useRef<HTMLFormElement>(null);
  useFocusOnErrors(formRef, errors);
  const [added, setAdded] = useState(0);
  // What the last addition did (SPEC §7.5 answers {added, skipped, available}).
  const { say, message } = useDoneMessage();
  const keys = props.rewards.map((r) => r.key).join(',');
  const [figures] = useLoad(async () => {
    const rows = await Promise.all(
      props.rewards.map(async (r) => ({ key: r.key, result: await outcome(api.GET('/admin/rewards/{key}/codes', { params: { path: { key: r.key } } })) })),
    );
    return { ok: true as const, data: rows };
  }, [keys, added]);
  if (props.rewards.length === 0) return <Empty>No offer_code or store_promo_code reward: pools belong to those.</Empty>;
  // An offer code is redeemed through its own link (SPEC §7.5): each line is the code, then its link.
  const withLinks = props.rewards.find((r) => r.key === key)?.kind === 'offer_code';
  const submit = async (event: Event) => {
    event.preventDefault();
    // Codes: separated by any white space. Offer codes: a line each, the code then its link.
    const lines = codes
      .split('\n')
      .map((line) => line.trim().split(/\s+/))
      .filter(([value]) => Boolean(value));
    if (withLinks && lines.some((line) => line.length !== 2)) {
      return setErrors([{ status: 400, code: 'BAD_REQUEST', message: 'Each line: an offer code, a space, its redemption link', source: '/codes' }]);
    }
    const body = {
      codes: withLinks
        ? lines.map(([value, link]) => ({ value: value!, link: link!, expires_at: expires }))
        : lines.flat().map((value) => ({ value, expires_at: expires })),
    };
    say(null);
    const result = await outcome(api.POST('/admin/rewards/{key}/codes', { params: { path: { key } }, body }));
    if (!result.ok) return setErrors(result.errors);
    setErrors([]);
    setCodes('');
    setAdded(added + 1);
    say(poolAdditionSaid(key, result.data.data, Date.parse(expires) <= Date.now()));
  };
  // A code's expires_at (`/codes/0/expires_at`) is what the expiry field sets: its error goes there.
  const expiryErrors = errors.filter((error) => /^\/codes\/\d+\/expires_at$/.test(error.source ?? ''));
  const { byField, rest } = splitErrors(
    errors.filter((error) => !expiryErrors.includes(error)),
    ['codes'],
  );
  return (
    <>
      <Section loaded={figures} what="the pools' figures">
        {(rows) => (
          <DataTable caption="Pool figures" columns={['Reward', 'Kind', 'Remaining', 'Used', 'Expired unused', 'Grants waiting']}>
            {rows.map(({ key: rewardKey, result }) => {
              const kind = props.rewards.find((r) => r.key === rewardKey)?.kind ?? '';
              if (!result.ok)
                return (
                  <tr key={rewardKey}>
                    <th scope="row">{rewardKey}</th>
                    <td>{kind}</td>
                    <td colSpan={4}>{result.errors[0]?.message ?? 'unavailable'}</td>
                  </tr>
                );
              const f = result.data.data;
              return (
                <tr key={rewardKey}>
                  <th scope="row">{rewardKey}</th>
                  <td>{kind}</td>
                  <td class="num">{formatNumber(f.available)}</td>
                  <td class="num">{formatNumber(f.used)}</td>
                  <td class="num">{formatNumber(f.expired)}</td>
                  <td class="num">{formatNumber(f.waiting)}</td>
                </tr>
              );
            })}
          </DataTable>
        )}
      </Section>
      <form ref={formRef} onSubmit={submit} noValidate class="editor">
        <div class="field">
          <label for="pool-reward">Pool reward</label>
          <select id="pool-reward" value={key} onChange={(event) => setKey((event.currentTarget as HTMLSelectElement).value)}>
            {props.rewards.map((r) => (
              <option key={r.key} value={r.key}>
                {r.key}
              </option>
            ))}
          </select>
        </div>
        <Field
          id="pool-codes"
          label="Codes to add"
          multiline
          value={codes}
          onInput={setCodes}
          error={byField.codes}
          hint={withLinks ? 'One code per line, then a space and its redemption link' : 'One code per line'}
        />
        <Field
          id="pool-expires"
          label="Codes expire at"
          value={expires}
          onInput={setExpires}
          error={expiryErrors[0]?.message}
          hint="ISO date-time, e.g. 2027-01-01T00:00:00Z"
        />
        {rest.length > 0 ? <Problem errors={rest} /> : null}
        <div class="actions">
          <button type="submit">Add codes</button>
        </div>
      </form>
      {message}
    </>
  );
}
