-- warren metadata, schema version 4: drives (package drive, drive/pgmeta).
-- A drive is a shared filesystem: one row in drives (its quota, bytes in
-- use, the next inode number) and, per drive, inode rows (a rename moves
-- one row), advisory lock rows and mount leases, each with an expiry on
-- the database's clock. Every write transaction of a drive first locks
-- its drives row, so a drive's writes are serialised across nodes.
CREATE TABLE drives (
    id         text COLLATE "C" PRIMARY KEY,
    tenant     text COLLATE "C" NOT NULL,
    name       text COLLATE "C" NOT NULL,
    quota      bigint NOT NULL CHECK (quota >= 0),
    used       bigint NOT NULL DEFAULT 0,
    next_id    bigint NOT NULL DEFAULT 2,
    sweeps     bigint NOT NULL DEFAULT 0,
    created_at timestamptz NOT NULL,
    UNIQUE (tenant, name)
);

CREATE TABLE drive_entries (
    drive   text COLLATE "C" NOT NULL REFERENCES drives (id) ON DELETE CASCADE,
    id      bigint NOT NULL,
    parent  bigint NOT NULL,
    name    text COLLATE "C" NOT NULL,
    dir     boolean NOT NULL,
    mode    integer NOT NULL,
    size    bigint NOT NULL,
    mtime   timestamptz NOT NULL,
    version bigint NOT NULL,
    chunks  bytea NOT NULL DEFAULT '',
    PRIMARY KEY (drive, id),
    UNIQUE (drive, parent, name)
);

CREATE TABLE drive_locks (
    drive     text COLLATE "C" NOT NULL REFERENCES drives (id) ON DELETE CASCADE,
    inode     bigint NOT NULL,
    owner     text COLLATE "C" NOT NULL,
    exclusive boolean NOT NULL,
    expires   timestamptz NOT NULL,
    PRIMARY KEY (drive, inode, owner)
);

CREATE TABLE drive_mounts (
    drive   text COLLATE "C" NOT NULL REFERENCES drives (id) ON DELETE CASCADE,
    id      text COLLATE "C" NOT NULL,
    expires timestamptz NOT NULL,
    PRIMARY KEY (drive, id)
);

-- The sweep's bookkeeping (drive.Registry.Sweep): stored chunks no entry
-- referred to, since first_seen; doomed while the sweep deletes them.
CREATE TABLE drive_garbage (
    drive      text COLLATE "C" NOT NULL REFERENCES drives (id) ON DELETE CASCADE,
    sum        bytea NOT NULL,
    first_seen timestamptz NOT NULL,
    doomed     boolean NOT NULL DEFAULT false,
    PRIMARY KEY (drive, sum)
);
