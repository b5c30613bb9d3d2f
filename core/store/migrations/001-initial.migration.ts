// The first schema: every resource of the contract. STRICT tables; timestamps are ISO 8601 text in
// UTC with milliseconds (they sort as text); JSON columns hold documents the API returns verbatim.
// Every row carries organization_id: isolation is enforced in each repository query.
export const sql = /* sql */ `
CREATE TABLE organizations (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  credit_balance INTEGER NOT NULL DEFAULT 0 CHECK (credit_balance >= 0),
  credit_reserved INTEGER NOT NULL DEFAULT 0 CHECK (credit_reserved >= 0),
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
) STRICT;

CREATE TABLE api_keys (
  id TEXT PRIMARY KEY,
  organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  key_hash TEXT NOT NULL UNIQUE,
  key_hint TEXT NOT NULL,
  label TEXT,
  created_at TEXT NOT NULL,
  last_used_at TEXT,
  revoked_at TEXT
) STRICT;

CREATE TABLE projects (
  id TEXT PRIMARY KEY,
  organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  description TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
) STRICT;
CREATE INDEX projects_org_created ON projects(organization_id, created_at DESC, id DESC);

CREATE TABLE files (
  id TEXT PRIMARY KEY,
  organization_id TEXT NOT NULL,
  project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  filename TEXT NOT NULL,
  content_type TEXT NOT NULL,
  declared_size INTEGER,
  size_bytes INTEGER,
  sha256 TEXT,
  status TEXT NOT NULL CHECK (status IN ('pending', 'uploaded')),
  object_key TEXT NOT NULL UNIQUE,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
) STRICT;
CREATE INDEX files_project_created ON files(project_id, created_at DESC, id DESC);

CREATE TABLE jobs (
  id TEXT PRIMARY KEY,
  organization_id TEXT NOT NULL,
  project_id TEXT REFERENCES projects(id) ON DELETE CASCADE,
  type TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('Queued', 'Started', 'Completed', 'Failed', 'Canceled')),
  target_type TEXT NOT NULL CHECK (target_type IN ('drawing', 'sheet', 'block', 'overlay')),
  target_id TEXT NOT NULL,
  parent_id TEXT REFERENCES jobs(id) ON DELETE CASCADE,
  child_key TEXT,
  payload TEXT NOT NULL DEFAULT '{}',
  progress_completed INTEGER NOT NULL DEFAULT 0,
  progress_total INTEGER NOT NULL DEFAULT 0,
  result TEXT,
  error TEXT,
  credits_reserved INTEGER NOT NULL DEFAULT 0,
  credits_charged INTEGER NOT NULL DEFAULT 0,
  attempts INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  started_at TEXT,
  finished_at TEXT,
  UNIQUE (parent_id, child_key)
) STRICT;
CREATE INDEX jobs_org_created ON jobs(organization_id, created_at DESC, id DESC);
CREATE INDEX jobs_status ON jobs(status, created_at);
CREATE INDEX jobs_parent ON jobs(parent_id);
CREATE INDEX jobs_target ON jobs(target_id);

CREATE TABLE drawings (
  id TEXT PRIMARY KEY,
  organization_id TEXT NOT NULL,
  project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  file_id TEXT NOT NULL REFERENCES files(id),
  revision TEXT,
  status TEXT NOT NULL CHECK (status IN ('Processing', 'Ready', 'Failed')),
  sheet_count INTEGER NOT NULL DEFAULT 0,
  job_id TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
) STRICT;
CREATE INDEX drawings_project_created ON drawings(project_id, created_at DESC, id DESC);
CREATE INDEX drawings_file ON drawings(file_id);

CREATE TABLE sheets (
  id TEXT PRIMARY KEY,
  organization_id TEXT NOT NULL,
  project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  drawing_id TEXT NOT NULL REFERENCES drawings(id) ON DELETE CASCADE,
  page_index INTEGER NOT NULL,
  sheet_number TEXT,
  title TEXT,
  discipline TEXT NOT NULL DEFAULT 'unknown',
  revision TEXT,
  width INTEGER NOT NULL,
  height INTEGER NOT NULL,
  dpi INTEGER NOT NULL,
  text_source TEXT NOT NULL DEFAULT 'none' CHECK (text_source IN ('vector', 'ocr', 'none')),
  image_key TEXT,
  thumbnail_key TEXT,
  overrides TEXT NOT NULL DEFAULT '{}',
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (drawing_id, page_index)
) STRICT;
CREATE INDEX sheets_org_created ON sheets(organization_id, created_at DESC, id DESC);
CREATE INDEX sheets_drawing ON sheets(drawing_id, created_at DESC, id DESC);
CREATE INDEX sheets_project ON sheets(project_id, created_at DESC, id DESC);

CREATE TABLE blocks (
  id TEXT PRIMARY KEY,
  organization_id TEXT NOT NULL,
  project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  drawing_id TEXT NOT NULL REFERENCES drawings(id) ON DELETE CASCADE,
  sheet_id TEXT NOT NULL REFERENCES sheets(id) ON DELETE CASCADE,
  type TEXT NOT NULL,
  bbox TEXT NOT NULL,
  identifier TEXT,
  title TEXT,
  scale TEXT,
  description TEXT,
  image_key TEXT,
  overrides TEXT NOT NULL DEFAULT '{}',
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
) STRICT;
CREATE INDEX blocks_org_created ON blocks(organization_id, created_at DESC, id DESC);
CREATE INDEX blocks_sheet ON blocks(sheet_id, created_at DESC, id DESC);

CREATE TABLE overlays (
  id TEXT PRIMARY KEY,
  organization_id TEXT NOT NULL,
  project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  job_id TEXT,
  block_a_id TEXT NOT NULL REFERENCES blocks(id) ON DELETE CASCADE,
  block_b_id TEXT NOT NULL REFERENCES blocks(id) ON DELETE CASCADE,
  score REAL,
  width INTEGER,
  height INTEGER,
  transform TEXT,
  alignment TEXT,
  stats TEXT,
  images TEXT NOT NULL DEFAULT '{}',
  has_changes INTEGER NOT NULL DEFAULT 0,
  change_count INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
) STRICT;
CREATE INDEX overlays_org_created ON overlays(organization_id, created_at DESC, id DESC);
CREATE INDEX overlays_job ON overlays(job_id);
CREATE INDEX overlays_block_a ON overlays(block_a_id);
CREATE INDEX overlays_block_b ON overlays(block_b_id);

CREATE TABLE changes (
  id TEXT PRIMARY KEY,
  organization_id TEXT NOT NULL,
  project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  overlay_id TEXT NOT NULL REFERENCES overlays(id) ON DELETE CASCADE,
  bbox TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('added', 'removed', 'modified', 'moved')),
  category TEXT NOT NULL CHECK (category IN ('geometry', 'text', 'dimension', 'annotation', 'title_block', 'noise')),
  area_px INTEGER NOT NULL,
  confidence REAL NOT NULL,
  text_before TEXT,
  text_after TEXT,
  description TEXT,
  review_status TEXT NOT NULL DEFAULT 'open' CHECK (review_status IN ('open', 'accepted', 'rejected', 'flagged')),
  note TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
) STRICT;
CREATE INDEX changes_org_created ON changes(organization_id, created_at DESC, id DESC);
CREATE INDEX changes_overlay ON changes(overlay_id);

CREATE TABLE symbols (
  id TEXT PRIMARY KEY,
  organization_id TEXT NOT NULL,
  project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  job_id TEXT,
  sheet_id TEXT NOT NULL REFERENCES sheets(id) ON DELETE CASCADE,
  block_id TEXT REFERENCES blocks(id) ON DELETE CASCADE,
  label TEXT NOT NULL,
  bbox TEXT NOT NULL,
  confidence REAL NOT NULL,
  rotation INTEGER NOT NULL CHECK (rotation IN (0, 90, 180, 270)),
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
) STRICT;
CREATE INDEX symbols_org_created ON symbols(organization_id, created_at DESC, id DESC);

CREATE TABLE idempotency_keys (
  organization_id TEXT NOT NULL,
  idem_key TEXT NOT NULL,
  method TEXT NOT NULL,
  route TEXT NOT NULL,
  body_hash TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('processing', 'done')),
  response_status INTEGER,
  response_headers TEXT,
  response_body TEXT,
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL,
  PRIMARY KEY (organization_id, idem_key)
) STRICT;

CREATE TABLE credit_ledger (
  id TEXT PRIMARY KEY,
  organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  amount INTEGER NOT NULL,
  reason TEXT NOT NULL,
  job_id TEXT,
  created_at TEXT NOT NULL
) STRICT;
CREATE INDEX credit_ledger_org_created ON credit_ledger(organization_id, created_at DESC, id DESC);
`;
