-- A state database as syncd 3328eab (schema version 2) wrote it: `sqlite3 state.db .dump`, then its user_version.
-- Outbox states were then prefixes of last_error: row 4 and 10 superseded, row 3 not sent.
-- A fixture of that release: never edit it (StateStoreOutboxStateMigrationTests).
PRAGMA foreign_keys=OFF;
BEGIN TRANSACTION;
CREATE TABLE sources (
    name TEXT PRIMARY KEY,
    url TEXT,
    etag TEXT,
    last_modified TEXT,
    saved_at TEXT,
    last_success TEXT,
    last_attempt TEXT,
    last_error TEXT,
    record_count INTEGER NOT NULL DEFAULT 0,
    snapshot_dirty INTEGER NOT NULL DEFAULT 0,
    retry_state TEXT
, snapshot_size INTEGER, snapshot_inode INTEGER, snapshot_ctime_ns INTEGER, snapshot_hash INTEGER, snapshot_records INTEGER, id_index_stamp TEXT, records_start INTEGER, listing_end INTEGER, pending_rename TEXT, last_error_public TEXT, outbox_stamp INTEGER NOT NULL DEFAULT 0, file_outbox_stamp INTEGER, file_outbox_seq INTEGER, change_seq INTEGER NOT NULL DEFAULT 0, change_floor INTEGER NOT NULL DEFAULT 0);
INSERT INTO sources VALUES('posts','http://h/posts','"e"',NULL,'2026-11-29T10:00:00Z','2026-11-29T10:00:00Z','2026-11-29T10:00:00Z',NULL,3,0,NULL,440,16270022,1796189751234729243,-6612389613107244230,9,'2026-11-29T10:00:00Z|3',118,175,NULL,NULL,18,18,11,12,0);
CREATE TABLE chunks (
    source TEXT NOT NULL,
    seq INTEGER NOT NULL,
    records INTEGER NOT NULL,
    file_bytes INTEGER NOT NULL,
    file_hash INTEGER NOT NULL,
    data BLOB NOT NULL,
    UNIQUE (source, seq)
);
INSERT INTO chunks VALUES('posts',0,3,57,-4924327823727051162,X'0131090e01320d130e7b226964223a322c2276223a307d01330d130e7b226964223a332c2276223a307d');
CREATE TABLE outbox (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    source TEXT NOT NULL,
    record_id TEXT NOT NULL,
    id_is_integer INTEGER NOT NULL DEFAULT 0,
    operation TEXT NOT NULL CHECK (operation IN ('create', 'update', 'delete')),
    body BLOB,
    base_version TEXT,
    created_at TEXT NOT NULL,
    idempotency_key TEXT NOT NULL,
    state TEXT NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'sent', 'parked', 'conflict')),
    attempts INTEGER NOT NULL DEFAULT 0,
    unconfirmed INTEGER NOT NULL DEFAULT 0,
    last_status INTEGER,
    last_error TEXT
, attempt_boot TEXT, attempt_uptime_ms INTEGER, blind_resends INTEGER NOT NULL DEFAULT 0);
INSERT INTO outbox VALUES(1,'posts','fresh',0,'create',X'7b226964223a226672657368222c2274223a226b31227d',NULL,'2026-12-01T10:00:00Z','k1','queued',0,0,NULL,NULL,NULL,NULL,0);
INSERT INTO outbox VALUES(2,'posts','lost',0,'create',X'7b226964223a226c6f7374222c2274223a226b32227d',NULL,'2026-12-01T10:01:00Z','k2','queued',1,0,NULL,'sent; no answer received yet','boot-1',1000,0);
INSERT INTO outbox VALUES(3,'posts','offline',0,'create',X'7b226964223a226f66666c696e65222c2274223a226b33227d',NULL,'2026-12-01T10:02:00Z','k3','queued',1,0,NULL,'not sent: Failed to connect to h port 80: Connection refused','boot-1',1000,0);
INSERT INTO outbox VALUES(4,'posts','bad',0,'update',X'7b226964223a22626164222c2274223a226b34227d',NULL,'2026-12-01T10:03:00Z','k4','parked',1,0,422,'superseded by a newer change; was: HTTP 422 from http://h/posts/bad: title is required','boot-1',1000,0);
INSERT INTO outbox VALUES(5,'posts','bad',0,'update',X'7b226964223a22626164222c2274223a226b35227d',NULL,'2026-12-01T10:04:00Z','k5','queued',0,0,NULL,NULL,NULL,NULL,0);
INSERT INTO outbox VALUES(6,'posts','refused',0,'delete',NULL,NULL,'2026-12-01T10:05:00Z','k6','parked',1,0,403,'HTTP 403 from http://h/posts/refused: not sent: forbidden','boot-1',1000,0);
INSERT INTO outbox VALUES(7,'posts','2',0,'update',X'7b226964223a2232222c2274223a226b37227d',NULL,'2026-12-01T10:06:00Z','k7','sent',1,0,NULL,NULL,'boot-1',1000,0);
INSERT INTO outbox VALUES(8,'posts','3',0,'update',X'7b226964223a2233222c2274223a226b38227d',NULL,'2026-12-01T10:07:00Z','k8','conflict',1,0,412,'HTTP 412 from http://h/posts/3: superseded by a newer change; was: quoted','boot-1',1000,0);
INSERT INTO outbox VALUES(9,'posts','busy',0,'create',X'7b226964223a2262757379222c2274223a226b39227d',NULL,'2026-12-01T10:09:00Z','k9','queued',1,0,503,'HTTP 503 from http://h/posts: not sent: superseded by a newer change; was: busy','boot-1',1000,0);
INSERT INTO outbox VALUES(10,'posts','twice',0,'create',X'7b226964223a227477696365222c2274223a226b3130227d',NULL,'2026-12-01T10:10:00Z','k10','parked',1,0,400,'superseded by a newer change; was: HTTP 400 from http://h/posts: bad','boot-1',1000,0);
INSERT INTO outbox VALUES(11,'posts','twice',0,'update',X'7b226964223a227477696365222c2274223a226b3131227d',NULL,'2026-12-01T10:11:00Z','k11','queued',0,0,NULL,NULL,NULL,NULL,0);
CREATE TABLE conflicts (
    source TEXT NOT NULL,
    record_id TEXT NOT NULL,
    remote_body BLOB,
    remote_version TEXT,
    detected_at TEXT NOT NULL,
    PRIMARY KEY (source, record_id)
);
INSERT INTO conflicts VALUES('posts','3',X'7b226964223a332c2276223a397d','v9','2026-12-01T10:08:00Z');
CREATE TABLE id_index (source TEXT NOT NULL, bucket INTEGER NOT NULL, entries BLOB NOT NULL, PRIMARY KEY (source, bucket));
INSERT INTO id_index VALUES('posts',70,X'000000de9a93cd87');
INSERT INTO id_index VALUES('posts',81,X'000000fedc102674');
INSERT INTO id_index VALUES('posts',133,X'000000f83a4bdb0f');
CREATE TABLE unwritten (source TEXT NOT NULL, record_id TEXT NOT NULL, PRIMARY KEY (source, record_id));
INSERT INTO unwritten VALUES('posts','fresh');
INSERT INTO unwritten VALUES('posts','lost');
INSERT INTO unwritten VALUES('posts','offline');
INSERT INTO unwritten VALUES('posts','bad');
INSERT INTO unwritten VALUES('posts','refused');
INSERT INTO unwritten VALUES('posts','2');
INSERT INTO unwritten VALUES('posts','3');
INSERT INTO unwritten VALUES('posts','busy');
INSERT INTO unwritten VALUES('posts','twice');
CREATE TABLE discarded (
    seq INTEGER PRIMARY KEY,
    source TEXT NOT NULL,
    record_id TEXT NOT NULL,
    id_is_integer INTEGER NOT NULL DEFAULT 0,
    operation TEXT NOT NULL,
    body BLOB,
    base_version TEXT,
    created_at TEXT NOT NULL,
    discarded_at TEXT NOT NULL,
    reason TEXT NOT NULL,
    server_body BLOB,
    server_version TEXT
);
CREATE TABLE change_log (source TEXT NOT NULL, seq INTEGER NOT NULL, id BLOB,
    removed INTEGER NOT NULL DEFAULT 0);
INSERT INTO change_log VALUES('posts',1,X'31',0);
INSERT INTO change_log VALUES('posts',1,X'32',0);
INSERT INTO change_log VALUES('posts',1,X'33',0);
INSERT INTO change_log VALUES('posts',2,X'6672657368',0);
INSERT INTO change_log VALUES('posts',3,X'6c6f7374',0);
INSERT INTO change_log VALUES('posts',4,X'6f66666c696e65',0);
INSERT INTO change_log VALUES('posts',5,X'626164',0);
INSERT INTO change_log VALUES('posts',6,X'626164',0);
INSERT INTO change_log VALUES('posts',7,X'72656675736564',1);
INSERT INTO change_log VALUES('posts',8,X'32',0);
INSERT INTO change_log VALUES('posts',9,X'33',0);
INSERT INTO change_log VALUES('posts',10,X'62757379',0);
INSERT INTO change_log VALUES('posts',11,X'7477696365',0);
INSERT INTO change_log VALUES('posts',12,X'7477696365',0);
DELETE FROM sqlite_sequence;
INSERT INTO sqlite_sequence VALUES('outbox',11);
CREATE INDEX outbox_by_record ON outbox (source, record_id, seq);
CREATE TRIGGER outbox_stamp_insert AFTER INSERT ON outbox BEGIN UPDATE sources SET outbox_stamp = outbox_stamp + 1 WHERE name = NEW.source; END;
CREATE TRIGGER outbox_stamp_update AFTER UPDATE ON outbox WHEN OLD.source IS NOT NEW.source OR OLD.record_id IS NOT NEW.record_id OR OLD.id_is_integer IS NOT NEW.id_is_integer OR OLD.operation IS NOT NEW.operation OR OLD.body IS NOT NEW.body OR OLD.state IS NOT NEW.state OR ((OLD.state = 'parked' OR NEW.state = 'parked') AND OLD.last_error IS NOT NEW.last_error) BEGIN UPDATE sources SET outbox_stamp = outbox_stamp + 1 WHERE name IN (OLD.source, NEW.source); END;
CREATE TRIGGER outbox_stamp_delete AFTER DELETE ON outbox BEGIN UPDATE sources SET outbox_stamp = outbox_stamp + 1 WHERE name = OLD.source; END;
CREATE INDEX change_log_by_seq ON change_log (source, seq);
CREATE TRIGGER change_log_insert AFTER INSERT ON outbox BEGIN INSERT OR IGNORE INTO sources (name) VALUES (NEW.source);
UPDATE sources SET change_seq = change_seq + 1 WHERE name = NEW.source;
INSERT INTO change_log (source, seq, id, removed)
    SELECT NEW.source, change_seq, CAST(NEW.record_id AS BLOB), NEW.operation = 'delete' FROM sources WHERE name = NEW.source;
DELETE FROM change_log WHERE source = NEW.source AND seq <= (SELECT change_seq FROM sources WHERE name = NEW.source) - 1000;
UPDATE sources SET change_floor = max(change_floor, change_seq - 1000) WHERE name = NEW.source; END;
CREATE TRIGGER change_log_update AFTER UPDATE ON outbox WHEN OLD.body IS NOT NEW.body OR OLD.operation IS NOT NEW.operation OR OLD.record_id IS NOT NEW.record_id BEGIN INSERT OR IGNORE INTO sources (name) VALUES (NEW.source);
UPDATE sources SET change_seq = change_seq + 1 WHERE name = NEW.source;
INSERT INTO change_log (source, seq, id, removed)
    SELECT NEW.source, change_seq, CAST(NEW.record_id AS BLOB), NEW.operation = 'delete' FROM sources WHERE name = NEW.source;
DELETE FROM change_log WHERE source = NEW.source AND seq <= (SELECT change_seq FROM sources WHERE name = NEW.source) - 1000;
UPDATE sources SET change_floor = max(change_floor, change_seq - 1000) WHERE name = NEW.source; END;
CREATE TRIGGER change_log_delete AFTER DELETE ON outbox BEGIN INSERT OR IGNORE INTO sources (name) VALUES (OLD.source);
UPDATE sources SET change_seq = change_seq + 1 WHERE name = OLD.source;
INSERT INTO change_log (source, seq, id, removed)
    SELECT OLD.source, change_seq, CAST(OLD.record_id AS BLOB), (OLD.operation = 'create' AND OLD.state != 'sent') OR (OLD.operation = 'delete' AND OLD.state = 'sent') FROM sources WHERE name = OLD.source;
DELETE FROM change_log WHERE source = OLD.source AND seq <= (SELECT change_seq FROM sources WHERE name = OLD.source) - 1000;
UPDATE sources SET change_floor = max(change_floor, change_seq - 1000) WHERE name = OLD.source; END;
PRAGMA user_version = 2;
COMMIT;
