// Generated from docs/openapi.json by `npm run openapi:write`; do not edit.
export interface paths {
    "/problems/{code}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Explain a problem type (the `type` of a Problem Details body) */
        get: operations["getProblemType"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/openapi.json": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** This OpenAPI 3.1 document */
        get: operations["getOpenApiDocument"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/projects": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List projects, newest first */
        get: operations["listProjects"];
        put?: never;
        /** Create a project */
        post: operations["createProject"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/projects/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Get one project */
        get: operations["getProject"];
        put?: never;
        post?: never;
        /**
         * Delete a project and everything in it
         * @description Removes its drawings, files, sheets, blocks, overlays, changes, symbols and jobs; a running job is canceled first.
         */
        delete: operations["deleteProject"];
        options?: never;
        head?: never;
        /** Update a project */
        patch: operations["updateProject"];
        trace?: never;
    };
    "/v1/drawings": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List drawings, newest first */
        get: operations["listDrawings"];
        put?: never;
        /** Create a drawing from an uploaded file; queues its `process` job (no credits) */
        post: operations["createDrawing"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/drawings/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Get one drawing */
        get: operations["getDrawing"];
        put?: never;
        post?: never;
        /** Delete a drawing with its sheets, blocks and every overlay involving its blocks */
        delete: operations["deleteDrawing"];
        options?: never;
        head?: never;
        /** Update a drawing's name or revision label */
        patch: operations["updateDrawing"];
        trace?: never;
    };
    "/v1/sheets": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List sheets, newest first */
        get: operations["listSheets"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/sheets/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Get one sheet */
        get: operations["getSheet"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        /** Correct a sheet (a person’s value wins over extraction and survives re-processing) */
        patch: operations["updateSheet"];
        trace?: never;
    };
    "/v1/blocks": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List blocks, newest first */
        get: operations["listBlocks"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/blocks/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Get one block */
        get: operations["getBlock"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        /** Correct a block's type, title or description */
        patch: operations["updateBlock"];
        trace?: never;
    };
    "/v1/overlays": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List overlays, newest first */
        get: operations["listOverlays"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/overlays/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Get one overlay */
        get: operations["getOverlay"];
        put?: never;
        post?: never;
        /** Delete an overlay and its changes */
        delete: operations["deleteOverlay"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/changes": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List changes, newest first */
        get: operations["listChanges"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/changes/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Get one change */
        get: operations["getChange"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        /** Review a change: status and note */
        patch: operations["updateChange"];
        trace?: never;
    };
    "/v1/symbols": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List symbols, newest first */
        get: operations["listSymbols"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/symbols/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Get one symbol */
        get: operations["getSymbol"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/jobs": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List jobs, newest first */
        get: operations["listJobs"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/jobs/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Get one job */
        get: operations["getJob"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/files": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List a project's stored files, newest first
         * @description Only files whose bytes are stored; a pending file is reachable by GET /v1/files/{id}.
         */
        get: operations["listFiles"];
        put?: never;
        /** Create a file and get a signed upload URL (PUT the raw bytes there within 15 minutes) */
        post: operations["createFile"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/uploads/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        /**
         * Upload the raw bytes of a file to its signed upload URL (no Authorization header)
         * @description Send the bytes with Content-Type set to the type declared when the file was created. They are checked against that type by their magic number (415 if not) and against size_bytes when it was given; the limit is the upload size limit (1 GiB by default).
         */
        put: operations["uploadFileContent"];
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/files/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Get one file (pending files too) */
        get: operations["getFile"];
        put?: never;
        post?: never;
        /** Delete a file (409 while a drawing uses it) */
        delete: operations["deleteFile"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/blobs/{key}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Download a stored object through its signed URL (every *_uri)
         * @description Signed with HMAC-SHA256 over path and expiry, valid 1 hour (the expiry is rounded up to the next 5-minute mark, so a URL lasts 60–65 minutes and a blob keeps the same URL across list refetches, which lets clients cache it), no Authorization header needed. Served with ETag, Cache-Control: private, max-age=3600, immutable, and Range support; altered or expired → 403 invalid_signature. Images (sheet, block crop, overlay) also serve a tile pyramid at `<uri path>/tiles/{z}/{x}/{y}.webp?<the same query>`, described by `<uri path>/tiles.json?<the same query>` = {tile_size, width, height, native_zoom, max_zoom}: tiles are 512 px square (edge tiles smaller); level z shows the image scaled by 2^(z − native_zoom), where native_zoom = ceil(log2(max(width, height) / 512)) is the stored image’s own resolution and level 0 fits in one tile. Images of vector PDF pages (sheets, their blocks, overlays of them) go 4 levels deeper (max_zoom = native_zoom + 4, 16x): those tiles are rendered from the PDF pages themselves on first request (sheets and blocks in colour; an overlay’s from both revisions rendered at that scale and compared through the pair’s transform), so they are sharp, never enlarged pixels. Images of scans stop at native_zoom (max_zoom = native_zoom). Stored tiles are a cache bounded on disk: any tile may be rendered again.
         */
        get: operations["downloadBlob"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        /**
         * The headers of a stored object (size, type, ETag) through its signed URL
         * @description Signed with HMAC-SHA256 over path and expiry, valid 1 hour (the expiry is rounded up to the next 5-minute mark, so a URL lasts 60–65 minutes and a blob keeps the same URL across list refetches, which lets clients cache it), no Authorization header needed. Served with ETag, Cache-Control: private, max-age=3600, immutable, and Range support; altered or expired → 403 invalid_signature. Images (sheet, block crop, overlay) also serve a tile pyramid at `<uri path>/tiles/{z}/{x}/{y}.webp?<the same query>`, described by `<uri path>/tiles.json?<the same query>` = {tile_size, width, height, native_zoom, max_zoom}: tiles are 512 px square (edge tiles smaller); level z shows the image scaled by 2^(z − native_zoom), where native_zoom = ceil(log2(max(width, height) / 512)) is the stored image’s own resolution and level 0 fits in one tile. Images of vector PDF pages (sheets, their blocks, overlays of them) go 4 levels deeper (max_zoom = native_zoom + 4, 16x): those tiles are rendered from the PDF pages themselves on first request (sheets and blocks in colour; an overlay’s from both revisions rendered at that scale and compared through the pair’s transform), so they are sharp, never enlarged pixels. Images of scans stop at native_zoom (max_zoom = native_zoom). Stored tiles are a cache bounded on disk: any tile may be rendered again.
         */
        head: operations["headBlob"];
        patch?: never;
        trace?: never;
    };
    "/v1/jobs/{id}/cancel": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Cancel a job and every descendant (409 when already terminal)
         * @description No body needed. Answers the job as it is after the cancel.
         */
        post: operations["cancelJob"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/jobs/{id}/events": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Server-Sent Events: the job object on every change, ending at a terminal status */
        get: operations["streamJobEvents"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/webhooks": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List webhooks, newest first */
        get: operations["listWebhooks"];
        put?: never;
        /** Subscribe a URL to events; the response carries the signing secret, shown once */
        post: operations["createWebhook"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/webhooks/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Get one webhook */
        get: operations["getWebhook"];
        put?: never;
        post?: never;
        /** Delete a webhook; deliveries not yet made are dropped */
        delete: operations["deleteWebhook"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/webhooks/{id}/deliveries": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A webhook's delivery log, newest first: one entry per event with its attempts and outcome */
        get: operations["listWebhookDeliveries"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/drawings/{id}/compare": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Compare this (newer) drawing with an older one: pairs sheets and blocks, one overlay per block pair. Reserves 1 credit per block pair it may compare (+1 with analyze); charged what it used. */
        post: operations["compareDrawing"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/compare": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Compare two revisions of a Drawing, Sheet or Block (old_id older, new_id newer, both of one project). Reserves 1 credit per block pair it may compare (+1 with analyze). */
        post: operations["compareRevisions"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/overlays/{id}/analyze": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Run change detection on an overlay (no body needed): replaces its change regions, sets has_changes and change_count. 1 credit. */
        post: operations["analyzeOverlay"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/parse": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Find every instance of template symbols (crops of a sheet or block) in a drawing, sheet or block, at rotations 0/90/180/270 and ±10 % scale. Results in /symbols (job_id = this job); the job result counts instances per label per sheet, with deltas against an earlier revision parsed with the same labels. Reserves 1 credit per sheet scanned. */
        post: operations["parseSymbols"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/exports": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Export a completed comparison as a review report (PDF), the newer PDF with revision clouds, or a CSV of its changes. The changes are those of the whole-sheet overlays. Free (no credits). */
        post: operations["createExport"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/credits": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Credits of the organization: balance (available) and reserved (held by running jobs) */
        get: operations["getCredits"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/credits/ledger": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List ledger entrys, newest first */
        get: operations["listCreditLedger"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/projects/{id}/search": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Search a project: sheet numbers and titles, block titles, sheet text, change descriptions, symbol labels (no credits) */
        post: operations["searchProject"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/projects/{id}/ask": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Ask a question answered only from the project’s records, with citations (1 credit when answered) */
        post: operations["askProject"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/blobs/{key}/tiles/{z}/{x}/{y}.webp": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * A deep-zoom tile of a stored image, under the image URL’s signature
         * @description Signed with HMAC-SHA256 over path and expiry, valid 1 hour (the expiry is rounded up to the next 5-minute mark, so a URL lasts 60–65 minutes and a blob keeps the same URL across list refetches, which lets clients cache it), no Authorization header needed. Served with ETag, Cache-Control: private, max-age=3600, immutable, and Range support; altered or expired → 403 invalid_signature. Images (sheet, block crop, overlay) also serve a tile pyramid at `<uri path>/tiles/{z}/{x}/{y}.webp?<the same query>`, described by `<uri path>/tiles.json?<the same query>` = {tile_size, width, height, native_zoom, max_zoom}: tiles are 512 px square (edge tiles smaller); level z shows the image scaled by 2^(z − native_zoom), where native_zoom = ceil(log2(max(width, height) / 512)) is the stored image’s own resolution and level 0 fits in one tile. Images of vector PDF pages (sheets, their blocks, overlays of them) go 4 levels deeper (max_zoom = native_zoom + 4, 16x): those tiles are rendered from the PDF pages themselves on first request (sheets and blocks in colour; an overlay’s from both revisions rendered at that scale and compared through the pair’s transform), so they are sharp, never enlarged pixels. Images of scans stop at native_zoom (max_zoom = native_zoom). Stored tiles are a cache bounded on disk: any tile may be rendered again.
         */
        get: operations["getBlobTile"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/blobs/{key}/tiles.json": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The tile pyramid of a stored image (its levels), under the image URL’s signature
         * @description Signed with HMAC-SHA256 over path and expiry, valid 1 hour (the expiry is rounded up to the next 5-minute mark, so a URL lasts 60–65 minutes and a blob keeps the same URL across list refetches, which lets clients cache it), no Authorization header needed. Served with ETag, Cache-Control: private, max-age=3600, immutable, and Range support; altered or expired → 403 invalid_signature. Images (sheet, block crop, overlay) also serve a tile pyramid at `<uri path>/tiles/{z}/{x}/{y}.webp?<the same query>`, described by `<uri path>/tiles.json?<the same query>` = {tile_size, width, height, native_zoom, max_zoom}: tiles are 512 px square (edge tiles smaller); level z shows the image scaled by 2^(z − native_zoom), where native_zoom = ceil(log2(max(width, height) / 512)) is the stored image’s own resolution and level 0 fits in one tile. Images of vector PDF pages (sheets, their blocks, overlays of them) go 4 levels deeper (max_zoom = native_zoom + 4, 16x): those tiles are rendered from the PDF pages themselves on first request (sheets and blocks in colour; an overlay’s from both revisions rendered at that scale and compared through the pair’s transform), so they are sharp, never enlarged pixels. Images of scans stop at native_zoom (max_zoom = native_zoom). Stored tiles are a cache bounded on disk: any tile may be rendered again.
         */
        get: operations["getBlobTilesJson"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        AskAnswer: {
            /** @description every claim carries a citation [n] = sources[n-1] */
            answer: string;
            sources: {
                /** @enum {string} */
                type: "drawing" | "sheet" | "block" | "text" | "change" | "symbol" | "overlay";
                id: string;
                label: string;
                snippet: string;
            }[];
            /**
             * @description extractive: assembled from the records; llm: written by the configured provider from the records; extractive_fallback: the provider failed
             * @enum {string}
             */
            method: "extractive" | "llm" | "extractive_fallback";
            /** @description false when the records do not answer the question (then nothing is charged) */
            answered: boolean;
            fallback_reason?: string;
        };
        /** @description Box in pixels, origin top-left */
        BBox: {
            x: number;
            y: number;
            width: number;
            height: number;
        };
        Block: {
            /** @description blk_ id */
            id: string;
            /** @description sht_ id */
            sheet_id: string;
            /** @description drw_ id */
            drawing_id: string;
            /** @description prj_ id */
            project_id: string;
            /** @enum {string} */
            type: "Sheet" | "Plan" | "Elevation" | "Section" | "Detail" | "Schedule" | "Legend" | "Notes" | "KeyPlan" | "TitleBlock" | "Diagram" | "Other";
            uri: string | null;
            description: string | null;
            /** @description in sheet pixels */
            bbox: components["schemas"]["BBox"];
            identifier: string | null;
            title: string | null;
            scale: string | null;
            /**
             * Format: date-time
             * @description ISO 8601, UTC
             */
            created_at: string;
            /**
             * Format: date-time
             * @description ISO 8601, UTC
             */
            updated_at: string;
            /** @description Present with ?expand=sheet (nested paths with dots, at most 3 levels): the sheet_id record, null when it no longer exists */
            sheet?: components["schemas"]["Sheet"] | null;
            /** @description Present with ?expand=drawing (nested paths with dots, at most 3 levels): the drawing_id record, null when it no longer exists */
            drawing?: components["schemas"]["Drawing"] | null;
            /** @description Present with ?expand=project (nested paths with dots, at most 3 levels): the project_id record, null when it no longer exists */
            project?: components["schemas"]["Project"] | null;
        };
        Change: {
            /** @description chg_ id */
            id: string;
            /** @description ovl_ id */
            overlay_id: string;
            /** @description prj_ id */
            project_id: string;
            /** @description in overlay pixels */
            bbox: components["schemas"]["BBox"];
            /** @enum {string} */
            kind: "added" | "removed" | "modified" | "moved";
            /** @enum {string} */
            category: "geometry" | "text" | "dimension" | "annotation" | "title_block" | "fill" | "style" | "noise";
            area_px: number;
            confidence: number;
            /** @description The words in the region that only the older revision has (removed or replaced), in reading order; dimension strings as one word (10'-8 1/4"). At most 200 characters, cut at a word with …; null when no word went */
            text_before: string | null;
            /** @description The words in the region that only the newer revision has (added or replacing), read in the older one's frame through the alignment; at most 200 characters; null when no word came */
            text_after: string | null;
            /** @description The change in a reviewer's words, e.g. Dimension 10'-8 1/4" → 7'-3 1/2", Tag W3 → W5, Added: ‘GLULAM COLUMN’ (with linework), Fill removed */
            description: string | null;
            /** @enum {string} */
            review_status: "open" | "accepted" | "rejected" | "flagged";
            note: string | null;
            /**
             * Format: date-time
             * @description ISO 8601, UTC
             */
            created_at: string;
            /**
             * Format: date-time
             * @description ISO 8601, UTC
             */
            updated_at: string;
            /** @description Present with ?expand=overlay (nested paths with dots, at most 3 levels): the overlay_id record, null when it no longer exists */
            overlay?: components["schemas"]["Overlay"] | null;
            /** @description Present with ?expand=project (nested paths with dots, at most 3 levels): the project_id record, null when it no longer exists */
            project?: components["schemas"]["Project"] | null;
        };
        Credits: {
            /** @description credits available to start new Vision work */
            balance: number;
            /** @description credits held by jobs that are still running (settled when they end) */
            reserved: number;
        };
        Drawing: {
            /** @description drw_ id */
            id: string;
            /** @description prj_ id */
            project_id: string;
            name: string;
            /** @description fil_ id */
            file_id: string;
            /** @description Free label such as "Rev B" or "Addendum 2". Set by a person (POST or PATCH), else read from the title blocks once processed: the label of the sheets that carry the set's issue date (the most frequent among them). A person’s value, null included, is never replaced by processing. */
            revision: string | null;
            /** @enum {string} */
            status: "Processing" | "Ready" | "Failed";
            sheet_count: number;
            job_id: string | null;
            /** @description The issue date (YYYY-MM-DD), or null when none is known. Read when the drawing is processed: the latest date of the sheets' title blocks (DATE field or revision table), else a date in the file name (e.g. 20130718_set.pdf, 2013-07-18 set.pdf, Set 18 Jul 2013.pdf), else the PDF's creation date. A value set with PATCH (null included) wins and survives re-processing. Of two issues the one with the later date is the newer; same-day issues, or a pair where either date is unknown, keep their upload order (created_at). */
            issued_at: string | null;
            /**
             * Format: date-time
             * @description ISO 8601, UTC
             */
            created_at: string;
            /**
             * Format: date-time
             * @description ISO 8601, UTC
             */
            updated_at: string;
            /** @description Present with ?expand=file (nested paths with dots, at most 3 levels): the file_id record, null when it no longer exists */
            file?: components["schemas"]["File"] | null;
            /** @description Present with ?expand=project (nested paths with dots, at most 3 levels): the project_id record, null when it no longer exists */
            project?: components["schemas"]["Project"] | null;
            /** @description Present with ?expand=job (nested paths with dots, at most 3 levels): the job_id record, null when it no longer exists */
            job?: components["schemas"]["Job"] | null;
        };
        File: {
            /** @description fil_ id */
            id: string;
            /** @description prj_ id */
            project_id: string;
            filename: string;
            /** @enum {string} */
            content_type: "application/pdf" | "image/png" | "image/jpeg" | "image/tiff" | "text/csv";
            size_bytes: number | null;
            sha256: string | null;
            /** @enum {string} */
            status: "pending" | "uploaded";
            uri: string | null;
            /**
             * Format: date-time
             * @description ISO 8601, UTC
             */
            created_at: string;
            /**
             * Format: date-time
             * @description ISO 8601, UTC
             */
            updated_at: string;
            /** @description Present with ?expand=project (nested paths with dots, at most 3 levels): the project_id record, null when it no longer exists */
            project?: components["schemas"]["Project"] | null;
        };
        FileCreated: {
            /** @description fil_ id */
            id: string;
            /** @description prj_ id */
            project_id: string;
            filename: string;
            /** @enum {string} */
            content_type: "application/pdf" | "image/png" | "image/jpeg" | "image/tiff" | "text/csv";
            size_bytes: number | null;
            sha256: string | null;
            /** @enum {string} */
            status: "pending" | "uploaded";
            uri: string | null;
            /**
             * Format: date-time
             * @description ISO 8601, UTC
             */
            created_at: string;
            /**
             * Format: date-time
             * @description ISO 8601, UTC
             */
            updated_at: string;
            /** @description Present with ?expand=project (nested paths with dots, at most 3 levels): the project_id record, null when it no longer exists */
            project?: components["schemas"]["Project"] | null;
            /** @description Signed URL to PUT the raw bytes to (no Authorization header), with Content-Type = content_type */
            upload_url: string;
            /**
             * Format: date-time
             * @description 15 minutes from now
             */
            upload_expires_at: string;
        };
        Job: {
            /** @description job_ id */
            id: string;
            project_id: string | null;
            /** @description one of process, compare, analyze, parse, export */
            type: string;
            /** @enum {string} */
            status: "Queued" | "Started" | "Completed" | "Failed" | "Canceled";
            /** @enum {string} */
            target_type: "drawing" | "sheet" | "block" | "overlay";
            /** @description id of the target record (drw_, sht_, blk_ or ovl_) */
            target_id: string;
            parent_id: string | null;
            progress: {
                completed: number;
                total: number;
            };
            /** @description per job type (contract §4, §6, §7); null until it ends */
            result: unknown;
            /** @description why it failed (Failed only) */
            error: components["schemas"]["Problem"] | null;
            credits_charged: number;
            /**
             * Format: date-time
             * @description ISO 8601, UTC
             */
            created_at: string;
            /**
             * Format: date-time
             * @description ISO 8601, UTC
             */
            updated_at: string;
            started_at: string | null;
            finished_at: string | null;
            /** @description Present with ?expand=parent: the parent job, null for a top-level job */
            parent?: components["schemas"]["Job"] | null;
            /** @description Present with ?expand=project (nested paths with dots, at most 3 levels): the project_id record, null when it no longer exists */
            project?: components["schemas"]["Project"] | null;
        };
        /** @description The job started; follow it at Location: /v1/jobs/<job_id> */
        JobAccepted: {
            /** @description job_ id */
            job_id: string;
            /**
             * @description Queued for a new job; a replay returns the original answer
             * @enum {string}
             */
            status: "Queued" | "Started" | "Completed" | "Failed" | "Canceled";
        };
        LedgerEntry: {
            /** @description led_ id */
            id: string;
            /** @description positive: granted; negative: charged */
            amount: number;
            /** @description grant, or the job type charged (compare, analyze, …) */
            reason: string;
            job_id: string | null;
            /** Format: date-time */
            created_at: string;
            /** @description Present with ?expand=job: the job charged, null for a grant */
            job?: components["schemas"]["Job"] | null;
        };
        ListMeta: {
            /** @description cursor of the next page (pass as ?cursor=); null on the last page */
            next: string | null;
            /** @description cursor of the previous page; null on the first page */
            prev: string | null;
            /** @description the page size applied */
            limit: number;
        };
        Overlay: {
            /** @description ovl_ id */
            id: string;
            /** @description prj_ id */
            project_id: string;
            job_id: string | null;
            /** @description blk_ id */
            block_a_id: string;
            /** @description blk_ id */
            block_b_id: string;
            score: number | null;
            uri: string | null;
            addition_uri: string | null;
            deletion_uri: string | null;
            aligned_b_uri: string | null;
            width: number | null;
            height: number | null;
            transform: number[] | null;
            alignment: {
                method: string;
                confidence: number;
                residual_px: number;
                /** @description Present and true when the alignment is not trustworthy (its confidence, which falls as the residual grows, is below 0.3): the overlay may not show real changes, and change detection seeks none on it, so an empty change list means "not known", not "no changes". */
                low_confidence?: boolean;
                /** @description Why the alignment is not trusted, in words. */
                warning?: string;
            } | null;
            stats: {
                added_px: number;
                removed_px: number;
                unchanged_px: number;
                changed_fraction: number;
            } | null;
            has_changes: boolean;
            change_count: number;
            /**
             * Format: date-time
             * @description ISO 8601, UTC
             */
            created_at: string;
            /**
             * Format: date-time
             * @description ISO 8601, UTC
             */
            updated_at: string;
            /** @description Present with ?expand=block_a (nested paths with dots, at most 3 levels): the block_a_id record, null when it no longer exists */
            block_a?: components["schemas"]["Block"] | null;
            /** @description Present with ?expand=block_b (nested paths with dots, at most 3 levels): the block_b_id record, null when it no longer exists */
            block_b?: components["schemas"]["Block"] | null;
            /** @description Present with ?expand=job (nested paths with dots, at most 3 levels): the job_id record, null when it no longer exists */
            job?: components["schemas"]["Job"] | null;
            /** @description Present with ?expand=project (nested paths with dots, at most 3 levels): the project_id record, null when it no longer exists */
            project?: components["schemas"]["Project"] | null;
        };
        /** @description RFC 9457 Problem Details (Content-Type: application/problem+json) */
        Problem: {
            /** @description /problems/<code>, at the server root: GET it for an explanation */
            type: string;
            /** @description short, fixed per code */
            title: string;
            /** @description the HTTP status */
            status: number;
            /** @description what was wrong with this request */
            detail: string;
            /** @description the request path (a failed job: the job path) */
            instance?: string;
            /** @description stable machine code (contract §3) */
            code: string;
            /** @description same as the X-Request-Id header */
            request_id?: string;
            /** @description validation problems: one entry per field */
            errors?: {
                /** @description JSON pointer into the body, or the query parameter name */
                field: string;
                code: string;
                message: string;
            }[];
        } & {
            [key: string]: unknown;
        };
        ProblemType: {
            /** @description /problems/<code> */
            type: string;
            code: string;
            title: string;
            status: number;
            /** @description what it means and what to do about it */
            description: string;
        };
        Project: {
            /** @description prj_ id */
            id: string;
            name: string;
            description: string | null;
            /**
             * Format: date-time
             * @description ISO 8601, UTC
             */
            created_at: string;
            /**
             * Format: date-time
             * @description ISO 8601, UTC
             */
            updated_at: string;
        };
        SearchHit: {
            /**
             * @description sheet (number or title), block (view title or type), text (a text run printed on the sheet), change (description, text before/after, note), symbol (label)
             * @enum {string}
             */
            type: "sheet" | "block" | "text" | "change" | "symbol";
            /** @description the sheet, block, change or symbol id; for a text run, the sheet it is printed on */
            id: string;
            /** @description sht_ id */
            sheet_id: string;
            sheet_number: string | null;
            /** @description drw_ id */
            drawing_id: string;
            /** @description plain text around the match (no markup) */
            snippet: string;
            /** @description matched ranges in `snippet`, [start, end) in UTF-16 code units */
            highlights: {
                start: number;
                end: number;
            }[];
            /** @description where to highlight, in sheet pixels (origin top-left); null for a whole-sheet hit. A change is drawn on its older sheet (the overlay frame). */
            bbox: components["schemas"]["BBox"] | null;
            /** @description higher is better: exact sheet number 6+, number prefix 5+, sheet title 4+, block 3+, change 2.5+, symbol 2+, text 1+ (the fraction is bm25 relevance) */
            score: number;
            /** @description change hits: the overlay the region belongs to */
            overlay_id?: string;
            /**
             * @description text hits: the text of a PDF markup annotation (a callout, a cloud's comment) rather than the drawing's own text; its bbox is the annotation's
             * @constant
             */
            source?: "markup";
            /** @description the issue the hit is in: its drawing set name */
            drawing_name: string;
            /** @description the issue's revision label, null when none is known */
            revision: string | null;
            /** @description the issue's date (YYYY-MM-DD), null when none is known */
            issued_at: string | null;
        };
        Sheet: {
            /** @description sht_ id */
            id: string;
            /** @description drw_ id */
            drawing_id: string;
            /** @description prj_ id */
            project_id: string;
            /** @description 0-based page */
            index: number;
            sheet_number: string | null;
            title: string | null;
            /** @enum {string} */
            discipline: "general" | "hazardous_materials" | "survey" | "geotechnical" | "civil" | "landscape" | "structural" | "architectural" | "interiors" | "equipment" | "fire_protection" | "plumbing" | "process" | "mechanical" | "electrical" | "distributed_energy" | "telecommunications" | "resource" | "other" | "contractor" | "operations" | "unknown";
            revision: string | null;
            uri: string | null;
            thumbnail_uri: string | null;
            width: number;
            height: number;
            dpi: number;
            /** @enum {string} */
            text_source: "vector" | "ocr" | "none";
            /**
             * Format: date-time
             * @description ISO 8601, UTC
             */
            created_at: string;
            /**
             * Format: date-time
             * @description ISO 8601, UTC
             */
            updated_at: string;
            /** @description Present with ?expand=drawing (nested paths with dots, at most 3 levels): the drawing_id record, null when it no longer exists */
            drawing?: components["schemas"]["Drawing"] | null;
            /** @description Present with ?expand=project (nested paths with dots, at most 3 levels): the project_id record, null when it no longer exists */
            project?: components["schemas"]["Project"] | null;
        };
        Symbol: {
            /** @description sym_ id */
            id: string;
            /** @description prj_ id */
            project_id: string;
            job_id: string | null;
            /** @description sht_ id */
            sheet_id: string;
            block_id: string | null;
            label: string;
            /** @description in sheet pixels */
            bbox: components["schemas"]["BBox"];
            confidence: number;
            /** @enum {number} */
            rotation: 0 | 90 | 180 | 270;
            /**
             * Format: date-time
             * @description ISO 8601, UTC
             */
            created_at: string;
            /**
             * Format: date-time
             * @description ISO 8601, UTC
             */
            updated_at: string;
            /** @description Present with ?expand=sheet (nested paths with dots, at most 3 levels): the sheet_id record, null when it no longer exists */
            sheet?: components["schemas"]["Sheet"] | null;
            /** @description Present with ?expand=block (nested paths with dots, at most 3 levels): the block_id record, null when it no longer exists */
            block?: components["schemas"]["Block"] | null;
            /** @description Present with ?expand=job (nested paths with dots, at most 3 levels): the job_id record, null when it no longer exists */
            job?: components["schemas"]["Job"] | null;
            /** @description Present with ?expand=project (nested paths with dots, at most 3 levels): the project_id record, null when it no longer exists */
            project?: components["schemas"]["Project"] | null;
        };
        Webhook: {
            /** @description whk_ id */
            id: string;
            url: string;
            events: ("drawing.ready" | "drawing.failed" | "job.completed" | "job.failed" | "job.canceled" | "overlay.created" | "changes.analyzed")[];
            /**
             * Format: date-time
             * @description ISO 8601, UTC
             */
            created_at: string;
            /**
             * Format: date-time
             * @description ISO 8601, UTC
             */
            updated_at: string;
        };
        /** @description Each event is POSTed as JSON `{id, type, created_at, data}` (`data`: the resource as GET returns it, without signed URLs — for changes.analyzed `{overlay_id, project_id, job_id, change_count, overlay}`) with the headers `Webhook-Id` (the event id, the same on every retry: deduplicate on it), `Webhook-Timestamp` (unix seconds of this attempt) and `Webhook-Signature: v1,<base64 HMAC-SHA256(key, "<Webhook-Id>.<Webhook-Timestamp>.<raw body>")>` where key is the base64-decoded part of the secret after `whsec_` (the Standard Webhooks scheme). A 2xx answer within 10 seconds is a delivery; anything else (redirects are not followed) is retried with exponential backoff and jitter (30 s, 1 min, 2 min, … capped at 2 h) until 24 hours after the event, then recorded as failed. Delivery is at least once: events come from a persisted outbox written with the change they report and survive restarts. */
        WebhookCreated: {
            /** @description whk_ id */
            id: string;
            url: string;
            events: ("drawing.ready" | "drawing.failed" | "job.completed" | "job.failed" | "job.canceled" | "overlay.created" | "changes.analyzed")[];
            /**
             * Format: date-time
             * @description ISO 8601, UTC
             */
            created_at: string;
            /**
             * Format: date-time
             * @description ISO 8601, UTC
             */
            updated_at: string;
            /** @description whsec_… signing secret. Shown only in this response: store it now. */
            secret: string;
        };
        WebhookDelivery: {
            /** @description whd_ id */
            id: string;
            /** @description whk_ id */
            webhook_id: string;
            /** @description evt_ id; the Webhook-Id header and the payload id */
            event_id: string;
            /**
             * @description drawing.ready, drawing.failed, job.completed, job.failed, job.canceled, overlay.created, changes.analyzed
             * @enum {string}
             */
            type: "drawing.ready" | "drawing.failed" | "job.completed" | "job.failed" | "job.canceled" | "overlay.created" | "changes.analyzed";
            /**
             * @description pending (not yet answered 2xx; retrying), delivered (a 2xx), failed (gave up after 24 hours)
             * @enum {string}
             */
            status: "pending" | "delivered" | "failed";
            /** @description Attempts made so far */
            attempt: number;
            /** @description HTTP status of the last attempt (null: no response) */
            status_code: number | null;
            /** @description Why the last attempt failed */
            error: string | null;
            /** @description When the next attempt is due (pending only) */
            next_attempt_at: string | null;
            delivered_at: string | null;
            /**
             * Format: date-time
             * @description ISO 8601, UTC
             */
            created_at: string;
            /**
             * Format: date-time
             * @description ISO 8601, UTC
             */
            updated_at: string;
            /** @description Present with ?expand=webhook: the webhook delivered to */
            webhook?: components["schemas"]["Webhook"] | null;
        };
    };
    responses: {
        /** @description `conflict`: The request contradicts the record's state (for example canceling a finished job or deleting a file in use). */
        conflict: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"] & {
                    /** @enum {string} */
                    code: "conflict";
                    /** @enum {integer} */
                    status: 409;
                    instance: string;
                    request_id: string;
                };
            };
        };
        /**
         * @description `conflict`: The request contradicts the record's state (for example canceling a finished job or deleting a file in use).
         *
         *     `idempotency_key_conflict`: The Idempotency-Key was already used with a different method, route or body within the last 24 hours. Use a new key for a new request.
         */
        "conflict.idempotency_key_conflict": {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"] & {
                    /** @enum {string} */
                    code: "conflict" | "idempotency_key_conflict";
                    /** @enum {integer} */
                    status: 409;
                    instance: string;
                    request_id: string;
                };
            };
        };
        /**
         * @description `expand_too_deep`: An expand path has more than 3 levels.
         *
         *     `invalid_cursor`: The cursor is malformed, tampered with, expired (after 24 hours), from another endpoint, or contradicted by filters repeated beside it. Start again from the first page.
         *
         *     `invalid_expand`: An expand path is not expandable on this resource. The detail lists the allowed paths.
         *
         *     `invalid_parameter`: A query parameter is malformed: a bad datetime, a bad boolean, an unknown enum value, or a limit below 1 or not an integer.
         */
        "expand_too_deep.invalid_cursor.invalid_expand.invalid_parameter": {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"] & {
                    /** @enum {string} */
                    code: "expand_too_deep" | "invalid_cursor" | "invalid_expand" | "invalid_parameter";
                    /** @enum {integer} */
                    status: 400;
                    instance: string;
                    request_id: string;
                };
            };
        };
        /**
         * @description `expand_too_deep`: An expand path has more than 3 levels.
         *
         *     `invalid_cursor`: The cursor is malformed, tampered with, expired (after 24 hours), from another endpoint, or contradicted by filters repeated beside it. Start again from the first page.
         *
         *     `invalid_expand`: An expand path is not expandable on this resource. The detail lists the allowed paths.
         *
         *     `invalid_parameter`: A query parameter is malformed: a bad datetime, a bad boolean, an unknown enum value, or a limit below 1 or not an integer.
         *
         *     `missing_parameter`: A required query parameter is absent (for example project_id on /drawings and /files).
         */
        "expand_too_deep.invalid_cursor.invalid_expand.invalid_parameter.missing_parameter": {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"] & {
                    /** @enum {string} */
                    code: "expand_too_deep" | "invalid_cursor" | "invalid_expand" | "invalid_parameter" | "missing_parameter";
                    /** @enum {integer} */
                    status: 400;
                    instance: string;
                    request_id: string;
                };
            };
        };
        /**
         * @description `expand_too_deep`: An expand path has more than 3 levels.
         *
         *     `invalid_expand`: An expand path is not expandable on this resource. The detail lists the allowed paths.
         */
        "expand_too_deep.invalid_expand": {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"] & {
                    /** @enum {string} */
                    code: "expand_too_deep" | "invalid_expand";
                    /** @enum {integer} */
                    status: 400;
                    instance: string;
                    request_id: string;
                };
            };
        };
        /**
         * @description `expand_too_deep`: An expand path has more than 3 levels.
         *
         *     `invalid_expand`: An expand path is not expandable on this resource. The detail lists the allowed paths.
         *
         *     `invalid_parameter`: A query parameter is malformed: a bad datetime, a bad boolean, an unknown enum value, or a limit below 1 or not an integer.
         */
        "expand_too_deep.invalid_expand.invalid_parameter": {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"] & {
                    /** @enum {string} */
                    code: "expand_too_deep" | "invalid_expand" | "invalid_parameter";
                    /** @enum {integer} */
                    status: 400;
                    instance: string;
                    request_id: string;
                };
            };
        };
        /** @description `idempotency_key_conflict`: The Idempotency-Key was already used with a different method, route or body within the last 24 hours. Use a new key for a new request. */
        idempotency_key_conflict: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"] & {
                    /** @enum {string} */
                    code: "idempotency_key_conflict";
                    /** @enum {integer} */
                    status: 409;
                    instance: string;
                    request_id: string;
                };
            };
        };
        /** @description `insufficient_credits`: The Vision operation costs more credits than the organization has available. The body adds `required` and `available`. */
        insufficient_credits: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"] & {
                    /** @enum {string} */
                    code: "insufficient_credits";
                    /** @enum {integer} */
                    status: 402;
                    instance: string;
                    request_id: string;
                    /** @description credits the operation needs */
                    required: number;
                    /** @description credits the organization has available */
                    available: number;
                };
            };
        };
        /**
         * @description `invalid_cursor`: The cursor is malformed, tampered with, expired (after 24 hours), from another endpoint, or contradicted by filters repeated beside it. Start again from the first page.
         *
         *     `invalid_parameter`: A query parameter is malformed: a bad datetime, a bad boolean, an unknown enum value, or a limit below 1 or not an integer.
         *
         *     `missing_parameter`: A required query parameter is absent (for example project_id on /drawings and /files).
         */
        "invalid_cursor.invalid_parameter.missing_parameter": {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"] & {
                    /** @enum {string} */
                    code: "invalid_cursor" | "invalid_parameter" | "missing_parameter";
                    /** @enum {integer} */
                    status: 400;
                    instance: string;
                    request_id: string;
                };
            };
        };
        /**
         * @description `invalid_idempotency_key`: The Idempotency-Key header is empty, longer than 256 characters, or contains characters outside A-Z, a-z, 0-9, hyphen and underscore.
         *
         *     `invalid_json`: The request body is not valid JSON, or nests arrays and objects more than 64 levels deep. Send a JSON object with Content-Type: application/json.
         */
        "invalid_idempotency_key.invalid_json": {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"] & {
                    /** @enum {string} */
                    code: "invalid_idempotency_key" | "invalid_json";
                    /** @enum {integer} */
                    status: 400;
                    instance: string;
                    request_id: string;
                };
            };
        };
        /**
         * @description `invalid_idempotency_key`: The Idempotency-Key header is empty, longer than 256 characters, or contains characters outside A-Z, a-z, 0-9, hyphen and underscore.
         *
         *     `invalid_json`: The request body is not valid JSON, or nests arrays and objects more than 64 levels deep. Send a JSON object with Content-Type: application/json.
         *
         *     `validation_error`: One or more body fields are missing, of the wrong type, out of range or not one of the allowed values. `errors` lists each field as a JSON pointer.
         */
        "invalid_idempotency_key.invalid_json.validation_error": {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"] & {
                    /** @enum {string} */
                    code: "invalid_idempotency_key" | "invalid_json" | "validation_error";
                    /** @enum {integer} */
                    status: 400;
                    instance: string;
                    request_id: string;
                };
            };
        };
        /** @description `invalid_json`: The request body is not valid JSON, or nests arrays and objects more than 64 levels deep. Send a JSON object with Content-Type: application/json. */
        invalid_json: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"] & {
                    /** @enum {string} */
                    code: "invalid_json";
                    /** @enum {integer} */
                    status: 400;
                    instance: string;
                    request_id: string;
                };
            };
        };
        /**
         * @description `invalid_json`: The request body is not valid JSON, or nests arrays and objects more than 64 levels deep. Send a JSON object with Content-Type: application/json.
         *
         *     `validation_error`: One or more body fields are missing, of the wrong type, out of range or not one of the allowed values. `errors` lists each field as a JSON pointer.
         */
        "invalid_json.validation_error": {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"] & {
                    /** @enum {string} */
                    code: "invalid_json" | "validation_error";
                    /** @enum {integer} */
                    status: 400;
                    instance: string;
                    request_id: string;
                };
            };
        };
        /** @description `invalid_parameter`: A query parameter is malformed: a bad datetime, a bad boolean, an unknown enum value, or a limit below 1 or not an integer. */
        invalid_parameter: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"] & {
                    /** @enum {string} */
                    code: "invalid_parameter";
                    /** @enum {integer} */
                    status: 400;
                    instance: string;
                    request_id: string;
                };
            };
        };
        /** @description `invalid_signature`: The signed URL was altered or has expired. Fetch the resource again for a fresh URL. */
        invalid_signature: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"] & {
                    /** @enum {string} */
                    code: "invalid_signature";
                    /** @enum {integer} */
                    status: 403;
                    instance: string;
                    request_id: string;
                };
            };
        };
        /** @description `not_found`: No such record in this organization, or no such route. */
        not_found: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"] & {
                    /** @enum {string} */
                    code: "not_found";
                    /** @enum {integer} */
                    status: 404;
                    instance: string;
                    request_id: string;
                };
            };
        };
        /** @description `payload_too_large`: The upload or JSON body is over the limit. */
        payload_too_large: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"] & {
                    /** @enum {string} */
                    code: "payload_too_large";
                    /** @enum {integer} */
                    status: 413;
                    instance: string;
                    request_id: string;
                };
            };
        };
        /** @description `rate_limited`: The API key sent more requests than its rate limit allows. Retry after Retry-After seconds. */
        rate_limited: {
            headers: {
                /** @description Seconds to wait before retrying */
                "Retry-After"?: number;
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"] & {
                    /** @enum {string} */
                    code: "rate_limited";
                    /** @enum {integer} */
                    status: 429;
                    instance: string;
                    request_id: string;
                };
            };
        };
        /** @description `unauthorized`: The API key is missing, malformed, unknown or revoked. Send Authorization: Bearer <key>. */
        unauthorized: {
            headers: {
                /** @description Bearer realm="blueline" */
                "WWW-Authenticate"?: string;
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"] & {
                    /** @enum {string} */
                    code: "unauthorized";
                    /** @enum {integer} */
                    status: 401;
                    instance: string;
                    request_id: string;
                };
            };
        };
        /** @description `unavailable`: The service is shutting down or not ready yet. Retry after Retry-After seconds. */
        unavailable: {
            headers: {
                /** @description Seconds to wait before retrying */
                "Retry-After"?: number;
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"] & {
                    /** @enum {string} */
                    code: "unavailable";
                    /** @enum {integer} */
                    status: 503;
                    instance: string;
                    request_id: string;
                };
            };
        };
        /** @description `unsupported_media_type`: The Content-Type is not accepted on this route, or the file bytes are not of the declared type. */
        unsupported_media_type: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"] & {
                    /** @enum {string} */
                    code: "unsupported_media_type";
                    /** @enum {integer} */
                    status: 415;
                    instance: string;
                    request_id: string;
                };
            };
        };
        /** @description `validation_error`: One or more body fields are missing, of the wrong type, out of range or not one of the allowed values. `errors` lists each field as a JSON pointer. */
        validation_error: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"] & {
                    /** @enum {string} */
                    code: "validation_error";
                    /** @enum {integer} */
                    status: 400;
                    instance: string;
                    request_id: string;
                };
            };
        };
    };
    parameters: never;
    requestBodies: never;
    headers: never;
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    getProblemType: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description a problem code, e.g. not_found */
                code: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ProblemType"];
                };
            };
            404: components["responses"]["not_found"];
            503: components["responses"]["unavailable"];
        };
    };
    getOpenApiDocument: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The OpenAPI 3.1 document of this API */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        [key: string]: unknown;
                    };
                };
            };
            503: components["responses"]["unavailable"];
        };
    };
    listProjects: {
        parameters: {
            query?: {
                /** @description only records created strictly after (ISO 8601) */
                created_after?: string;
                /** @description only records created strictly before (ISO 8601) */
                created_before?: string;
                /** @description page size, 1 to 100 (larger values are clamped to 100); overrides the cursor's */
                limit?: number;
                /** @description opaque cursor from _meta.next or _meta.prev; it remembers the filters and limit */
                cursor?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: components["schemas"]["Project"][];
                        _meta: components["schemas"]["ListMeta"];
                    };
                };
            };
            400: components["responses"]["expand_too_deep.invalid_cursor.invalid_expand.invalid_parameter"];
            401: components["responses"]["unauthorized"];
            429: components["responses"]["rate_limited"];
            503: components["responses"]["unavailable"];
        };
    };
    createProject: {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes the POST safe to retry for 24 hours: a repeat with the same key returns the original status and body (Idempotency-Status: hit) and creates nothing; the same key with another method, route or body is 409 idempotency_key_conflict. A UUID v4 is recommended. */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    name: string;
                    description?: string | null;
                };
            };
        };
        responses: {
            /** @description The project; Location names it */
            201: {
                headers: {
                    /** @description Path of the new record, or of the job: /v1/jobs/<id> */
                    Location?: string;
                    /** @description With an Idempotency-Key: miss on the first request, hit on a replay */
                    "Idempotency-Status"?: "miss" | "hit";
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Project"];
                };
            };
            400: components["responses"]["invalid_idempotency_key.invalid_json.validation_error"];
            401: components["responses"]["unauthorized"];
            409: components["responses"]["idempotency_key_conflict"];
            413: components["responses"]["payload_too_large"];
            415: components["responses"]["unsupported_media_type"];
            429: components["responses"]["rate_limited"];
            503: components["responses"]["unavailable"];
        };
    };
    getProject: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description prj_ id */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Project"];
                };
            };
            400: components["responses"]["expand_too_deep.invalid_expand.invalid_parameter"];
            401: components["responses"]["unauthorized"];
            404: components["responses"]["not_found"];
            429: components["responses"]["rate_limited"];
            503: components["responses"]["unavailable"];
        };
    };
    deleteProject: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description prj_ id */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Deleted; no body */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["invalid_json"];
            401: components["responses"]["unauthorized"];
            404: components["responses"]["not_found"];
            413: components["responses"]["payload_too_large"];
            415: components["responses"]["unsupported_media_type"];
            429: components["responses"]["rate_limited"];
            503: components["responses"]["unavailable"];
        };
    };
    updateProject: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description prj_ id */
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    name?: string;
                    description?: string | null;
                };
            };
        };
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Project"];
                };
            };
            400: components["responses"]["invalid_json.validation_error"];
            401: components["responses"]["unauthorized"];
            404: components["responses"]["not_found"];
            413: components["responses"]["payload_too_large"];
            415: components["responses"]["unsupported_media_type"];
            429: components["responses"]["rate_limited"];
            503: components["responses"]["unavailable"];
        };
    };
    listDrawings: {
        parameters: {
            query: {
                /** @description filter: project_id */
                project_id: string;
                /** @description filter: name (case-insensitive substring) */
                name?: string;
                /** @description only records created strictly after (ISO 8601) */
                created_after?: string;
                /** @description only records created strictly before (ISO 8601) */
                created_before?: string;
                /** @description page size, 1 to 100 (larger values are clamped to 100); overrides the cursor's */
                limit?: number;
                /** @description opaque cursor from _meta.next or _meta.prev; it remembers the filters and limit */
                cursor?: string;
                /** @description Comma-separated fields to inline next to their _id (dots nest, at most 3 levels): file, file.project, project, job, job.parent, job.parent.parent, job.parent.project, job.project */
                expand?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: components["schemas"]["Drawing"][];
                        _meta: components["schemas"]["ListMeta"];
                    };
                };
            };
            400: components["responses"]["expand_too_deep.invalid_cursor.invalid_expand.invalid_parameter.missing_parameter"];
            401: components["responses"]["unauthorized"];
            404: components["responses"]["not_found"];
            429: components["responses"]["rate_limited"];
            503: components["responses"]["unavailable"];
        };
    };
    createDrawing: {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes the POST safe to retry for 24 hours: a repeat with the same key returns the original status and body (Idempotency-Status: hit) and creates nothing; the same key with another method, route or body is 409 idempotency_key_conflict. A UUID v4 is recommended. */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @description prj_ id */
                    project_id: string;
                    name: string;
                    /** @description fil_ id */
                    file_id: string;
                    /** @description The revision label, kept as given (processing never replaces it); omitted or null: read from the title blocks when processed. */
                    revision?: string | null;
                };
            };
        };
        responses: {
            /** @description The drawing, status Processing; Location names it */
            201: {
                headers: {
                    /** @description Path of the new record, or of the job: /v1/jobs/<id> */
                    Location?: string;
                    /** @description With an Idempotency-Key: miss on the first request, hit on a replay */
                    "Idempotency-Status"?: "miss" | "hit";
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Drawing"];
                };
            };
            400: components["responses"]["invalid_idempotency_key.invalid_json.validation_error"];
            401: components["responses"]["unauthorized"];
            404: components["responses"]["not_found"];
            409: components["responses"]["conflict.idempotency_key_conflict"];
            413: components["responses"]["payload_too_large"];
            415: components["responses"]["unsupported_media_type"];
            429: components["responses"]["rate_limited"];
            503: components["responses"]["unavailable"];
        };
    };
    getDrawing: {
        parameters: {
            query?: {
                /** @description Comma-separated fields to inline next to their _id (dots nest, at most 3 levels): file, file.project, project, job, job.parent, job.parent.parent, job.parent.project, job.project */
                expand?: string;
            };
            header?: never;
            path: {
                /** @description drw_ id */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Drawing"];
                };
            };
            400: components["responses"]["expand_too_deep.invalid_expand.invalid_parameter"];
            401: components["responses"]["unauthorized"];
            404: components["responses"]["not_found"];
            429: components["responses"]["rate_limited"];
            503: components["responses"]["unavailable"];
        };
    };
    deleteDrawing: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description drw_ id */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Deleted; no body */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["invalid_json"];
            401: components["responses"]["unauthorized"];
            404: components["responses"]["not_found"];
            413: components["responses"]["payload_too_large"];
            415: components["responses"]["unsupported_media_type"];
            429: components["responses"]["rate_limited"];
            503: components["responses"]["unavailable"];
        };
    };
    updateDrawing: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description drw_ id */
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    name?: string;
                    /** @description The revision label; null says the set has none. Either way processing no longer reads it from the title blocks. */
                    revision?: string | null;
                    /** @description The issue date, a real calendar day as YYYY-MM-DD (2013-07-18); null says the set has no known issue date. Either way it replaces the date read from the title blocks, file name or PDF, and re-processing keeps it. */
                    issued_at?: string | null;
                };
            };
        };
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Drawing"];
                };
            };
            400: components["responses"]["invalid_json.validation_error"];
            401: components["responses"]["unauthorized"];
            404: components["responses"]["not_found"];
            413: components["responses"]["payload_too_large"];
            415: components["responses"]["unsupported_media_type"];
            429: components["responses"]["rate_limited"];
            503: components["responses"]["unavailable"];
        };
    };
    listSheets: {
        parameters: {
            query?: {
                /** @description filter: drawing_id */
                drawing_id?: string;
                /** @description filter: project_id */
                project_id?: string;
                /** @description filter: discipline */
                discipline?: "general" | "hazardous_materials" | "survey" | "geotechnical" | "civil" | "landscape" | "structural" | "architectural" | "interiors" | "equipment" | "fire_protection" | "plumbing" | "process" | "mechanical" | "electrical" | "distributed_energy" | "telecommunications" | "resource" | "other" | "contractor" | "operations" | "unknown";
                /** @description filter: sheet_number (exact match) */
                sheet_number?: string;
                /** @description only records created strictly after (ISO 8601) */
                created_after?: string;
                /** @description only records created strictly before (ISO 8601) */
                created_before?: string;
                /** @description page size, 1 to 100 (larger values are clamped to 100); overrides the cursor's */
                limit?: number;
                /** @description opaque cursor from _meta.next or _meta.prev; it remembers the filters and limit */
                cursor?: string;
                /** @description Comma-separated fields to inline next to their _id (dots nest, at most 3 levels): drawing, drawing.file, drawing.file.project, drawing.project, drawing.job, drawing.job.parent, drawing.job.project, project */
                expand?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: components["schemas"]["Sheet"][];
                        _meta: components["schemas"]["ListMeta"];
                    };
                };
            };
            400: components["responses"]["expand_too_deep.invalid_cursor.invalid_expand.invalid_parameter"];
            401: components["responses"]["unauthorized"];
            404: components["responses"]["not_found"];
            429: components["responses"]["rate_limited"];
            503: components["responses"]["unavailable"];
        };
    };
    getSheet: {
        parameters: {
            query?: {
                /** @description Comma-separated fields to inline next to their _id (dots nest, at most 3 levels): drawing, drawing.file, drawing.file.project, drawing.project, drawing.job, drawing.job.parent, drawing.job.project, project */
                expand?: string;
            };
            header?: never;
            path: {
                /** @description sht_ id */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Sheet"];
                };
            };
            400: components["responses"]["expand_too_deep.invalid_expand.invalid_parameter"];
            401: components["responses"]["unauthorized"];
            404: components["responses"]["not_found"];
            429: components["responses"]["rate_limited"];
            503: components["responses"]["unavailable"];
        };
    };
    updateSheet: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description sht_ id */
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    sheet_number?: string;
                    title?: string;
                    /** @enum {string} */
                    discipline?: "general" | "hazardous_materials" | "survey" | "geotechnical" | "civil" | "landscape" | "structural" | "architectural" | "interiors" | "equipment" | "fire_protection" | "plumbing" | "process" | "mechanical" | "electrical" | "distributed_energy" | "telecommunications" | "resource" | "other" | "contractor" | "operations" | "unknown";
                };
            };
        };
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Sheet"];
                };
            };
            400: components["responses"]["invalid_json.validation_error"];
            401: components["responses"]["unauthorized"];
            404: components["responses"]["not_found"];
            413: components["responses"]["payload_too_large"];
            415: components["responses"]["unsupported_media_type"];
            429: components["responses"]["rate_limited"];
            503: components["responses"]["unavailable"];
        };
    };
    listBlocks: {
        parameters: {
            query?: {
                /** @description filter: sheet_id */
                sheet_id?: string;
                /** @description filter: type */
                type?: "Sheet" | "Plan" | "Elevation" | "Section" | "Detail" | "Schedule" | "Legend" | "Notes" | "KeyPlan" | "TitleBlock" | "Diagram" | "Other";
                /** @description only records created strictly after (ISO 8601) */
                created_after?: string;
                /** @description only records created strictly before (ISO 8601) */
                created_before?: string;
                /** @description page size, 1 to 100 (larger values are clamped to 100); overrides the cursor's */
                limit?: number;
                /** @description opaque cursor from _meta.next or _meta.prev; it remembers the filters and limit */
                cursor?: string;
                /** @description Comma-separated fields to inline next to their _id (dots nest, at most 3 levels): sheet, sheet.drawing, sheet.drawing.file, sheet.drawing.project, sheet.drawing.job, sheet.project, drawing, drawing.file, drawing.file.project, drawing.project, drawing.job, drawing.job.parent, drawing.job.project, project */
                expand?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: components["schemas"]["Block"][];
                        _meta: components["schemas"]["ListMeta"];
                    };
                };
            };
            400: components["responses"]["expand_too_deep.invalid_cursor.invalid_expand.invalid_parameter"];
            401: components["responses"]["unauthorized"];
            404: components["responses"]["not_found"];
            429: components["responses"]["rate_limited"];
            503: components["responses"]["unavailable"];
        };
    };
    getBlock: {
        parameters: {
            query?: {
                /** @description Comma-separated fields to inline next to their _id (dots nest, at most 3 levels): sheet, sheet.drawing, sheet.drawing.file, sheet.drawing.project, sheet.drawing.job, sheet.project, drawing, drawing.file, drawing.file.project, drawing.project, drawing.job, drawing.job.parent, drawing.job.project, project */
                expand?: string;
            };
            header?: never;
            path: {
                /** @description blk_ id */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Block"];
                };
            };
            400: components["responses"]["expand_too_deep.invalid_expand.invalid_parameter"];
            401: components["responses"]["unauthorized"];
            404: components["responses"]["not_found"];
            429: components["responses"]["rate_limited"];
            503: components["responses"]["unavailable"];
        };
    };
    updateBlock: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description blk_ id */
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @enum {string} */
                    type?: "Plan" | "Elevation" | "Section" | "Detail" | "Schedule" | "Legend" | "Notes" | "KeyPlan" | "TitleBlock" | "Diagram" | "Other";
                    title?: string | null;
                    description?: string | null;
                };
            };
        };
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Block"];
                };
            };
            400: components["responses"]["invalid_json.validation_error"];
            401: components["responses"]["unauthorized"];
            404: components["responses"]["not_found"];
            413: components["responses"]["payload_too_large"];
            415: components["responses"]["unsupported_media_type"];
            429: components["responses"]["rate_limited"];
            503: components["responses"]["unavailable"];
        };
    };
    listOverlays: {
        parameters: {
            query?: {
                /** @description filter: project_id */
                project_id?: string;
                /** @description filter: job_id */
                job_id?: string;
                /** @description filter: drawing_id */
                drawing_id?: string;
                /** @description filter: has_changes */
                has_changes?: boolean;
                /** @description only records created strictly after (ISO 8601) */
                created_after?: string;
                /** @description only records created strictly before (ISO 8601) */
                created_before?: string;
                /** @description page size, 1 to 100 (larger values are clamped to 100); overrides the cursor's */
                limit?: number;
                /** @description opaque cursor from _meta.next or _meta.prev; it remembers the filters and limit */
                cursor?: string;
                /** @description Comma-separated fields to inline next to their _id (dots nest, at most 3 levels): block_a, block_a.sheet, block_a.sheet.drawing, block_a.sheet.project, block_a.drawing, block_a.drawing.file, block_a.drawing.project, block_a.drawing.job, block_a.project, block_b, block_b.sheet, block_b.sheet.drawing, block_b.sheet.project, block_b.drawing, block_b.drawing.file, block_b.drawing.project, block_b.drawing.job, block_b.project, job, job.parent, job.parent.parent, job.parent.project, job.project, project */
                expand?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: components["schemas"]["Overlay"][];
                        _meta: components["schemas"]["ListMeta"];
                    };
                };
            };
            400: components["responses"]["expand_too_deep.invalid_cursor.invalid_expand.invalid_parameter"];
            401: components["responses"]["unauthorized"];
            404: components["responses"]["not_found"];
            429: components["responses"]["rate_limited"];
            503: components["responses"]["unavailable"];
        };
    };
    getOverlay: {
        parameters: {
            query?: {
                /** @description Comma-separated fields to inline next to their _id (dots nest, at most 3 levels): block_a, block_a.sheet, block_a.sheet.drawing, block_a.sheet.project, block_a.drawing, block_a.drawing.file, block_a.drawing.project, block_a.drawing.job, block_a.project, block_b, block_b.sheet, block_b.sheet.drawing, block_b.sheet.project, block_b.drawing, block_b.drawing.file, block_b.drawing.project, block_b.drawing.job, block_b.project, job, job.parent, job.parent.parent, job.parent.project, job.project, project */
                expand?: string;
            };
            header?: never;
            path: {
                /** @description ovl_ id */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Overlay"];
                };
            };
            400: components["responses"]["expand_too_deep.invalid_expand.invalid_parameter"];
            401: components["responses"]["unauthorized"];
            404: components["responses"]["not_found"];
            429: components["responses"]["rate_limited"];
            503: components["responses"]["unavailable"];
        };
    };
    deleteOverlay: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description ovl_ id */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Deleted; no body */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["invalid_json"];
            401: components["responses"]["unauthorized"];
            404: components["responses"]["not_found"];
            413: components["responses"]["payload_too_large"];
            415: components["responses"]["unsupported_media_type"];
            429: components["responses"]["rate_limited"];
            503: components["responses"]["unavailable"];
        };
    };
    listChanges: {
        parameters: {
            query?: {
                /** @description filter: overlay_id */
                overlay_id?: string;
                /** @description filter: project_id */
                project_id?: string;
                /** @description filter: kind */
                kind?: "added" | "removed" | "modified" | "moved";
                /** @description filter: category */
                category?: "geometry" | "text" | "dimension" | "annotation" | "title_block" | "fill" | "style" | "noise";
                /** @description filter: review_status */
                review_status?: "open" | "accepted" | "rejected" | "flagged";
                /** @description only records created strictly after (ISO 8601) */
                created_after?: string;
                /** @description only records created strictly before (ISO 8601) */
                created_before?: string;
                /** @description page size, 1 to 100 (larger values are clamped to 100); overrides the cursor's */
                limit?: number;
                /** @description opaque cursor from _meta.next or _meta.prev; it remembers the filters and limit */
                cursor?: string;
                /** @description Comma-separated fields to inline next to their _id (dots nest, at most 3 levels): overlay, overlay.block_a, overlay.block_a.sheet, overlay.block_a.drawing, overlay.block_a.project, overlay.block_b, overlay.block_b.sheet, overlay.block_b.drawing, overlay.block_b.project, overlay.job, overlay.job.parent, overlay.job.project, overlay.project, project */
                expand?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: components["schemas"]["Change"][];
                        _meta: components["schemas"]["ListMeta"];
                    };
                };
            };
            400: components["responses"]["expand_too_deep.invalid_cursor.invalid_expand.invalid_parameter"];
            401: components["responses"]["unauthorized"];
            404: components["responses"]["not_found"];
            429: components["responses"]["rate_limited"];
            503: components["responses"]["unavailable"];
        };
    };
    getChange: {
        parameters: {
            query?: {
                /** @description Comma-separated fields to inline next to their _id (dots nest, at most 3 levels): overlay, overlay.block_a, overlay.block_a.sheet, overlay.block_a.drawing, overlay.block_a.project, overlay.block_b, overlay.block_b.sheet, overlay.block_b.drawing, overlay.block_b.project, overlay.job, overlay.job.parent, overlay.job.project, overlay.project, project */
                expand?: string;
            };
            header?: never;
            path: {
                /** @description chg_ id */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Change"];
                };
            };
            400: components["responses"]["expand_too_deep.invalid_expand.invalid_parameter"];
            401: components["responses"]["unauthorized"];
            404: components["responses"]["not_found"];
            429: components["responses"]["rate_limited"];
            503: components["responses"]["unavailable"];
        };
    };
    updateChange: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description chg_ id */
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @enum {string} */
                    review_status?: "open" | "accepted" | "rejected" | "flagged";
                    note?: string | null;
                };
            };
        };
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Change"];
                };
            };
            400: components["responses"]["invalid_json.validation_error"];
            401: components["responses"]["unauthorized"];
            404: components["responses"]["not_found"];
            413: components["responses"]["payload_too_large"];
            415: components["responses"]["unsupported_media_type"];
            429: components["responses"]["rate_limited"];
            503: components["responses"]["unavailable"];
        };
    };
    listSymbols: {
        parameters: {
            query?: {
                /** @description filter: project_id */
                project_id?: string;
                /** @description filter: job_id */
                job_id?: string;
                /** @description filter: sheet_id */
                sheet_id?: string;
                /** @description filter: block_id */
                block_id?: string;
                /** @description filter: label (exact match) */
                label?: string;
                /** @description only records created strictly after (ISO 8601) */
                created_after?: string;
                /** @description only records created strictly before (ISO 8601) */
                created_before?: string;
                /** @description page size, 1 to 100 (larger values are clamped to 100); overrides the cursor's */
                limit?: number;
                /** @description opaque cursor from _meta.next or _meta.prev; it remembers the filters and limit */
                cursor?: string;
                /** @description Comma-separated fields to inline next to their _id (dots nest, at most 3 levels): sheet, sheet.drawing, sheet.drawing.file, sheet.drawing.project, sheet.drawing.job, sheet.project, block, block.sheet, block.sheet.drawing, block.sheet.project, block.drawing, block.drawing.file, block.drawing.project, block.drawing.job, block.project, job, job.parent, job.parent.parent, job.parent.project, job.project, project */
                expand?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: components["schemas"]["Symbol"][];
                        _meta: components["schemas"]["ListMeta"];
                    };
                };
            };
            400: components["responses"]["expand_too_deep.invalid_cursor.invalid_expand.invalid_parameter"];
            401: components["responses"]["unauthorized"];
            404: components["responses"]["not_found"];
            429: components["responses"]["rate_limited"];
            503: components["responses"]["unavailable"];
        };
    };
    getSymbol: {
        parameters: {
            query?: {
                /** @description Comma-separated fields to inline next to their _id (dots nest, at most 3 levels): sheet, sheet.drawing, sheet.drawing.file, sheet.drawing.project, sheet.drawing.job, sheet.project, block, block.sheet, block.sheet.drawing, block.sheet.project, block.drawing, block.drawing.file, block.drawing.project, block.drawing.job, block.project, job, job.parent, job.parent.parent, job.parent.project, job.project, project */
                expand?: string;
            };
            header?: never;
            path: {
                /** @description sym_ id */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Symbol"];
                };
            };
            400: components["responses"]["expand_too_deep.invalid_expand.invalid_parameter"];
            401: components["responses"]["unauthorized"];
            404: components["responses"]["not_found"];
            429: components["responses"]["rate_limited"];
            503: components["responses"]["unavailable"];
        };
    };
    listJobs: {
        parameters: {
            query?: {
                /** @description filter: project_id */
                project_id?: string;
                /** @description filter: status */
                status?: "Queued" | "Started" | "Completed" | "Failed" | "Canceled";
                /** @description filter: type */
                type?: "process" | "compare" | "analyze" | "parse" | "export";
                /** @description filter: target_type */
                target_type?: "drawing" | "sheet" | "block" | "overlay";
                /** @description filter: target_id (exact match) */
                target_id?: string;
                /** @description filter: parent_id */
                parent_id?: string;
                /** @description only records created strictly after (ISO 8601) */
                created_after?: string;
                /** @description only records created strictly before (ISO 8601) */
                created_before?: string;
                /** @description page size, 1 to 100 (larger values are clamped to 100); overrides the cursor's */
                limit?: number;
                /** @description opaque cursor from _meta.next or _meta.prev; it remembers the filters and limit */
                cursor?: string;
                /** @description Comma-separated fields to inline next to their _id (dots nest, at most 3 levels): parent, parent.parent, parent.parent.parent, parent.parent.project, parent.project, project */
                expand?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: components["schemas"]["Job"][];
                        _meta: components["schemas"]["ListMeta"];
                    };
                };
            };
            400: components["responses"]["expand_too_deep.invalid_cursor.invalid_expand.invalid_parameter"];
            401: components["responses"]["unauthorized"];
            404: components["responses"]["not_found"];
            429: components["responses"]["rate_limited"];
            503: components["responses"]["unavailable"];
        };
    };
    getJob: {
        parameters: {
            query?: {
                /** @description Comma-separated fields to inline next to their _id (dots nest, at most 3 levels): parent, parent.parent, parent.parent.parent, parent.parent.project, parent.project, project */
                expand?: string;
            };
            header?: never;
            path: {
                /** @description job_ id */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Job"];
                };
            };
            400: components["responses"]["expand_too_deep.invalid_expand.invalid_parameter"];
            401: components["responses"]["unauthorized"];
            404: components["responses"]["not_found"];
            429: components["responses"]["rate_limited"];
            503: components["responses"]["unavailable"];
        };
    };
    listFiles: {
        parameters: {
            query: {
                /** @description the project (required unless a cursor is given) */
                project_id: string;
                /** @description filter: MIME type */
                content_type?: "application/pdf" | "image/png" | "image/jpeg" | "image/tiff";
                /** @description page size, 1 to 100 (larger values are clamped to 100); overrides the cursor's */
                limit?: number;
                /** @description opaque cursor from _meta.next or _meta.prev; it remembers the filters and limit */
                cursor?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: components["schemas"]["File"][];
                        _meta: components["schemas"]["ListMeta"];
                    };
                };
            };
            400: components["responses"]["invalid_cursor.invalid_parameter.missing_parameter"];
            401: components["responses"]["unauthorized"];
            404: components["responses"]["not_found"];
            429: components["responses"]["rate_limited"];
            503: components["responses"]["unavailable"];
        };
    };
    createFile: {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes the POST safe to retry for 24 hours: a repeat with the same key returns the original status and body (Idempotency-Status: hit) and creates nothing; the same key with another method, route or body is 409 idempotency_key_conflict. A UUID v4 is recommended. */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @description prj_ id */
                    project_id: string;
                    filename: string;
                    /** @enum {string} */
                    content_type: "application/pdf" | "image/png" | "image/jpeg" | "image/tiff";
                    size_bytes?: number;
                };
            };
        };
        responses: {
            /** @description The pending file with its upload URL; Location names it */
            201: {
                headers: {
                    /** @description Path of the new record, or of the job: /v1/jobs/<id> */
                    Location?: string;
                    /** @description With an Idempotency-Key: miss on the first request, hit on a replay */
                    "Idempotency-Status"?: "miss" | "hit";
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["FileCreated"];
                };
            };
            400: components["responses"]["invalid_idempotency_key.invalid_json.validation_error"];
            401: components["responses"]["unauthorized"];
            404: components["responses"]["not_found"];
            409: components["responses"]["idempotency_key_conflict"];
            413: components["responses"]["payload_too_large"];
            415: components["responses"]["unsupported_media_type"];
            429: components["responses"]["rate_limited"];
            503: components["responses"]["unavailable"];
        };
    };
    uploadFileContent: {
        parameters: {
            query: {
                /** @description Unix seconds; part of the signed URL */
                expires: string;
                /** @description base64url HMAC-SHA256 over method, path and expiry; part of the signed URL */
                signature: string;
            };
            header?: never;
            path: {
                /** @description fil_ id */
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/pdf": Blob;
                "image/png": Blob;
                "image/jpeg": Blob;
                "image/tiff": Blob;
            };
        };
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["File"];
                };
            };
            400: components["responses"]["validation_error"];
            403: components["responses"]["invalid_signature"];
            404: components["responses"]["not_found"];
            409: components["responses"]["conflict"];
            413: components["responses"]["payload_too_large"];
            415: components["responses"]["unsupported_media_type"];
            503: components["responses"]["unavailable"];
        };
    };
    getFile: {
        parameters: {
            query?: {
                /** @description project: inline the project */
                expand?: string;
            };
            header?: never;
            path: {
                /** @description fil_ id */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["File"];
                };
            };
            400: components["responses"]["expand_too_deep.invalid_expand"];
            401: components["responses"]["unauthorized"];
            404: components["responses"]["not_found"];
            429: components["responses"]["rate_limited"];
            503: components["responses"]["unavailable"];
        };
    };
    deleteFile: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description fil_ id */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Deleted; no body */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["invalid_json"];
            401: components["responses"]["unauthorized"];
            404: components["responses"]["not_found"];
            409: components["responses"]["conflict"];
            413: components["responses"]["payload_too_large"];
            415: components["responses"]["unsupported_media_type"];
            429: components["responses"]["rate_limited"];
            503: components["responses"]["unavailable"];
        };
    };
    downloadBlob: {
        parameters: {
            query: {
                /** @description Overlay images: colorblind selects the colour-blind-safe rendering (not covered by the signature) */
                palette?: "standard" | "colorblind";
                /** @description Unix seconds; part of the signed URL */
                expires: string;
                /** @description base64url HMAC-SHA256 over method, path and expiry; part of the signed URL */
                signature: string;
            };
            header?: never;
            path: {
                /** @description The object key: the rest of the path of a *_uri, slashes included. Follow the URI as given rather than building it. */
                key: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The bytes, with their Content-Type */
            200: {
                headers: {
                    /** @description strong, from the SHA-256 of the bytes */
                    ETag?: string;
                    /** @description private, max-age=3600, immutable */
                    "Cache-Control"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "*/*": Blob;
                };
            };
            /** @description One byte range (Range: bytes=a-b), with Content-Range */
            206: {
                headers: {
                    /** @description strong, from the SHA-256 of the bytes */
                    ETag?: string;
                    /** @description private, max-age=3600, immutable */
                    "Cache-Control"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "*/*": Blob;
                };
            };
            /** @description Not modified (If-None-Match or If-Modified-Since) */
            304: {
                headers: {
                    /** @description strong, from the SHA-256 of the bytes */
                    ETag?: string;
                    /** @description private, max-age=3600, immutable */
                    "Cache-Control"?: string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["invalid_parameter"];
            403: components["responses"]["invalid_signature"];
            404: components["responses"]["not_found"];
            /** @description The range starts at or beyond the end; Content-Range: bytes *\/<size> */
            416: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            503: components["responses"]["unavailable"];
        };
    };
    headBlob: {
        parameters: {
            query: {
                /** @description Overlay images: colorblind selects the colour-blind-safe rendering (not covered by the signature) */
                palette?: "standard" | "colorblind";
                /** @description Unix seconds; part of the signed URL */
                expires: string;
                /** @description base64url HMAC-SHA256 over method, path and expiry; part of the signed URL */
                signature: string;
            };
            header?: never;
            path: {
                /** @description The object key: the rest of the path of a *_uri, slashes included. Follow the URI as given rather than building it. */
                key: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The bytes, with their Content-Type (headers only) */
            200: {
                headers: {
                    /** @description strong, from the SHA-256 of the bytes */
                    ETag?: string;
                    /** @description private, max-age=3600, immutable */
                    "Cache-Control"?: string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description One byte range (Range: bytes=a-b), with Content-Range (headers only) */
            206: {
                headers: {
                    /** @description strong, from the SHA-256 of the bytes */
                    ETag?: string;
                    /** @description private, max-age=3600, immutable */
                    "Cache-Control"?: string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Not modified (If-None-Match or If-Modified-Since) */
            304: {
                headers: {
                    /** @description strong, from the SHA-256 of the bytes */
                    ETag?: string;
                    /** @description private, max-age=3600, immutable */
                    "Cache-Control"?: string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["invalid_parameter"];
            403: components["responses"]["invalid_signature"];
            404: components["responses"]["not_found"];
            /** @description The range starts at or beyond the end; Content-Range: bytes *\/<size> */
            416: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            503: components["responses"]["unavailable"];
        };
    };
    cancelJob: {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes the POST safe to retry for 24 hours: a repeat with the same key returns the original status and body (Idempotency-Status: hit) and creates nothing; the same key with another method, route or body is 409 idempotency_key_conflict. A UUID v4 is recommended. */
                "Idempotency-Key"?: string;
            };
            path: {
                /** @description job_ id */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Job"];
                };
            };
            400: components["responses"]["invalid_idempotency_key.invalid_json"];
            401: components["responses"]["unauthorized"];
            404: components["responses"]["not_found"];
            409: components["responses"]["conflict.idempotency_key_conflict"];
            413: components["responses"]["payload_too_large"];
            415: components["responses"]["unsupported_media_type"];
            429: components["responses"]["rate_limited"];
            503: components["responses"]["unavailable"];
        };
    };
    streamJobEvents: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description job_ id */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A text/event-stream of `event: job` messages whose `data` is the Job object (JSON), the first at once, then one per change; the stream ends after a terminal status. Comment lines keep the connection alive. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/event-stream": string;
                };
            };
            401: components["responses"]["unauthorized"];
            404: components["responses"]["not_found"];
            429: components["responses"]["rate_limited"];
            503: components["responses"]["unavailable"];
        };
    };
    listWebhooks: {
        parameters: {
            query?: {
                /** @description only records created strictly after (ISO 8601) */
                created_after?: string;
                /** @description only records created strictly before (ISO 8601) */
                created_before?: string;
                /** @description page size, 1 to 100 (larger values are clamped to 100); overrides the cursor's */
                limit?: number;
                /** @description opaque cursor from _meta.next or _meta.prev; it remembers the filters and limit */
                cursor?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: components["schemas"]["Webhook"][];
                        _meta: components["schemas"]["ListMeta"];
                    };
                };
            };
            400: components["responses"]["expand_too_deep.invalid_cursor.invalid_expand.invalid_parameter"];
            401: components["responses"]["unauthorized"];
            429: components["responses"]["rate_limited"];
            503: components["responses"]["unavailable"];
        };
    };
    createWebhook: {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes the POST safe to retry for 24 hours: a repeat with the same key returns the original status and body (Idempotency-Status: hit) and creates nothing; the same key with another method, route or body is 409 idempotency_key_conflict. A UUID v4 is recommended. */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        /** @description Each event is POSTed as JSON `{id, type, created_at, data}` (`data`: the resource as GET returns it, without signed URLs — for changes.analyzed `{overlay_id, project_id, job_id, change_count, overlay}`) with the headers `Webhook-Id` (the event id, the same on every retry: deduplicate on it), `Webhook-Timestamp` (unix seconds of this attempt) and `Webhook-Signature: v1,<base64 HMAC-SHA256(key, "<Webhook-Id>.<Webhook-Timestamp>.<raw body>")>` where key is the base64-decoded part of the secret after `whsec_` (the Standard Webhooks scheme). A 2xx answer within 10 seconds is a delivery; anything else (redirects are not followed) is retried with exponential backoff and jitter (30 s, 1 min, 2 min, … capped at 2 h) until 24 hours after the event, then recorded as failed. Delivery is at least once: events come from a persisted outbox written with the change they report and survive restarts. */
        requestBody: {
            content: {
                "application/json": {
                    /**
                     * Format: uri
                     * @description Where events are POSTed. https:// to any host (receivers on private networks are allowed: the URL is configuration of your own organization); plain http:// only to 127.0.0.1, [::1] or localhost, for local tools. No credentials or fragment.
                     */
                    url: string;
                    /** @description Event types to receive (duplicates are ignored) */
                    events: ("drawing.ready" | "drawing.failed" | "job.completed" | "job.failed" | "job.canceled" | "overlay.created" | "changes.analyzed")[];
                };
            };
        };
        responses: {
            /** @description The webhook with its secret; Location names it */
            201: {
                headers: {
                    /** @description Path of the new record, or of the job: /v1/jobs/<id> */
                    Location?: string;
                    /** @description With an Idempotency-Key: miss on the first request, hit on a replay */
                    "Idempotency-Status"?: "miss" | "hit";
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookCreated"];
                };
            };
            400: components["responses"]["invalid_idempotency_key.invalid_json.validation_error"];
            401: components["responses"]["unauthorized"];
            409: components["responses"]["idempotency_key_conflict"];
            413: components["responses"]["payload_too_large"];
            415: components["responses"]["unsupported_media_type"];
            429: components["responses"]["rate_limited"];
            503: components["responses"]["unavailable"];
        };
    };
    getWebhook: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description whk_ id */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Webhook"];
                };
            };
            400: components["responses"]["expand_too_deep.invalid_expand.invalid_parameter"];
            401: components["responses"]["unauthorized"];
            404: components["responses"]["not_found"];
            429: components["responses"]["rate_limited"];
            503: components["responses"]["unavailable"];
        };
    };
    deleteWebhook: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description whk_ id */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Deleted; no body */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["invalid_json"];
            401: components["responses"]["unauthorized"];
            404: components["responses"]["not_found"];
            413: components["responses"]["payload_too_large"];
            415: components["responses"]["unsupported_media_type"];
            429: components["responses"]["rate_limited"];
            503: components["responses"]["unavailable"];
        };
    };
    listWebhookDeliveries: {
        parameters: {
            query?: {
                /** @description filter: status */
                status?: "pending" | "delivered" | "failed";
                /** @description filter: type */
                type?: "drawing.ready" | "drawing.failed" | "job.completed" | "job.failed" | "job.canceled" | "overlay.created" | "changes.analyzed";
                /** @description filter: event_id (exact match) */
                event_id?: string;
                /** @description only records created strictly after (ISO 8601) */
                created_after?: string;
                /** @description only records created strictly before (ISO 8601) */
                created_before?: string;
                /** @description page size, 1 to 100 (larger values are clamped to 100); overrides the cursor's */
                limit?: number;
                /** @description opaque cursor from _meta.next or _meta.prev; it remembers the filters and limit */
                cursor?: string;
                /** @description Comma-separated fields to inline next to their _id (dots nest, at most 3 levels): webhook */
                expand?: string;
            };
            header?: never;
            path: {
                /** @description whk_ id */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: components["schemas"]["WebhookDelivery"][];
                        _meta: components["schemas"]["ListMeta"];
                    };
                };
            };
            400: components["responses"]["expand_too_deep.invalid_cursor.invalid_expand.invalid_parameter"];
            401: components["responses"]["unauthorized"];
            404: components["responses"]["not_found"];
            429: components["responses"]["rate_limited"];
            503: components["responses"]["unavailable"];
        };
    };
    compareDrawing: {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes the POST safe to retry for 24 hours: a repeat with the same key returns the original status and body (Idempotency-Status: hit) and creates nothing; the same key with another method, route or body is 409 idempotency_key_conflict. A UUID v4 is recommended. */
                "Idempotency-Key"?: string;
            };
            path: {
                /** @description drw_ id */
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @description drw_ id of the OLDER revision; the path id is the newer one */
                    compare_to: string;
                    /** @description also run change detection on every overlay (1 more credit per overlay) */
                    analyze?: boolean;
                };
            };
        };
        responses: {
            /** @description The comparison job, Queued; Location names it */
            202: {
                headers: {
                    /** @description Path of the new record, or of the job: /v1/jobs/<id> */
                    Location?: string;
                    /** @description With an Idempotency-Key: miss on the first request, hit on a replay */
                    "Idempotency-Status"?: "miss" | "hit";
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["JobAccepted"];
                };
            };
            400: components["responses"]["invalid_idempotency_key.invalid_json.validation_error"];
            401: components["responses"]["unauthorized"];
            402: components["responses"]["insufficient_credits"];
            404: components["responses"]["not_found"];
            409: components["responses"]["conflict.idempotency_key_conflict"];
            413: components["responses"]["payload_too_large"];
            415: components["responses"]["unsupported_media_type"];
            429: components["responses"]["rate_limited"];
            503: components["responses"]["unavailable"];
        };
    };
    compareRevisions: {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes the POST safe to retry for 24 hours: a repeat with the same key returns the original status and body (Idempotency-Status: hit) and creates nothing; the same key with another method, route or body is 409 idempotency_key_conflict. A UUID v4 is recommended. */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @description the older revision: drw_, sht_ or blk_ id matching type */
                    old_id: string;
                    /** @description the newer revision: drw_, sht_ or blk_ id matching type */
                    new_id: string;
                    /** @enum {string} */
                    type: "Drawing" | "Sheet" | "Block";
                    analyze?: boolean;
                };
            };
        };
        responses: {
            /** @description The comparison job, Queued; Location names it */
            202: {
                headers: {
                    /** @description Path of the new record, or of the job: /v1/jobs/<id> */
                    Location?: string;
                    /** @description With an Idempotency-Key: miss on the first request, hit on a replay */
                    "Idempotency-Status"?: "miss" | "hit";
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["JobAccepted"];
                };
            };
            400: components["responses"]["invalid_idempotency_key.invalid_json.validation_error"];
            401: components["responses"]["unauthorized"];
            402: components["responses"]["insufficient_credits"];
            404: components["responses"]["not_found"];
            409: components["responses"]["conflict.idempotency_key_conflict"];
            413: components["responses"]["payload_too_large"];
            415: components["responses"]["unsupported_media_type"];
            429: components["responses"]["rate_limited"];
            503: components["responses"]["unavailable"];
        };
    };
    analyzeOverlay: {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes the POST safe to retry for 24 hours: a repeat with the same key returns the original status and body (Idempotency-Status: hit) and creates nothing; the same key with another method, route or body is 409 idempotency_key_conflict. A UUID v4 is recommended. */
                "Idempotency-Key"?: string;
            };
            path: {
                /** @description ovl_ id */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The analysis job, Queued; Location names it */
            202: {
                headers: {
                    /** @description Path of the new record, or of the job: /v1/jobs/<id> */
                    Location?: string;
                    /** @description With an Idempotency-Key: miss on the first request, hit on a replay */
                    "Idempotency-Status"?: "miss" | "hit";
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["JobAccepted"];
                };
            };
            400: components["responses"]["invalid_idempotency_key.invalid_json"];
            401: components["responses"]["unauthorized"];
            402: components["responses"]["insufficient_credits"];
            404: components["responses"]["not_found"];
            409: components["responses"]["idempotency_key_conflict"];
            413: components["responses"]["payload_too_large"];
            415: components["responses"]["unsupported_media_type"];
            429: components["responses"]["rate_limited"];
            503: components["responses"]["unavailable"];
        };
    };
    parseSymbols: {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes the POST safe to retry for 24 hours: a repeat with the same key returns the original status and body (Idempotency-Status: hit) and creates nothing; the same key with another method, route or body is 409 idempotency_key_conflict. A UUID v4 is recommended. */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @description drw_ (every sheet), sht_ or blk_ id to search */
                    target_id: string;
                    templates: {
                        /** @description name the instances get (several templates may share one) */
                        label: string;
                        /** @description sht_ or blk_ id whose image shows the symbol */
                        source_id: string;
                        /** @description Crop in pixels of the source sheet or block image, origin top-left */
                        bbox: {
                            x: number;
                            y: number;
                            width: number;
                            height: number;
                        };
                    }[];
                    /** @description Minimum confidence (normalized cross-correlation of ink, 0–1) an instance needs. Default 0.6: exact copies score ~1, instances with other text inside ~0.75–0.95, instances over tints or crossing linework ~0.55–0.7. */
                    threshold?: number;
                };
            };
        };
        responses: {
            /** @description The parse job, Queued; Location names it */
            202: {
                headers: {
                    /** @description Path of the new record, or of the job: /v1/jobs/<id> */
                    Location?: string;
                    /** @description With an Idempotency-Key: miss on the first request, hit on a replay */
                    "Idempotency-Status"?: "miss" | "hit";
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["JobAccepted"];
                };
            };
            400: components["responses"]["invalid_idempotency_key.invalid_json.validation_error"];
            401: components["responses"]["unauthorized"];
            402: components["responses"]["insufficient_credits"];
            404: components["responses"]["not_found"];
            409: components["responses"]["conflict.idempotency_key_conflict"];
            413: components["responses"]["payload_too_large"];
            415: components["responses"]["unsupported_media_type"];
            429: components["responses"]["rate_limited"];
            503: components["responses"]["unavailable"];
        };
    };
    createExport: {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes the POST safe to retry for 24 hours: a repeat with the same key returns the original status and body (Idempotency-Status: hit) and creates nothing; the same key with another method, route or body is 409 idempotency_key_conflict. A UUID v4 is recommended. */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @description the comparison job (job_ id answered by POST /drawings/{id}/compare or POST /compare), Completed */
                    job_id: string;
                    /**
                     * @description pdf_report: a review report of the whole comparison (cover, summary of every sheet pair, each changed sheet with its numbered changes); clouded_pdf: the newer revision's own PDF, pages untouched, with a revision-cloud annotation per non-noise change; csv: one row per change (UTF-8 with BOM, RFC 4180)
                     * @enum {string}
                     */
                    format: "pdf_report" | "clouded_pdf" | "csv";
                    /** @description export only the changes with one of these review statuses (default: all) */
                    review_status?: ("open" | "accepted" | "rejected" | "flagged")[];
                    /**
                     * @description pdf_report: landscape page size (default letter; tabloid is 11x17)
                     * @enum {string}
                     */
                    page_size?: "letter" | "a4" | "tabloid";
                    /**
                     * @description pdf_report and clouded_pdf: change colours; colorblind uses the colour-blind-safe overlay and cloud colours (default standard)
                     * @enum {string}
                     */
                    palette?: "standard" | "colorblind";
                    /** @description clouded_pdf: a numbered delta tag beside each cloud (default true) */
                    tags?: boolean;
                };
            };
        };
        responses: {
            /** @description The export job, Queued; Location names it */
            202: {
                headers: {
                    /** @description Path of the new record, or of the job: /v1/jobs/<id> */
                    Location?: string;
                    /** @description With an Idempotency-Key: miss on the first request, hit on a replay */
                    "Idempotency-Status"?: "miss" | "hit";
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["JobAccepted"];
                };
            };
            400: components["responses"]["invalid_idempotency_key.invalid_json.validation_error"];
            401: components["responses"]["unauthorized"];
            404: components["responses"]["not_found"];
            409: components["responses"]["conflict.idempotency_key_conflict"];
            413: components["responses"]["payload_too_large"];
            415: components["responses"]["unsupported_media_type"];
            429: components["responses"]["rate_limited"];
            503: components["responses"]["unavailable"];
        };
    };
    getCredits: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Credits"];
                };
            };
            401: components["responses"]["unauthorized"];
            429: components["responses"]["rate_limited"];
            503: components["responses"]["unavailable"];
        };
    };
    listCreditLedger: {
        parameters: {
            query?: {
                /** @description filter: job_id */
                job_id?: string;
                /** @description only records created strictly after (ISO 8601) */
                created_after?: string;
                /** @description only records created strictly before (ISO 8601) */
                created_before?: string;
                /** @description page size, 1 to 100 (larger values are clamped to 100); overrides the cursor's */
                limit?: number;
                /** @description opaque cursor from _meta.next or _meta.prev; it remembers the filters and limit */
                cursor?: string;
                /** @description Comma-separated fields to inline next to their _id (dots nest, at most 3 levels): job, job.parent, job.parent.parent, job.parent.project, job.project */
                expand?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: components["schemas"]["LedgerEntry"][];
                        _meta: components["schemas"]["ListMeta"];
                    };
                };
            };
            400: components["responses"]["expand_too_deep.invalid_cursor.invalid_expand.invalid_parameter"];
            401: components["responses"]["unauthorized"];
            404: components["responses"]["not_found"];
            429: components["responses"]["rate_limited"];
            503: components["responses"]["unavailable"];
        };
    };
    searchProject: {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes the POST safe to retry for 24 hours: a repeat with the same key returns the original status and body (Idempotency-Status: hit) and creates nothing; the same key with another method, route or body is 409 idempotency_key_conflict. A UUID v4 is recommended. */
                "Idempotency-Key"?: string;
            };
            path: {
                /** @description prj_ id */
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @description Words, "quoted phrases" and sheet numbers. Plain text: quotes group words; every other character only separates words (no query operators). A sheet-number-like word is a prefix and matches with or without its separator ("A-10" finds A-101, "S-101" finds S101); the last word is a prefix. */
                    query: string;
                    /**
                     * @description only sheets of this discipline
                     * @enum {string}
                     */
                    discipline?: "general" | "hazardous_materials" | "survey" | "geotechnical" | "civil" | "landscape" | "structural" | "architectural" | "interiors" | "equipment" | "fire_protection" | "plumbing" | "process" | "mechanical" | "electrical" | "distributed_energy" | "telecommunications" | "resource" | "other" | "contractor" | "operations" | "unknown";
                    /** @description drw_ id */
                    drawing_id?: string;
                    /** @description which kinds of record to search (default: all) */
                    types?: ("sheet" | "block" | "text" | "change" | "symbol")[];
                    /** @default 20 */
                    limit?: number;
                };
            };
        };
        responses: {
            /** @description The hits, best first, in one page (`_meta.next` and `prev` are null) */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: components["schemas"]["SearchHit"][];
                        _meta: components["schemas"]["ListMeta"];
                    };
                };
            };
            400: components["responses"]["invalid_idempotency_key.invalid_json.validation_error"];
            401: components["responses"]["unauthorized"];
            404: components["responses"]["not_found"];
            409: components["responses"]["idempotency_key_conflict"];
            413: components["responses"]["payload_too_large"];
            415: components["responses"]["unsupported_media_type"];
            429: components["responses"]["rate_limited"];
            503: components["responses"]["unavailable"];
        };
    };
    askProject: {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes the POST safe to retry for 24 hours: a repeat with the same key returns the original status and body (Idempotency-Status: hit) and creates nothing; the same key with another method, route or body is 409 idempotency_key_conflict. A UUID v4 is recommended. */
                "Idempotency-Key"?: string;
            };
            path: {
                /** @description prj_ id */
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    question: string;
                };
            };
        };
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AskAnswer"];
                };
            };
            400: components["responses"]["invalid_idempotency_key.invalid_json.validation_error"];
            401: components["responses"]["unauthorized"];
            402: components["responses"]["insufficient_credits"];
            404: components["responses"]["not_found"];
            409: components["responses"]["idempotency_key_conflict"];
            413: components["responses"]["payload_too_large"];
            415: components["responses"]["unsupported_media_type"];
            429: components["responses"]["rate_limited"];
            503: components["responses"]["unavailable"];
        };
    };
    getBlobTile: {
        parameters: {
            query: {
                /** @description Overlay images: colorblind selects the colour-blind-safe rendering (not covered by the signature) */
                palette?: "standard" | "colorblind";
                /** @description Unix seconds; part of the signed URL */
                expires: string;
                /** @description base64url HMAC-SHA256 over method, path and expiry; part of the signed URL */
                signature: string;
            };
            header?: never;
            path: {
                /** @description The object key: the rest of the path of a *_uri, slashes included. Follow the URI as given rather than building it. */
                key: string;
                /** @description zoom level; 0 fits the image in one tile */
                z: number;
                /** @description tile column from the left */
                x: number;
                /** @description tile row from the top */
                y: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The bytes, with their Content-Type */
            200: {
                headers: {
                    /** @description strong, from the SHA-256 of the bytes */
                    ETag?: string;
                    /** @description private, max-age=3600, immutable */
                    "Cache-Control"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "image/webp": Blob;
                };
            };
            /** @description One byte range (Range: bytes=a-b), with Content-Range */
            206: {
                headers: {
                    /** @description strong, from the SHA-256 of the bytes */
                    ETag?: string;
                    /** @description private, max-age=3600, immutable */
                    "Cache-Control"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "image/webp": Blob;
                };
            };
            /** @description Not modified (If-None-Match or If-Modified-Since) */
            304: {
                headers: {
                    /** @description strong, from the SHA-256 of the bytes */
                    ETag?: string;
                    /** @description private, max-age=3600, immutable */
                    "Cache-Control"?: string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description `invalid_parameter`: A query parameter is malformed: a bad datetime, a bad boolean, an unknown enum value, or a limit below 1 or not an integer. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @constant */
                        code: "invalid_parameter";
                        /** @enum {integer} */
                        status: 400;
                        instance: string;
                        request_id: string;
                    };
                };
            };
            /** @description `invalid_signature`: The signed URL was altered or has expired. Fetch the resource again for a fresh URL. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @constant */
                        code: "invalid_signature";
                        /** @enum {integer} */
                        status: 403;
                        instance: string;
                        request_id: string;
                    };
                };
            };
            /** @description `not_found`: No such record in this organization, or no such route. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @constant */
                        code: "not_found";
                        /** @enum {integer} */
                        status: 404;
                        instance: string;
                        request_id: string;
                    };
                };
            };
            /** @description The range starts at or beyond the end; Content-Range: bytes *\/<size> */
            416: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description `unavailable`: The service is shutting down or not ready yet. Retry after Retry-After seconds. */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @constant */
                        code: "unavailable";
                        /** @enum {integer} */
                        status: 503;
                        instance: string;
                        request_id: string;
                    };
                };
            };
        };
    };
    getBlobTilesJson: {
        parameters: {
            query: {
                /** @description Overlay images: colorblind selects the colour-blind-safe rendering (not covered by the signature) */
                palette?: "standard" | "colorblind";
                /** @description Unix seconds; part of the signed URL */
                expires: string;
                /** @description base64url HMAC-SHA256 over method, path and expiry; part of the signed URL */
                signature: string;
            };
            header?: never;
            path: {
                /** @description The object key: the rest of the path of a *_uri, slashes included. Follow the URI as given rather than building it. */
                key: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The pyramid */
            200: {
                headers: {
                    /** @description strong, from the body */
                    ETag?: string;
                    /** @description private, max-age=3600, immutable */
                    "Cache-Control"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @description tile edge, px (512); edge tiles are smaller */
                        tile_size: number;
                        /** @description the stored image’s width, px */
                        width: number;
                        /** @description the stored image’s height, px */
                        height: number;
                        /** @description the level at the stored image’s own resolution; level z is scaled 2^(z − native_zoom) */
                        native_zoom: number;
                        /** @description the deepest level: native_zoom + 4 for images of vector PDF pages, native_zoom for scans */
                        max_zoom: number;
                    };
                };
            };
            /** @description Not modified (If-None-Match) */
            304: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description `invalid_parameter`: A query parameter is malformed: a bad datetime, a bad boolean, an unknown enum value, or a limit below 1 or not an integer. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @constant */
                        code: "invalid_parameter";
                        /** @enum {integer} */
                        status: 400;
                        instance: string;
                        request_id: string;
                    };
                };
            };
            /** @description `invalid_signature`: The signed URL was altered or has expired. Fetch the resource again for a fresh URL. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @constant */
                        code: "invalid_signature";
                        /** @enum {integer} */
                        status: 403;
                        instance: string;
                        request_id: string;
                    };
                };
            };
            /** @description `not_found`: No such record in this organization, or no such route. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @constant */
                        code: "not_found";
                        /** @enum {integer} */
                        status: 404;
                        instance: string;
                        request_id: string;
                    };
                };
            };
            /** @description `unavailable`: The service is shutting down or not ready yet. Retry after Retry-After seconds. */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @constant */
                        code: "unavailable";
                        /** @enum {integer} */
                        status: 503;
                        instance: string;
                        request_id: string;
                    };
                };
            };
        };
    };
}
