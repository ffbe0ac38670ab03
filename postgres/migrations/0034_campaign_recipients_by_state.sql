-- A campaign's recipients by state, newest first: the recipient list's state filter
-- (docs/campaigns.md, "Reading a campaign") reads a page of one state through it, per_page
-- rows at any campaign size, where campaign_recipients_by_campaign would pass over every
-- recipient of the other states. A canceled campaign's filter on canceled reads two
-- states, each through this index, merged (postgres/campaigns_state.go).
CREATE INDEX campaign_recipients_by_state ON campaign_recipients (campaign_id, state, id);
