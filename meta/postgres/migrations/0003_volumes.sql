-- warren metadata, schema version 3: volumes (api.Volume; sandbox.VolumeMeta).
-- One row per volume: its quota, its head (the vfs Ref of its last commit
-- and the generation count) and its leases: holder is the sandbox holding
-- it read-write ('' = none), readers those holding it read-only. A lease
-- changes in a transaction that locks the row (UpdateVolume).
CREATE TABLE volumes (
    tenant     text COLLATE "C" NOT NULL,
    name       text COLLATE "C" NOT NULL,
    size       bigint NOT NULL CHECK (size > 0),
    ref        text NOT NULL DEFAULT '',
    generation bigint NOT NULL DEFAULT 0,
    used       bigint NOT NULL DEFAULT 0,
    holder     text NOT NULL DEFAULT '',
    readers    jsonb NOT NULL DEFAULT '[]',
    created_at timestamptz NOT NULL,
    PRIMARY KEY (tenant, name)
);
