/** A database row as returned by better-sqlite3 (every resource table has id and created_at). */
export type Row = Record<string, unknown> & { id: string; created_at: string };
