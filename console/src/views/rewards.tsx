import { useEffect, useRef, useState } from 'preact/hooks';
import { type ApiErrorItem, api, outcome, type Schemas } from '../api';
import { Empty, Field, Problem, Section, splitErrors, useLoad, usePages, ViewTitle, DataTable, useFocusOnErrors } from '../components';
import { formatDateTime, formatNumber, typedOrNull } from '../format';
import { jsonText, numberOrText, parsedJson } from './programs';

type Reward = Schemas['AdminReward'];
type Kind = Reward['kind'];

/** The fields each kind adds to key, name and description. */
const KIND_FIELDS: Record<Kind, { name: string; label: string }[]> = {
  basic: [],
  credit: [{ name: 'credits', label: 'Credits' }],
  offer_code: [
    { name: 'offer_code_id', label: 'Offer code ID' },
    { name: 'offer_code_ref_name', label: 'Offer code reference name' },
    { name: 'subscription_product_id', label: 'Subscription product ID' },
  ],
  store_promo_code: [],
  partner_entitlement: [
    { name: 'entitlement_id', label: 'Entitlement ID' },
    { name: 'entitlement_key', label: 'Entitlement key' },
  ],
  partner_offering: [
    { name: 'offering_id', label: 'Offering ID' },
    { name: 'offering_key', label: 'Offering key' },
  ],
};
const KINDS = Object.keys(KIND_FIELDS) as Kind[];
const ALL_FIELDS = ['key', 'kind', 'name', 'description', 'metadata', ...KINDS.flatMap((k) => KIND_FIELDS[k].map((f) => f.name))];

type Form = Record<string, string>;
const EMPTY: Form = { key: '', kind: 'credit', name: '', description: '', metadata: '' };

function toForm(r: Reward): Form {
  const form: Form = { key: r.key, kind: r.kind, name: r.name, description: r.description ?? '', metadata: jsonText(r.metadata) };
  for (const f of KIND_FIELDS[r.kind]) form[f.name] = String((r as Record<string, unknown>)[f.name] ?? '');
  return form;
}

export function RewardsView() {
  const [list, reload] = useLoad(() => outcome(api.GET('/admin/rewards')), []);
  const [form, setForm] = useState<Form>(EMPTY);
  const [editing, setEditing] = useState(false);
  const [errors, setErrors] = useState<ApiErrorItem[]>([]);
  const formRef = useRef<HTMLFormElement>(null);
  useFocusOnErrors(formRef, errors);
  const [saved, setSaved] = useState<string | null>(null);
  // Edit fills the form below the list: focus moves to its heading, which says what is edited.
  const formHeading = useRef<HTMLHeadingElement>(null);
  const [edits, setEdits] = useState(0);
  useEffect(() => {
    if (edits > 0) formHeading.current?.focus();
  }, [edits]);
  /** The description of the definition being edited, as stored (null for a new one). */
  const [storedDescription, setStoredDescription] = useState<string | null>(null);
  const load = (next: Form, edit: boolean, description: string | null = null) => {
    setStoredDescription(description);
    if (edit) setEdits((n) => n + 1);
    setForm(next);
    setEditing(edit);
    setErrors([]);
    setSaved(null);
  };
  const set = (name: string) => (value: string) => setForm({ ...form, [name]: value });
  const kind = (KINDS.includes(form.kind as Kind) ? form.kind : 'basic') as Kind;

  const submit = async (event: Event) => {
    event.preventDefault();
    setSaved(null);
    const local: ApiErrorItem[] = [];
    const metadata = parsedJson(form.metadata ?? '', 'metadata', null, 'an object, e.g. {"team": "growth"}, or leave it empty', local);
    const key = form.key?.trim() ?? '';
    if (!key) local.push({ code: 'BAD_REQUEST', status: 400, message: 'Give the reward a key', source: 'path:/key' });
    if (local.length > 0) return setErrors(local);
    const body: Record<string, unknown> = { kind, name: form.name, description: typedOrNull(form.description ?? '', storedDescription), metadata };
    for (const f of KIND_FIELDS[kind]) body[f.name] = f.name === 'credits' ? numberOrText(form[f.name] ?? '') : (form[f.name] ?? '');
    const result = await outcome(api.PUT('/admin/rewards/{key}', { params: { path: { key } }, body: body as Schemas['RewardRequest'] }));
    if (!result.ok) return setErrors(result.errors);
    setErrors([]);
    setEditing(true);
    setSaved(`Saved reward ${result.data.data.reward.key}.`);
    reload();
  };

  const { byField, rest } = splitErrors(errors, ALL_FIELDS);
  return (
    <>
      <ViewTitle>Rewards</ViewTitle>
      <section aria-labelledby="rewards-list">
        <h2 id="rewards-list">All rewards</h2>
        <Section loaded={list} what="the rewards">
          {(body) => <RewardTable rewards={body.data.rewards} onEdit={(r) => load(toForm(r), true, r.description)} />}
        </Section>
      </section>
      <section aria-labelledby="reward-form">
        <h2 id="reward-form" tabIndex={-1} ref={formHeading}>
          {editing ? `Edit reward ${form.key}` : 'New reward'}
        </h2>
        <form ref={formRef} onSubmit={submit} noValidate class="editor">
          <Field
            id="reward-key"
            label="Reward key"
            value={form.key ?? ''}
            onInput={set('key')}
            error={byField.key}
            disabled={editing}
            hint="a-z, 0-9, _ and -"
          />
          <div class="field">
            <label for="reward-kind">Kind</label>
            <select
              id="reward-kind"
              value={kind}
              disabled={editing}
              aria-invalid={byField.kind ? true : undefined}
              aria-describedby={byField.kind ? 'reward-kind-error' : undefined}
              onChange={(event) => set('kind')((event.currentTarget as HTMLSelectElement).value)}
            >
              {KINDS.map((k) => (
                <option key={k} value={k}>
                  {k}
                </option>
              ))}
            </select>
            {byField.kind ? (
              <small id="reward-kind-error" class="field-error" role="alert">
                {byField.kind}
              </small>
            ) : null}
          </div>
          <Field id="reward-name" label="Name" value={form.name ?? ''} onInput={set('name')} error={byField.name} />
          <Field id="reward-description" label="Description" value={form.description ?? ''} onInput={set('description')} error={byField.description} />
          {KIND_FIELDS[kind].map((f) => (
            <Field
              key={f.name}
              id={`reward-${f.name}`}
              label={f.label}
              type={f.name === 'credits' ? 'number' : 'text'}
              value={form[f.name] ?? ''}
              onInput={set(f.name)}
              error={byField[f.name]}
            />
          ))}
          <Field
            id="reward-metadata"
            label="Metadata (JSON)"
            multiline
            value={form.metadata ?? ''}
            onInput={set('metadata')}
            error={byField.metadata}
            hint="An object of your own, or empty for none"
          />
          {rest.length > 0 ? <Problem errors={rest} /> : null}
          {saved ? <p role="status">{saved}</p> : null}
          <div class="actions">
            <button type="submit">Save reward</button>
            <button type="button" class="secondary" onClick={() => load(EMPTY, false)}>
              New reward
            </button>
          </div>
        </form>
      </section>
    </>
  );
}

function RewardTable(props: { rewards: Reward[]; onEdit: (r: Reward) => void }) {
  const { page, pager } = usePages(props.rewards);
  if (props.rewards.length === 0) return <Empty>No reward yet: create one below.</Empty>;
  return (
    <>
      <DataTable caption="Rewards" columns={['Key', 'Kind', 'Name', 'Credits', 'Updated', { hidden: 'Actions' }]}>
        {page.map((r) => (
          <tr key={r.key}>
            <th scope="row">{r.key}</th>
            <td>{r.kind}</td>
            <td>{r.name}</td>
            <td class="num">{r.credits === undefined ? '—' : formatNumber(r.credits)}</td>
            <td>{formatDateTime(r.updated_at ?? r.created_at)}</td>
            <td>
              <button type="button" class="link" onClick={() => props.onEdit(r)} aria-label={`Edit reward ${r.key}`}>
                Edit
              </button>
            </td>
          </tr>
        ))}
      </DataTable>
      {pager}
    </>
  );
}
