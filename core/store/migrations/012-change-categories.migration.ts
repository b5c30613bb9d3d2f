// Change categories `fill` (a hatch, tone, pattern or solid area changed while the line work around it
// did not) and `style` (the same geometry drawn with another lineweight, pen shade, colour or line
// type), contract §4, added 2026-11-27. SQLite cannot alter a CHECK constraint: the table is rebuilt
// with the same rows and rowids (the change_search FTS index of migration 005 is keyed by rowid, so it
// stays valid), then its indexes and search triggers are made again.
const cols =
  'id, organization_id, project_id, overlay_id, bbox, kind, category, area_px, confidence, text_before, text_after, description, review_status, note, created_at, updated_at';

export const sql = /* sql */ `
CREATE TABLE changes_new (
  id TEXT PRIMARY KEY,
  organization_id TEXT NOT NULL,
  project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  overlay_id TEXT NOT NULL REFERENCES overlays(id) ON DELETE CASCADE,
  bbox TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('added', 'removed', 'modified', 'moved')),
  category TEXT NOT NULL CHECK (category IN ('geometry', 'text', 'dimension', 'annotation', 'title_block', 'fill', 'style', 'noise')),
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
INSERT INTO changes_new (rowid, ${cols}) SELECT rowid, ${cols} FROM changes;
DROP TABLE changes;
ALTER TABLE changes_new RENAME TO changes;
CREATE INDEX changes_org_created ON changes(organization_id, created_at DESC, id DESC);
CREATE INDEX changes_overlay ON changes(overlay_id);
CREATE INDEX changes_project ON changes(project_id);
CREATE TRIGGER change_search_ai AFTER INSERT ON changes BEGIN
  INSERT INTO change_search (rowid, description, text_before, text_after, note) VALUES (new.rowid, new.description, new.text_before, new.text_after, new.note);
END;
CREATE TRIGGER change_search_ad AFTER DELETE ON changes BEGIN
  INSERT INTO change_search (change_search, rowid, description, text_before, text_after, note) VALUES ('delete', old.rowid, old.description, old.text_before, old.text_after, old.note);
END;
CREATE TRIGGER change_search_au AFTER UPDATE OF description, text_before, text_after, note ON changes BEGIN
  INSERT INTO change_search (change_search, rowid, description, text_before, text_after, note) VALUES ('delete', old.rowid, old.description, old.text_before, old.text_after, old.note);
  INSERT INTO change_search (rowid, description, text_before, text_after, note) VALUES (new.rowid, new.description, new.text_before, new.text_after, new.note);
END;
`;
