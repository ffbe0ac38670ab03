-- Campaigns, their recipients and the suppression list (conventions §25,
-- docs/campaigns.md). Records are kept whole in body (as bbolt keeps them); the columns
-- beside it are what indexes and claims read.

CREATE TABLE campaigns (
	id            text COLLATE "C" PRIMARY KEY,
	workspace_id  text COLLATE "C" NOT NULL,
	agent_id      text COLLATE "C" NOT NULL,
	status        text NOT NULL CHECK (status IN ('scheduled', 'running', 'paused', 'completed', 'canceled')),
	last_claim_at timestamptz,
	body          jsonb NOT NULL
);
CREATE INDEX campaigns_by_workspace ON campaigns (workspace_id, id);
-- The campaigns a claim looks at: those not final.
CREATE INDEX campaigns_open ON campaigns (workspace_id) WHERE status IN ('scheduled', 'running', 'paused');

CREATE TABLE campaign_recipients (
	id           text COLLATE "C" PRIMARY KEY,
	campaign_id  text COLLATE "C" NOT NULL,
	workspace_id text COLLATE "C" NOT NULL,
	state        text NOT NULL,
	next_at      timestamptz,
	lease_until  timestamptz,
	call_id      text COLLATE "C",
	body         jsonb NOT NULL
);
CREATE INDEX campaign_recipients_by_campaign ON campaign_recipients (campaign_id, id);
-- A claim reads a campaign's due recipients and expired leases from their start.
CREATE INDEX campaign_recipients_due ON campaign_recipients (campaign_id, next_at, id) WHERE state = 'pending';
CREATE INDEX campaign_recipients_lease ON campaign_recipients (campaign_id, lease_until, id) WHERE state = 'in_progress';
-- A call's end finds its attempt; one attempt per call.
CREATE UNIQUE INDEX campaign_recipients_by_call ON campaign_recipients (call_id) WHERE state = 'in_progress';
CREATE INDEX campaign_recipients_by_workspace ON campaign_recipients (workspace_id);

CREATE TABLE suppressions (
	id           text COLLATE "C" PRIMARY KEY,
	workspace_id text COLLATE "C" NOT NULL,
	phone_number text COLLATE "C" NOT NULL,
	reason       text,
	created_at   timestamptz NOT NULL,
	UNIQUE (workspace_id, phone_number)
);
CREATE INDEX suppressions_by_workspace ON suppressions (workspace_id, id);
