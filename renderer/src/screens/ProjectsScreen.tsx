import { useState, type FormEvent } from 'react';
import { useCreateProject, useProjects } from '../api/hooks';
import { href, navigate } from '../app/use-route';
import { Empty, ErrorNote, formatTime, Spinner } from '../components/common';

export function ProjectsScreen() {
  const projects = useProjects();
  const create = useCreateProject();
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');

  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (!name.trim()) return;
    create.mutate(
      { name: name.trim(), ...(description.trim() ? { description: description.trim() } : {}) },
      {
        onSuccess: (p) => {
          setName('');
          setDescription('');
          navigate({ name: 'project', projectId: p.id, tab: 'drawings' });
        },
      },
    );
  };

  return (
    <div className="page page-narrow">
      <div className="page-head">
        <h1>Projects</h1>
        <p className="muted">Each project holds the drawing issues you compare.</p>
      </div>
      <div className="grid-2">
        <section className="card" aria-labelledby="proj-list-h">
          <h2 id="proj-list-h" className="card-title">
            All projects {projects.data && <span className="count">{projects.data.length}</span>}
          </h2>
          {projects.isPending && <Spinner label="Loading projects…" />}
          {projects.isError && (
            <ErrorNote
              error={projects.error}
              title="Could not load projects"
              onRetry={() => void projects.refetch()}
            />
          )}
          {projects.isSuccess && projects.data.length === 0 && (
            <Empty title="No projects yet">Create one to start uploading drawing sets.</Empty>
          )}
          {projects.isSuccess && projects.data.length > 0 && (
            <table className="table" data-testid="project-table">
              <thead>
                <tr>
                  <th>Name</th>
                  <th>Description</th>
                  <th>Created</th>
                </tr>
              </thead>
              <tbody>
                {projects.data.map((p) => (
                  <tr key={p.id}>
                    <td>
                      <a
                        className="strong"
                        href={href({ name: 'project', projectId: p.id, tab: 'drawings' })}
                      >
                        {p.name}
                      </a>
                    </td>
                    <td className="muted">{p.description || '—'}</td>
                    <td className="muted nowrap">{formatTime(p.created_at)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </section>
        <section className="card" aria-labelledby="proj-new-h">
          <h2 id="proj-new-h" className="card-title">
            New project
          </h2>
          <form onSubmit={submit} className="form">
            <label className="field">
              <span>Name</span>
              <input
                value={name}
                onChange={(e) => setName(e.target.value)}
                placeholder="e.g. Lake Kegonsa Home"
                required
                maxLength={200}
              />
            </label>
            <label className="field">
              <span>Description (optional)</span>
              <textarea
                value={description}
                onChange={(e) => setDescription(e.target.value)}
                rows={3}
              />
            </label>
            {create.isError && (
              <ErrorNote error={create.error} title="Could not create the project" />
            )}
            <button
              type="submit"
              className="btn btn-primary"
              disabled={!name.trim() || create.isPending}
            >
              {create.isPending ? 'Creating…' : 'Create project'}
            </button>
          </form>
        </section>
      </div>
    </div>
  );
}
