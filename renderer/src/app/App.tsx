import { useMemo, useState, type FormEvent } from 'react';
import { QueryCache, QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { ApiClient, ApiError } from '../api/client';
import { resolveConnection, saveKey, type Connection } from '../api/connection';
import { ApiProvider, shouldRetry, useProject } from '../api/hooks';
import { JobsPanel } from '../components/JobsPanel';
import { ui, useUi } from '../state/ui-store';
import { ProjectsScreen } from '../screens/ProjectsScreen';
import { ProjectScreen } from '../screens/ProjectScreen';
import { ComparisonScreen } from '../screens/ComparisonScreen';
import { OverlayScreen } from '../screens/OverlayScreen';
import { SheetScreen } from '../screens/SheetScreen';
import { href, useRoute } from './use-route';
import type { Route } from './route';

export function App() {
  const [conn, setConn] = useState<Connection | null>(() => resolveConnection());
  const [unauthorized, setUnauthorized] = useState(false);

  const queryClient = useMemo(
    () =>
      new QueryClient({
        queryCache: new QueryCache({
          onError: (err) => {
            if (err instanceof ApiError && err.code === 'unauthorized') setUnauthorized(true);
          },
        }),
        defaultOptions: {
          queries: { retry: shouldRetry, staleTime: 10_000, refetchOnWindowFocus: false },
          mutations: { retry: false },
        },
      }),
    [],
  );
  const client = useMemo(() => (conn ? new ApiClient(conn) : null), [conn]);

  if (!conn || !client || unauthorized) {
    return (
      <SignIn
        reason={
          unauthorized
            ? 'The service did not accept the key (code unauthorized). Paste a current key.'
            : null
        }
        onKey={(key) => {
          saveKey(key);
          setUnauthorized(false);
          queryClient.clear();
          setConn(resolveConnection());
        }}
      />
    );
  }

  return (
    <QueryClientProvider client={queryClient}>
      <ApiProvider client={client}>
        <Shell />
      </ApiProvider>
    </QueryClientProvider>
  );
}

function Shell() {
  const route = useRoute();
  const jobsOpen = useUi((s) => s.jobsPanelOpen);
  const palette = useUi((s) => s.palette);
  const projectId = route.name === 'projects' ? null : route.projectId;
  return (
    <div className={`shell${jobsOpen && projectId ? ' with-panel' : ''}`}>
      <header className="topbar">
        <a className="brand" href="#/">
          <span className="brand-mark" aria-hidden>
            ◧
          </span>
          Blueline
        </a>
        <Breadcrumbs route={route} />
        <div className="topbar-actions">
          <button
            type="button"
            className={`btn btn-ghost${palette === 'colorblind' ? ' active' : ''}`}
            aria-pressed={palette === 'colorblind'}
            onClick={ui.togglePalette}
            title="Colour-blind-safe palette (blue / orange instead of green / red)"
            data-testid="palette-toggle"
          >
            <span className={`swatch-pair ${palette}`} aria-hidden />
            {palette === 'colorblind' ? 'CB-safe colours' : 'Standard colours'}
          </button>
          {projectId && (
            <button
              type="button"
              className={`btn btn-ghost${jobsOpen ? ' active' : ''}`}
              aria-pressed={jobsOpen}
              onClick={() => ui.toggleJobsPanel()}
            >
              Jobs
            </button>
          )}
        </div>
      </header>
      <main className="main">
        <Screen route={route} />
      </main>
      {jobsOpen && projectId && <JobsPanel projectId={projectId} />}
      <Toasts />
    </div>
  );
}

function Screen({ route }: { route: Route }) {
  switch (route.name) {
    case 'projects':
      return <ProjectsScreen />;
    case 'project':
      return <ProjectScreen key={route.projectId} projectId={route.projectId} tab={route.tab} />;
    case 'sheet':
      return (
        <SheetScreen
          key={`${route.sheetId}:${route.at ? Object.values(route.at).join(',') : ''}`}
          projectId={route.projectId}
          sheetId={route.sheetId}
          at={route.at ?? null}
          label={route.label ?? null}
        />
      );
    case 'comparison':
      return <ComparisonScreen key={route.jobId} projectId={route.projectId} jobId={route.jobId} />;
    case 'overlay':
      return (
        <OverlayScreen
          key={route.overlayId}
          projectId={route.projectId}
          overlayId={route.overlayId}
          jobId={route.jobId}
          changeId={route.changeId ?? null}
        />
      );
  }
}

function Breadcrumbs({ route }: { route: Route }) {
  if (route.name === 'projects') return <nav className="crumbs" aria-label="Breadcrumb" />;
  return (
    <nav className="crumbs" aria-label="Breadcrumb">
      <a href="#/">Projects</a>
      <span className="sep">/</span>
      <ProjectCrumb projectId={route.projectId} />
      {route.name === 'comparison' && (
        <>
          <span className="sep">/</span>
          <span>Comparison</span>
        </>
      )}
      {route.name === 'overlay' && (
        <>
          {route.jobId && (
            <>
              <span className="sep">/</span>
              <a
                href={href({ name: 'comparison', projectId: route.projectId, jobId: route.jobId })}
              >
                Comparison
              </a>
            </>
          )}
          <span className="sep">/</span>
          <span>Overlay</span>
        </>
      )}
      {route.name === 'sheet' && (
        <>
          <span className="sep">/</span>
          <span>Sheet</span>
        </>
      )}
    </nav>
  );
}

function ProjectCrumb({ projectId }: { projectId: string }) {
  const q = useProject(projectId);
  return <a href={href({ name: 'project', projectId, tab: 'drawings' })}>{q.data?.name ?? '…'}</a>;
}

function Toasts() {
  const toasts = useUi((s) => s.toasts);
  return (
    <div className="toasts" aria-live="polite">
      {toasts.map((t) => (
        <div
          key={t.id}
          className={`toast toast-${t.kind}`}
          role={t.kind === 'error' ? 'alert' : 'status'}
        >
          <span>{t.text}</span>
          <button
            type="button"
            className="btn-x"
            aria-label="Dismiss"
            onClick={() => ui.dismissToast(t.id)}
          >
            ×
          </button>
        </div>
      ))}
    </div>
  );
}

function SignIn({ reason, onKey }: { reason: string | null; onKey: (key: string) => void }) {
  const [key, setKey] = useState('');
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (key.trim()) onKey(key.trim());
  };
  return (
    <div className="signin">
      <form className="card signin-card" onSubmit={submit}>
        <h1>Blueline</h1>
        <p className="muted">
          Open the sign-in link that <code>blueline serve</code> printed (it ends in{' '}
          <code>#key=sk_…</code>), or paste the API key here.
        </p>
        {reason && (
          <p className="state-error-inline" role="alert">
            {reason}
          </p>
        )}
        <label className="field">
          <span>API key</span>
          <input
            type="password"
            autoComplete="off"
            value={key}
            onChange={(e) => setKey(e.target.value)}
            placeholder="sk_…"
            autoFocus
          />
        </label>
        <button type="submit" className="btn btn-primary" disabled={!key.trim()}>
          Sign in
        </button>
      </form>
    </div>
  );
}
