import { useEffect, useRef, useState } from 'preact/hooks';
import { type ApiErrorItem, api, type Outcome, outcome, type Schemas, streamEvents } from '../api';
import { Empty, Field, Problem, Section, splitErrors, useLoad, usePages, ViewTitle, DataTable, useFocusOnErrors } from '../components';
import { formatNumber, typedOrNull } from '../format';

type Program = Schemas['ReferralProgram'];
type Side = Program['rewards']['sender'];

const FIELDS = ['id', 'name', 'description', 'distribution_percentage', 'limit', 'rewards/sender', 'rewards/receiver', 'metadata'] as const;
type Form = Record<(typeof FIELDS)[number], string>;

const EMPTY: Form = {
  id: '',
  name: '',
  description: '',
  distribution_percentage: '100',
  limit: '0',
  'rewards/sender': '[]',
  'rewards/receiver': '[]',
  metadata: '',
};

/** A program's entries (grouped by kind in responses) as the request's list of entries. */
function entries(side: Side): unknown[] {
  return Object.values(side)
    .flat()
    .map((e) => ({ reward_key: e.reward.key, activation: e.activation, deactivation: e.deactivation }));
}

/** The entries as stored: the request's shape, `clawback` included. */
type StoredEntries = { sender: unknown[]; receiver: unknown[] };

/**
 * The entries of the program's latest definition in its stream (`program-{id}`). The API answers
 * with the seed's ReferralProgram, which has no `clawback`, and a PUT replaces every entry: an
 * edit built from the response alone would switch clawbacks off.
 */
async function storedEntries(id: string): Promise<Outcome<StoredEntries | null>> {
  const events = await streamEvents(`program-${id}`);
  if (!events.ok) return events;
  const latest = events.data.findLast((e) => e.type === 'ProgramCreated' || e.type === 'ProgramUpdated');
  const program = (latest?.data as { program?: { rewards?: StoredEntries } } | undefined)?.program;
  return { ok: true, data: program?.rewards ?? null };
}

/** JSON for a text field: pretty-printed, or empty for null. */
export const jsonText = (value: unknown): string => (value === null || value === undefined ? '' : JSON.stringify(value, null, 2));

function toForm(p: Program, stored: StoredEntries | null): Form {
  return {
    id: p.id,
    name: p.name,
    description: p.description ?? '',
    distribution_percentage: String(p.distribution_percentage),
    limit: String(p.limit),
    'rewards/sender': jsonText(stored?.sender ?? entries(p.rewards.sender)),
    'rewards/receiver': jsonText(stored?.receiver ?? entries(p.rewards.receiver)),
    metadata: jsonText(p.metadata),
  };
}

/** Numbers as numbers; anything else is sent as typed, so that the API (the one validator) names the problem. */
export const numberOrText = (value: string): number | string => (value.trim() !== '' && Number.isFinite(Number(value)) ? Number(value) : value);

/**
 * A JSON field of a form: its value (`empty` when left blank), or an error at the field in
 * `problems` (and undefined).
 */
export function parsedJson(text: string, field: string, empty: unknown, example: string, problems: ApiErrorItem[]): unknown {
  if (text.trim() === '') return empty;
  try {
    return JSON.parse(text);
  } catch {
    problems.push({ code: 'BAD_REQUEST', status: 400, message: `Not valid JSON: write ${example}`, source: `/${field}` });
    return undefined;
  }
}

export function ProgramsView() {
  const [list, reload] = useLoad(() => outcome(api.GET('/admin/programs')), []);
  const [form, setForm] = useState<Form>(EMPTY);
  const [editing, setEditing] = useState(false);
  const [errors, setErrors] = useState<ApiErrorItem[]>([]);
  const formRef = useRef<HTMLFormElement>(null);
  useFocusOnErrors(formRef, errors);
  const [saved, setSaved] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  /** The latest Edit click: an answer to an earlier one (or to one before New program) is dropped. */
  const latestEdit = useRef(0);
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
    latestEdit.current += 1;
    setForm(next);
    setEditing(edit);
    setErrors([]);
    setSaved(null);
  };
  const set = (name: keyof Form) => (value: string) => setForm({ ...form, [name]: value });
  const edit = async (p: Program) => {
    const ticket = ++latestEdit.current;
    const stored = await storedEntries(p.id);
    if (ticket !== latestEdit.current) return;
    // Without the stored entries the form would lose their clawbacks: say so, fill nothing.
    if (!stored.ok) return setErrors(stored.errors);
    load(toForm(p, stored.data), true, p.description);
  };

  const submit = async (event: Event) => {
    event.preventDefault();
    // Not `disabled` while saving: a disabled button drops the keyboard focus to the page.
    if (busy) return;
    setSaved(null);
    const local: ApiErrorItem[] = [];
    const list = (field: 'rewards/sender' | 'rewards/receiver') => parsedJson(form[field], field, [], 'a list of reward entries, e.g. []', local);
    const rewards = { sender: list('rewards/sender'), receiver: list('rewards/receiver') };
    const metadata = parsedJson(form.metadata, 'metadata', null, 'an object, e.g. {"team": "growth"}, or leave it empty', local);
    if (!form.id.trim()) local.push({ code: 'BAD_REQUEST', status: 400, message: 'Give the program an id', source: 'path:/id' });
    if (local.length > 0) return setErrors(local);
    const body = {
      name: form.name,
      description: typedOrNull(form.description ?? '', storedDescription),
      metadata,
      distribution_percentage: numberOrText(form.distribution_percentage),
      limit: numberOrText(form.limit),
      rewards,
    } as unknown as Schemas['ProgramRequest'];
    setBusy(true);
    const result = await outcome(api.PUT('/admin/programs/{id}', { params: { path: { id: form.id.trim() } }, body }));
    setBusy(false);
    if (!result.ok) return setErrors(result.errors);
    setErrors([]);
    setEditing(true);
    setSaved(`Saved program ${result.data.data.program.id}.`);
    reload();
  };

  const { byField, rest } = splitErrors(errors, [...FIELDS]);
  return (
    <>
      <ViewTitle>Programs</ViewTitle>
      <section aria-labelledby="programs-list">
        <h2 id="programs-list">All programs</h2>
        <Section loaded={list} what="the programs">
          {(body) => <ProgramTable programs={body.data.programs} onEdit={edit} />}
        </Section>
      </section>
      <section aria-labelledby="program-form">
        <h2 id="program-form" tabIndex={-1} ref={formHeading}>
          {editing ? `Edit program ${form.id}` : 'New program'}
        </h2>
        <form ref={formRef} onSubmit={submit} noValidate class="editor">
          <Field id="program-id" label="Program ID" value={form.id} onInput={set('id')} error={byField.id} disabled={editing} />
          <Field id="program-name" label="Name" value={form.name} onInput={set('name')} error={byField.name} />
          <Field id="program-description" label="Description" value={form.description} onInput={set('description')} error={byField.description} />
          <Field
            id="program-distribution"
            label="Distribution percentage"
            type="number"
            value={form.distribution_percentage}
            onInput={set('distribution_percentage')}
            error={byField.distribution_percentage}
            hint="Share of new users placed in this program, 0 to 100"
          />
          <Field
            id="program-limit"
            label="Limit"
            type="number"
            value={form.limit}
            onInput={set('limit')}
            error={byField.limit}
            hint="Claims per code; 0 means no limit"
          />
          <Field
            id="program-sender"
            label="Sender rewards (JSON)"
            multiline
            value={form['rewards/sender']}
            onInput={set('rewards/sender')}
            error={byField['rewards/sender']}
            hint='e.g. [{"reward_key": "five-credits", "activation": {"variant": "claim", "amount": 1, "limit": 0}, "deactivation": {"variant": "never"}, "clawback": "none"}]; "on_refund" revokes the entry when the converting purchase is refunded'
          />
          <Field
            id="program-receiver"
            label="Receiver rewards (JSON)"
            multiline
            value={form['rewards/receiver']}
            onInput={set('rewards/receiver')}
            error={byField['rewards/receiver']}
          />
          <Field
            id="program-metadata"
            label="Metadata (JSON)"
            multiline
            value={form.metadata}
            onInput={set('metadata')}
            error={byField.metadata}
            hint="An object of your own, or empty for none"
          />
          {rest.length > 0 ? <Problem errors={rest} /> : null}
          {busy ? <p role="status">Saving program {form.id}…</p> : saved ? <p role="status">{saved}</p> : null}
          <div class="actions">
            <button type="submit" aria-disabled={busy || undefined}>
              Save program
            </button>
            <button type="button" class="secondary" onClick={() => load(EMPTY, false)}>
              New program
            </button>
          </div>
        </form>
      </section>
    </>
  );
}

function ProgramTable(props: { programs: Program[]; onEdit: (p: Program) => void }) {
  const { page, pager } = usePages(props.programs);
  if (props.programs.length === 0) return <Empty>No program yet: create one below.</Empty>;
  const count = (side: Side) => Object.values(side).flat().length;
  return (
    <>
      <DataTable caption="Programs" columns={['ID', 'Name', 'Distribution', 'Limit', 'Sender rewards', 'Receiver rewards', { hidden: 'Actions' }]}>
        {page.map((p) => (
          <tr key={p.id}>
            <th scope="row">{p.id}</th>
            <td>{p.name}</td>
            <td class="num">{formatNumber(p.distribution_percentage)} %</td>
            <td class="num">{p.limit === 0 ? 'none' : formatNumber(p.limit)}</td>
            <td class="num">{count(p.rewards.sender)}</td>
            <td class="num">{count(p.rewards.receiver)}</td>
            <td>
              <button type="button" class="link" onClick={() => props.onEdit(p)} aria-label={`Edit program ${p.id}`}>
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
