-- A ledger written by orf before migrations had names (PRAGMA user_version = 4), made with
-- Ledger at commit 76d8794 and dumped with iterdump(); @STORE@ stands for the store path.
BEGIN TRANSACTION;
CREATE TABLE "analyzed_sessions" (
        store TEXT NOT NULL DEFAULT '',
        session_id TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        analyzed_at REAL NOT NULL,
        PRIMARY KEY (store, session_id)
    );
INSERT INTO "analyzed_sessions" VALUES('@STORE@','sess-a','fp-a',1.79612719850491833685e+09);
CREATE TABLE batch_jobs (
        name TEXT PRIMARY KEY,
        model TEXT NOT NULL,
        state TEXT NOT NULL,
        request_keys TEXT NOT NULL,      -- JSON list of cache keys, in request order
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL
    );
INSERT INTO "batch_jobs" VALUES('batches/1','gemini-2.5-flash','running','["k1"]',1.79612719850510048867e+09,1.79612719850510048867e+09);
CREATE TABLE candidates (
        id INTEGER PRIMARY KEY,
        signature TEXT NOT NULL,
        exp_id TEXT,
        domain TEXT,
        title TEXT,
        status TEXT NOT NULL,            -- new | duplicate | related | dropped | rejected
        related_to TEXT,
        reason TEXT,
        sessions TEXT,                   -- JSON list of session ids
        wasted_steps INTEGER DEFAULT 0,
        reinforcements INTEGER DEFAULT 0,
        first_seen REAL NOT NULL,
        last_seen REAL NOT NULL
    );
INSERT INTO "candidates" VALUES(1,'b2:sig','EXP-20260101-0001','python','Old title','new',NULL,NULL,'["sess-a"]',2,0,1.79612719850503921512e+09,1.79612719850503921512e+09);
CREATE TABLE finding_history (
        store TEXT NOT NULL DEFAULT '',
        session_id TEXT NOT NULL,
        ordinal INTEGER NOT NULL,
        signature TEXT NOT NULL,
        kind TEXT NOT NULL,
        wasted_steps INTEGER DEFAULT 0,
        wasted_tokens INTEGER DEFAULT 0,
        wasted_seconds REAL DEFAULT 0,
        PRIMARY KEY (store, session_id, ordinal)
    );
INSERT INTO "finding_history" VALUES('@STORE@','sess-a',0,'b2:sig','rerun_unchanged',2,300,4.0);
CREATE TABLE llm_calls (
        id INTEGER PRIMARY KEY,
        cache_key TEXT NOT NULL,
        model TEXT NOT NULL,
        purpose TEXT NOT NULL,           -- judge | draft | dedupe
        session_id TEXT,
        tokens_in INTEGER DEFAULT 0,
        tokens_out INTEGER DEFAULT 0,
        cost_usd REAL DEFAULT 0,
        latency_ms INTEGER DEFAULT 0,
        status TEXT NOT NULL,            -- ok | failed | cached
        error TEXT,
        response TEXT,
        batch INTEGER DEFAULT 0,
        created_at REAL NOT NULL
    );
INSERT INTO "llm_calls" VALUES(1,'k1','gemini-2.5-flash','judge',NULL,100,10,0.001,0,'ok',NULL,'{"outcome": "trap"}',0,1.79612719850495862958e+09);
CREATE TABLE reinforcements (
        exp_id TEXT NOT NULL,
        session_id TEXT NOT NULL,
        signature TEXT,
        wasted_steps INTEGER DEFAULT 0,
        seen_at REAL NOT NULL,
        PRIMARY KEY (exp_id, session_id)
    );
INSERT INTO "reinforcements" VALUES('EXP-20260101-0001','sess-b','b2:sig',1,2.0);
CREATE TABLE session_history (
        store TEXT NOT NULL DEFAULT '',
        session_id TEXT NOT NULL,
        path TEXT,
        format TEXT,
        agent TEXT,
        model TEXT,
        started_at REAL,                 -- epoch seconds, from the log's own timestamps
        steps INTEGER DEFAULT 0,
        programs TEXT DEFAULT '',        -- space-separated programs the session ran
        recorded_at REAL NOT NULL,
        PRIMARY KEY (store, session_id)
    );
INSERT INTO "session_history" VALUES('@STORE@','sess-a','logs/a.jsonl','codex','codex','gpt-5',1767607200.0,7,'pytest',1.79612719850519537926e+09);
CREATE TABLE "sources" (
        store TEXT NOT NULL DEFAULT '',  -- resolved store path
        path TEXT NOT NULL,
        size INTEGER NOT NULL,
        mtime REAL NOT NULL,
        content_hash TEXT NOT NULL,
        format TEXT,
        status TEXT NOT NULL,
        error TEXT,
        sessions INTEGER DEFAULT 0,
        findings INTEGER DEFAULT 0,
        wasted_steps INTEGER DEFAULT 0,
        processed_at REAL NOT NULL,
        PRIMARY KEY (store, path)
    );
INSERT INTO "sources" VALUES('@STORE@','logs/a.jsonl',10,1.5,'b2:aa','codex','ok',NULL,1,1,2,1796127198.50485);
CREATE TABLE write_intents (
        key TEXT PRIMARY KEY,            -- value_hash(signature, session): one draft, one file
        signature TEXT NOT NULL,
        session_id TEXT,
        payload TEXT NOT NULL,           -- JSON: the draft and its dedupe decision
        state TEXT NOT NULL,             -- pending | done
        exp_id TEXT,
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL
    );
CREATE INDEX llm_calls_key ON llm_calls(cache_key, status);
CREATE INDEX candidates_sig ON candidates(signature);
CREATE INDEX session_history_started ON session_history(store, started_at);
COMMIT;
