import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks';
import type { ApiErrorItem, Outcome } from './api';
import { session } from './session';

export type Loaded<T> = { state: 'loading' } | { state: 'ok'; data: T } | { state: 'error'; errors: ApiErrorItem[]; notBuilt: boolean };

/** Runs `load` when `deps` change; `reload()` runs it again. Late answers of an older run are dropped. */
export function useLoad<T>(load: () => Promise<Outcome<T>>, deps: unknown[]): [Loaded<T>, () => void] {
  const [state, setState] = useState<Loaded<T>>({ state: 'loading' });
  const [round, setRound] = useState(0);
  useEffect(() => {
    let current = true;
    setState({ state: 'loading' });
    load().then((result) => {
      if (!current) return;
      setState(result.ok ? { state: 'ok', data: result.data } : { state: 'error', errors: result.errors, notBuilt: result.notBuilt });
    });
    return () => {
      current = false;
    };
  }, [...deps, round]);
  // A load that failed (the key refused, among others) is made again once a key is given again.
  const failed = state.state === 'error';
  useEffect(() => (failed ? session.whenSignedInAgain(() => setRound((n) => n + 1)) : undefined), [failed]);
  return [state, useCallback(() => setRound((n) => n + 1), [])];
}

/** Loading, failure and "not built yet" states of a loaded section; children render the data. */
export function Section<T>(props: { loaded: Loaded<T>; what: string; children: (data: T) => ComponentChildren }) {
  const { loaded, what } = props;
  if (loaded.state === 'loading') return <Loading what={what} />;
  if (loaded.state === 'error') return loaded.notBuilt ? <NotBuilt what={what} /> : <Problem errors={loaded.errors} />;
  return <>{props.children(loaded.data)}</>;
}

function Loading(props: { what: string }) {
  return (
    <p class="muted" role="status" aria-live="polite">
      Loading {props.what}…
    </p>
  );
}

export function Empty(props: { children: ComponentChildren }) {
  return <p class="empty">{props.children}</p>;
}

function NotBuilt(props: { what: string }) {
  return (
    <p class="notice" role="status">
      {props.what[0]?.toUpperCase()}
      {props.what.slice(1)}: this capability is not built in this service yet (its API answers 404). The view fills in once it is.
    </p>
  );
}

export function Problem(props: { errors: ApiErrorItem[] }) {
  return (
    <div role="alert" class="problem" tabIndex={-1}>
      {props.errors.map((e) => (
        <p key={`${e.code}${e.source}`}>
          <strong>{e.code}</strong>: {e.message}
          {e.source ? ` (${e.source})` : ''}
        </p>
      ))}
    </div>
  );
}

export const PAGE_SIZE = 20;

/** Client-side pages over a list the API returns whole. */
export function usePages<T>(items: T[], size = PAGE_SIZE): { page: T[]; pager: ComponentChildren } {
  const [index, setIndex] = useState(0);
  const pages = Math.max(1, Math.ceil(items.length / size));
  const at = Math.min(index, pages - 1);
  const page = useMemo(() => items.slice(at * size, at * size + size), [items, at, size]);
  const pager =
    pages > 1 ? (
      <Pager
        label={`Page ${at + 1} of ${pages}`}
        onPrevious={at > 0 ? () => setIndex(at - 1) : undefined}
        onNext={at < pages - 1 ? () => setIndex(at + 1) : undefined}
      />
    ) : null;
  return { page, pager };
}

const FIRST_PAGE: (string | null)[] = [null];

/** A page read from the service, and the cursor of the next one (null: the last page). */
export interface ServerPage<T> {
  items: T[];
  next: string | null;
}

/**
 * A list read from the service one page at a time, never whole (a user of 100,000 events costs
 * what a new one does): `load(cursor)` reads the page after `cursor` (null: the first). Previous
 * pages are read again by their cursors.
 */
export function useServerPages<T>(
  load: (cursor: string | null) => Promise<Outcome<ServerPage<T>>>,
  deps: unknown[],
): { loaded: Loaded<T[]>; pager: ComponentChildren } {
  // Another list (other deps) starts at its first page, read once.
  const list = JSON.stringify(deps);
  const [paging, setPaging] = useState<{ list: string; cursors: (string | null)[] }>({ list, cursors: FIRST_PAGE });
  const cursors = paging.list === list ? paging.cursors : FIRST_PAGE;
  const setCursors = (next: (string | null)[]) => setPaging({ list, cursors: next });
  const at = cursors.length - 1;
  const [page] = useLoad(() => load(cursors[at]!), [...deps, cursors]);
  const loaded: Loaded<T[]> = page.state === 'ok' ? { state: 'ok', data: page.data.items } : page;
  const next = page.state === 'ok' ? page.data.next : null;
  // Once a list has shown more than one page, its pager stays (while a page loads its next cursor
  // is unknown: back on the first page, the pager would go and come back as new buttons, and the
  // keyboard focus with it). Another list starts without.
  const shown = useRef({ list, pages: false });
  if (shown.current.list !== list) shown.current = { list, pages: false };
  shown.current.pages ||= at > 0 || next !== null;
  const pager = shown.current.pages ? (
    <Pager
      label={`Page ${at + 1}`}
      onPrevious={at > 0 ? () => setCursors(cursors.slice(0, -1)) : undefined}
      onNext={next !== null ? () => setCursors([...cursors, next]) : undefined}
    />
  ) : null;
  return { loaded, pager };
}

/**
 * Previous and next page. A button with nowhere to go is `aria-disabled`, not `disabled`: the one
 * just pressed to reach the first or last page keeps the keyboard focus (a disabled one drops it
 * to the page).
 */
export function Pager(props: { label: string; onPrevious?: () => void; onNext?: () => void }) {
  return (
    <nav class="pager" aria-label="Pages">
      <button type="button" onClick={() => props.onPrevious?.()} aria-disabled={props.onPrevious ? undefined : true}>
        Previous page
      </button>
      <span aria-live="polite">{props.label}</span>
      <button type="button" onClick={() => props.onNext?.()} aria-disabled={props.onNext ? undefined : true}>
        Next page
      </button>
    </nav>
  );
}

/**
 * What an action did, said in a status line that takes the keyboard focus each time it is said
 * (the button that had it often goes with the list it was in), the same words twice included.
 * `say(null)` clears it.
 */
export function useDoneMessage(): { say: (text: string | null) => void; message: ComponentChildren } {
  const [done, setDone] = useState<{ text: string; round: number } | null>(null);
  const line = useRef<HTMLParagraphElement>(null);
  useEffect(() => {
    if (done) line.current?.focus();
  }, [done]);
  const say = useCallback((text: string | null) => setDone((before) => (text === null ? null : { text, round: (before?.round ?? 0) + 1 })), []);
  const message = done ? (
    <p role="status" tabIndex={-1} ref={line}>
      {done.text}
    </p>
  ) : null;
  return { say, message };
}

/**
 * After a refused submission, keyboard focus goes to the first field the errors name (else to the
 * errors shown above the buttons), as the sign-in form does: a screen reader lands on what to fix.
 */
export function useFocusOnErrors(form: { current: HTMLFormElement | null }, errors: ApiErrorItem[]): void {
  useEffect(() => {
    if (errors.length === 0) return;
    form.current?.querySelector<HTMLElement>('[aria-invalid="true"], .problem')?.focus();
  }, [errors]);
}

/** Errors of a form submission: those whose `source` names a field go next to it, the rest on top. */
export function splitErrors(errors: ApiErrorItem[], fields: string[]): { byField: Record<string, string>; rest: ApiErrorItem[] } {
  const byField: Record<string, string> = {};
  const rest: ApiErrorItem[] = [];
  for (const error of errors) {
    const field = fields.find((name) => error.source === `/${name}` || error.source?.startsWith(`/${name}/`) || error.source === `path:/${name}`);
    if (field && !byField[field]) byField[field] = error.message;
    else rest.push(error);
  }
  return { byField, rest };
}

/** A labelled control with its API error (aria-invalid, aria-describedby). */
export function Field(props: {
  id: string;
  label: string;
  value: string;
  onInput: (value: string) => void;
  error?: string | undefined;
  /** `number` shows a numeric keyboard; any text still reaches the API, which names what is wrong. */
  type?: 'text' | 'number';
  multiline?: boolean;
  disabled?: boolean;
  hint?: string;
}) {
  const errorId = `${props.id}-error`;
  const hintId = `${props.id}-hint`;
  const describedBy = [props.error ? errorId : '', props.hint ? hintId : ''].filter(Boolean).join(' ') || undefined;
  const common = {
    id: props.id,
    value: props.value,
    disabled: props.disabled,
    'aria-invalid': props.error ? true : undefined,
    'aria-describedby': describedBy,
    onInput: (event: Event) => props.onInput((event.currentTarget as HTMLInputElement).value),
  };
  return (
    <div class="field">
      <label for={props.id}>{props.label}</label>
      {props.multiline ? (
        <textarea {...common} rows={4} spellcheck={false} />
      ) : (
        <input {...common} type="text" inputMode={props.type === 'number' ? 'numeric' : undefined} />
      )}
      {props.hint ? (
        <small id={hintId} class="muted">
          {props.hint}
        </small>
      ) : null}
      {props.error ? (
        <small id={errorId} class="field-error" role="alert">
          {props.error}
        </small>
      ) : null}
    </div>
  );
}

/**
 * Characters that reorder or hide text: the format characters (bidirectional controls, zero-width
 * marks, word joiners, the soft hyphen, tags) and the blank fillers that render as nothing.
 * SPEC §3 allows them in an app user ID, where `\u202Eevil` would read as `live`.
 */
const HIDDEN_FORMAT = /(\p{Cf}|\u034f|[\u115f\u1160\u3164\uffa0])/u;

/**
 * An app user ID as sent by an app, so that none passes for another: isolated from the text
 * around it, and each character above shown by its code point (`U+202E`).
 */
export function UserId(props: { id: string }) {
  const parts = props.id.split(HIDDEN_FORMAT);
  return (
    <bdi>
      {parts.map((part, index) =>
        index % 2 === 1 ? <span class="code-point">{`U+${part.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`}</span> : part,
      )}
    </bdi>
  );
}

/** The view's one h1; focusable so that moving between views can put keyboard focus on it. */
export function ViewTitle(props: { children: string }) {
  return <h1 tabIndex={-1}>{props.children}</h1>;
}

/** A column heading: its text, or `{ hidden }` for a heading only screen readers announce. */
export type Column = string | { hidden: string };

/**
 * A box that scrolls what is wider or taller than it (a table), as a region named `label` that
 * the keyboard can reach, so a keyboard can scroll it too (WCAG 2.1.1; axe's
 * scrollable-region-focusable).
 */
export function Scroller(props: { label: string; children: ComponentChildren }) {
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must take the keyboard focus to be scrolled without a mouse.
    <section class="scroll" tabIndex={0} aria-label={props.label}>
      {props.children}
    </section>
  );
}

/**
 * A scrollable table with one header row, named by `caption` (for screen readers; the scroller is
 * a region of that name); the children are its body rows.
 */
export function DataTable(props: { columns: Column[]; caption: string; children: ComponentChildren }) {
  return (
    <Scroller label={`${props.caption} table`}>
      <table>
        <caption class="visually-hidden">{props.caption}</caption>
        <thead>
          <tr>
            {props.columns.map((column) =>
              typeof column === 'string' ? (
                <th scope="col" key={column}>
                  {column}
                </th>
              ) : (
                <th scope="col" key={column.hidden}>
                  <span class="visually-hidden">{column.hidden}</span>
                </th>
              ),
            )}
          </tr>
        </thead>
        <tbody>{props.children}</tbody>
      </table>
    </Scroller>
  );
}
