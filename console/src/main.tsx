import 'uplot/dist/uPlot.min.css';
import './styles.css';
import { type ComponentType, render } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, outcome, whenUnauthorized } from './api';
import { session } from './session';
import { CodesView } from './views/codes';
import { HealthView } from './views/health';
import { OverviewView } from './views/overview';
import { ProgramsView } from './views/programs';
import { ReviewsView } from './views/reviews';
import { RewardsView } from './views/rewards';
import { UsersView } from './views/users';
import { WebhooksView } from './views/webhooks';

/** SPEC §14's navigation: each link's name is its view's one h1. */
const VIEWS: { path: string; name: string; view: ComponentType }[] = [
  { path: 'overview', name: 'Overview', view: OverviewView },
  { path: 'programs', name: 'Programs', view: ProgramsView },
  { path: 'rewards', name: 'Rewards', view: RewardsView },
  { path: 'codes', name: 'Codes', view: CodesView },
  { path: 'users', name: 'Users', view: UsersView },
  { path: 'webhooks', name: 'Webhooks', view: WebhooksView },
  { path: 'reviews', name: 'Reviews', view: ReviewsView },
  { path: 'health', name: 'Health', view: HealthView },
];

/** Views live in the URL's fragment (`/console#/users`): the server serves one page, and nothing secret is ever in it. */
function currentPath(): string {
  const path = window.location.hash.replace(/^#\/?/, '').split('?')[0] ?? '';
  return VIEWS.some((v) => v.path === path) ? path : 'overview';
}

function useRoute(): string {
  const [path, setPath] = useState(currentPath);
  useEffect(() => {
    const onChange = () => setPath(currentPath());
    window.addEventListener('hashchange', onChange);
    return () => window.removeEventListener('hashchange', onChange);
  }, []);
  return path;
}

function SignIn(props: { onSignedIn: () => void; notice: string | null }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const field = useRef<HTMLInputElement>(null);
  // A refused key leaves keyboard focus in the field (the button was disabled while it was checked).
  useEffect(() => {
    if (error) field.current?.focus();
  }, [error]);
  // Arriving here from the console (signed out, or the key refused mid-session): focus goes to
  // the field, not to the page, so the next Tab is not lost. A first visit leaves focus alone.
  useEffect(() => {
    if (props.notice !== null) field.current?.focus();
  }, []);
  const submit = async (event: Event) => {
    event.preventDefault();
    const candidate = key.trim();
    if (!candidate) {
      setError('Enter a secret API key.');
      return;
    }
    // A header carries printable Latin-1 only: such a key is no key of the service (the browser
    // would refuse to send it, which read as the service being unreachable).
    if ([...candidate].some((character) => !/[\x20-\x7e\xa0-\xff]/.test(character))) {
      setError('This key is not known to the service: an API key is made of printable Latin-1 characters.');
      return;
    }
    setBusy(true);
    setError(null);
    // Any admin read tells a secret key (200) from an unknown one (401) and a client key (403).
    const result = await outcome(api.GET('/admin/programs', { headers: { 'x-api-key': candidate } }));
    setBusy(false);
    if (result.ok) {
      session.signIn(candidate);
      setKey('');
      props.onSignedIn();
    } else if (result.status === 401) setError('This key is not known to the service.');
    else if (result.status === 403) setError('This is a client key. The console needs a secret API key.');
    else setError(result.errors.map((e) => e.message).join(' '));
  };
  return (
    <main class="sign-in">
      <h1>Sign in</h1>
      <p>Referral rewards console. Enter a secret API key; it is kept for this tab only and sent with each request.</p>
      {props.notice ? <p role="status">{props.notice}</p> : null}
      <form onSubmit={submit} noValidate>
        <label for="api-key">Secret API key</label>
        <input
          id="api-key"
          ref={field}
          class="secret"
          type="text"
          autoComplete="off"
          autoCapitalize="off"
          spellcheck={false}
          value={key}
          aria-invalid={error ? true : undefined}
          aria-describedby={error ? 'sign-in-error' : undefined}
          onInput={(event) => setKey((event.currentTarget as HTMLInputElement).value)}
        />
        <button type="submit" disabled={busy}>
          Sign in
        </button>
        {error ? (
          <p id="sign-in-error" role="alert" class="problem">
            {error}
          </p>
        ) : null}
      </form>
    </main>
  );
}

function Shell(props: { onSignOut: () => void; focusHeading: boolean }) {
  const path = useRoute();
  const current = VIEWS.find((v) => v.path === path) ?? VIEWS[0]!;
  const main = useRef<HTMLElement>(null);
  const first = useRef(true);
  useEffect(() => {
    document.title = `${current.name} · Referral rewards console`;
    // Moving between views, or signing in, puts keyboard focus on the view's heading (not on a page load).
    if (first.current && !props.focusHeading) first.current = false;
    else main.current?.querySelector<HTMLElement>('h1')?.focus();
    first.current = false;
  }, [current]);
  const View = current.view;
  return (
    <>
      <button type="button" class="skip" onClick={() => main.current?.querySelector<HTMLElement>('h1')?.focus()}>
        Skip to content
      </button>
      <header class="top">
        <span class="brand">Referral rewards</span>
        <nav aria-label="Views">
          <ul>
            {VIEWS.map((v) => (
              <li key={v.path}>
                <a href={`#/${v.path}`} aria-current={v.path === current.path ? 'page' : undefined}>
                  {v.name}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <button type="button" class="sign-out" onClick={props.onSignOut}>
          Sign out
        </button>
      </header>
      <main id="main" ref={main}>
        <View key={current.path} />
      </main>
    </>
  );
}

function App() {
  const [signedIn, setSignedIn] = useState(() => session.key() !== null);
  const [notice, setNotice] = useState<string | null>(null);
  const [justSignedIn, setJustSignedIn] = useState(false);
  // The key was refused mid-session (revoked): the views stay mounted, hidden, so what the operator
  // was typing is still there after signing in again (an explicit sign-out drops everything).
  const [refused, setRefused] = useState(false);
  const shell = useRef<HTMLDivElement>(null);
  useEffect(() => {
    whenUnauthorized(() => {
      session.signOut();
      setNotice(
        'The service no longer accepts this key as a secret key. Sign in again: the page you were on and what you had typed are kept (a save it refused was not made).',
      );
      setRefused(true);
    });
  }, []);
  const signedInNow = () => {
    setNotice(null);
    setJustSignedIn(true);
    setSignedIn(true);
    window.location.hash = '#/overview';
  };
  const signedInAgain = () => {
    setNotice(null);
    setRefused(false);
    session.signedInAgain();
    // Back where the operator was: the view's heading takes focus.
    setTimeout(() => shell.current?.querySelector<HTMLElement>('main h1')?.focus(), 0);
  };
  if (!signedIn) return <SignIn notice={notice} onSignedIn={signedInNow} />;
  return (
    <>
      {refused ? <SignIn notice={notice} onSignedIn={signedInAgain} /> : null}
      <div ref={shell} hidden={refused}>
        <Shell
          focusHeading={justSignedIn}
          onSignOut={() => {
            session.signOut();
            setNotice('Signed out. The key is forgotten.');
            setRefused(false);
            setSignedIn(false);
          }}
        />
      </div>
    </>
  );
}

const root = document.getElementById('app')!;
root.replaceChildren(); // the "Loading the console…" placeholder
render(<App />, root);
