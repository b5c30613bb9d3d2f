// Every sheet has exactly one `Sheet` block, the whole page (contract §4, added 2026-11-27);
// processing adds it since then. Sheets processed before get theirs here, so that a comparison of an
// older drawing has its whole-sheet overlay too. Like processing, the block's image is the sheet image
// (the same object key). Its id is `blk_` and 20 random lowercase hex characters: the shape of the
// ids stored before ULIDs (still valid, contract §2), since SQL cannot make a ULID. It is created
// when its sheet was, so lists order it beside its sheet's other blocks.
export const sql = /* sql */ `
INSERT INTO blocks (id, organization_id, project_id, drawing_id, sheet_id, type, bbox, identifier, title, scale, image_key, created_at, updated_at)
SELECT 'blk_' || lower(hex(randomblob(10))), s.organization_id, s.project_id, s.drawing_id, s.id, 'Sheet',
       json_object('x', 0, 'y', 0, 'width', s.width, 'height', s.height), NULL, NULL, NULL, s.image_key,
       s.created_at, s.created_at
FROM sheets s
WHERE NOT EXISTS (SELECT 1 FROM blocks b WHERE b.sheet_id = s.id AND b.type = 'Sheet');
`;
