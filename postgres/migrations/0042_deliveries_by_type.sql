-- A page of a webhook's delivery log for a caller that reads some event types only
-- walks each of its types' deliveries through this index and merges them, so the
-- deliveries of types hidden from it are neither walked nor counted (narrowedDeliveries).
CREATE INDEX deliveries_by_webhook_type ON deliveries (webhook_id, event_type, id);
