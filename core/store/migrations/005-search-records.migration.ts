// Search over the records people edit or later jobs write (contract §7): sheet numbers and titles,
// block titles, change descriptions and symbol labels. Each gets an FTS5 index whose content is the
// record's own table (external content), kept current by triggers — so a person's PATCH of a sheet
// title, a re-analysis that replaces an overlay's changes, or a cascade delete of a project updates
// search in the same transaction, and no other module has to call into search.
//
// Text runs stay in `search_index` (migration 002, written by processing); its 'sheet' and 'block'
// rows are superseded by the tables here, which follow corrections.
//
// Rowids: external content maps FTS rows to the content table's rowid. The tables below have TEXT
// primary keys, so a VACUUM may renumber them; run rebuildRecordSearch() (search.repository) after
// a VACUUM. Nothing in the service runs VACUUM today.
const fts = (name: string, columns: string, table: string) => /* sql */ `
CREATE VIRTUAL TABLE ${name} USING fts5(
  ${columns},
  content = '${table}',
  content_rowid = 'rowid',
  tokenize = 'unicode61 remove_diacritics 2',
  prefix = '2 3'
);`;

const triggers = (name: string, table: string, cols: string[], updateOf: string[]) => {
  const list = cols.join(', ');
  const nw = cols.map((c) => `new.${c}`).join(', ');
  const od = cols.map((c) => `old.${c}`).join(', ');
  return /* sql */ `
CREATE TRIGGER ${name}_ai AFTER INSERT ON ${table} BEGIN
  INSERT INTO ${name} (rowid, ${list}) VALUES (new.rowid, ${nw});
END;
CREATE TRIGGER ${name}_ad AFTER DELETE ON ${table} BEGIN
  INSERT INTO ${name} (${name}, rowid, ${list}) VALUES ('delete', old.rowid, ${od});
END;
CREATE TRIGGER ${name}_au AFTER UPDATE OF ${updateOf.join(', ')} ON ${table} BEGIN
  INSERT INTO ${name} (${name}, rowid, ${list}) VALUES ('delete', old.rowid, ${od});
  INSERT INTO ${name} (rowid, ${list}) VALUES (new.rowid, ${nw});
END;
INSERT INTO ${name} (${name}) VALUES ('rebuild');`;
};

export const sql = [
  fts('sheet_search', 'sheet_number, title', 'sheets'),
  triggers('sheet_search', 'sheets', ['sheet_number', 'title'], ['sheet_number', 'title']),
  fts('block_search', 'title, type', 'blocks'),
  triggers('block_search', 'blocks', ['title', 'type'], ['title', 'type']),
  fts('change_search', 'description, text_before, text_after, note', 'changes'),
  triggers(
    'change_search',
    'changes',
    ['description', 'text_before', 'text_after', 'note'],
    ['description', 'text_before', 'text_after', 'note'],
  ),
  fts('symbol_search', 'label', 'symbols'),
  triggers('symbol_search', 'symbols', ['label'], ['label']),
  // Search filters symbols and changes by project; neither table had an index that serves it.
  'CREATE INDEX IF NOT EXISTS symbols_sheet_label ON symbols(sheet_id, label);',
  'CREATE INDEX IF NOT EXISTS changes_project ON changes(project_id);',
].join('\n');
