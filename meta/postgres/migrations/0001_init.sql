-- warren metadata, schema version 1. Identifiers compare bytewise
-- (COLLATE "C") so every listing orders as the embedded stores do.

CREATE TABLE sandboxes (
    id              text COLLATE "C" PRIMARY KEY,
    tenant          text COLLATE "C" NOT NULL,
    config          jsonb NOT NULL,
    image_digest    text NOT NULL,
    state_ref       text NOT NULL,
    state           text NOT NULL,
    parent          text NOT NULL,
    snapshot        text NOT NULL,
    created_at      timestamptz NOT NULL,
    -- ownership and the committed head (sandbox.Head); only Claim,
    -- Release and Publish write these.
    owner_node      text NOT NULL DEFAULT '',
    owner_epoch     bigint NOT NULL DEFAULT 0 CHECK (owner_epoch >= 0),
    head_generation bigint NOT NULL DEFAULT 0 CHECK (head_generation >= 0),
    head_ref        text NOT NULL DEFAULT '',
    head_commit     text NOT NULL DEFAULT ''
);
CREATE INDEX sandboxes_owner ON sandboxes (owner_node);

CREATE TABLE generations (
    sandbox    text COLLATE "C" NOT NULL REFERENCES sandboxes (id) ON DELETE CASCADE,
    number     bigint NOT NULL CHECK (number > 0),
    ref        text NOT NULL,
    parent     text NOT NULL,
    epoch      bigint NOT NULL,
    commit_id  text NOT NULL UNIQUE,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (sandbox, number)
);

CREATE TABLE snapshots (
    tenant       text COLLATE "C" NOT NULL,
    name         text COLLATE "C" NOT NULL,
    sandbox      text NOT NULL,
    config       jsonb NOT NULL,
    image_digest text NOT NULL,
    state_ref    text NOT NULL,
    created_at   timestamptz NOT NULL,
    PRIMARY KEY (tenant, name)
);

-- API keys by their sha256 (hex), never the key itself.
CREATE TABLE api_keys (
    key_hash   text PRIMARY KEY,
    tenant     text NOT NULL,
    admin      boolean NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE nodes (
    id            text COLLATE "C" PRIMARY KEY,
    boot_id       text NOT NULL,
    address       text NOT NULL,
    lease_expires timestamptz NOT NULL
);

-- In-flight uploads: GC roots until they expire (no foreign key: a
-- sandbox may be deleted while its upload runs).
CREATE TABLE custody (
    upload_id   text COLLATE "C" PRIMARY KEY,
    node        text NOT NULL,
    sandbox     text NOT NULL,
    epoch       bigint NOT NULL,
    object_keys text[] NOT NULL,
    expires     timestamptz NOT NULL
);
CREATE INDEX custody_expires ON custody (expires);
