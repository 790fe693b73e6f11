-- warren metadata, schema version 2: the fleet (docs/fleet.md).

-- What placement reads about a node besides its lease (nodes): how many
-- sandboxes it is sized for, how many it runs, its labels, and whether it
-- is draining. Written by the node with every lease renewal.
CREATE TABLE node_status (
    id        text COLLATE "C" PRIMARY KEY,
    boot_id   text NOT NULL,
    capacity  integer NOT NULL CHECK (capacity > 0),
    load      integer NOT NULL CHECK (load >= 0),
    labels    jsonb NOT NULL DEFAULT '{}',
    draining  boolean NOT NULL DEFAULT false,
    updated   timestamptz NOT NULL DEFAULT now()
);

-- Every change of a sandbox's owner (a claim, a takeover, a release, a
-- delete) tells the nodes' routing caches at once: NOTIFY warren_owner
-- with the sandbox id as the payload. Publish moves only the head columns
-- and does not fire it.
CREATE FUNCTION warren_owner_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        PERFORM pg_notify('warren_owner', OLD.id);
        RETURN OLD;
    END IF;
    IF NEW.owner_node IS DISTINCT FROM OLD.owner_node OR NEW.owner_epoch IS DISTINCT FROM OLD.owner_epoch THEN
        PERFORM pg_notify('warren_owner', NEW.id);
    END IF;
    RETURN NEW;
END $$;

CREATE TRIGGER sandboxes_owner_notify
    AFTER UPDATE OF owner_node, owner_epoch OR DELETE ON sandboxes
    FOR EACH ROW EXECUTE FUNCTION warren_owner_notify();
