-- An ended conversation goes with the call it became (docs/conversations.md, "After the
-- end"): a call's delete finds its conversation by call_id through this index, never
-- reading every conversation. Nothing is rewritten.
CREATE INDEX conversations_by_call ON conversations (call_id) WHERE call_id IS NOT NULL;
