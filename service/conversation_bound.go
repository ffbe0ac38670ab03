package service

import (
	"fmt"
	"math"
	"time"

	"github.com/voiceapi/voiceapi/data"
)

// openConversationsBound is the most open conversations a workspace may hold at once.
type openConversationsBound struct {
	// max is the bound; meaningful only when bounded.
	max int64
	// bounded is false when neither the plan nor the server sets a bound.
	bounded bool
	// byPlan says the plan's open_conversations limit sets it, not the server's flag.
	byPlan bool
}

// openBound is the one place the bound on workspace ws's open conversations is worked
// out, for the start's check and for the subscription's limits: the plan's
// open_conversations limit when the plan sets one (0 forbids any), else the server's
// --max-open-conversations (ConversationOptions.MaxOpen; 0 there is no bound). A plan
// without the limit, the unlimited default one included, so keeps the server's bound: a
// plan raises or lowers it for its workspace, it cannot lift the operator's default.
func (s *ConversationService) openBound(tx Tx, ws string) (openConversationsBound, error) {
	pl, err := plan(tx, ws)
	if err != nil {
		return openConversationsBound{}, err
	}
	if v, ok := pl.Limits[data.LimitOpenConversations]; ok {
		return openConversationsBound{max: v, bounded: true, byPlan: true}, nil
	}
	if max := s.options().MaxOpen; max > 0 {
		return openConversationsBound{max: int64(max), bounded: true}, nil
	}
	return openConversationsBound{}, nil
}

// countOpenConversations counts workspace ws's open conversations at now, at most limit of them:
// active ones, but not those expired (idle, no message being answered: what idle and
// answering say) that the sweep has not ended yet.
func countOpenConversations(tx Tx, ws string, now time.Time, limit int64) (int64, error) {
	n, err := tx.OpenConversations(ws, now.Add(-data.ConversationIdleTimeout), now, int(min(limit, math.MaxInt)))
	return int64(n), err
}

// checkOpenConversations refuses a start (409) when workspace ws holds the most open
// conversations it may (openBound), counted by countOpenConversations, so a
// conversation left alone frees its slot after ConversationIdleTimeout whether or not it
// was ended. Each message is a paid model call: without the bound a script, or a leaked
// conversations:write key, could hold tens of thousands open.
func (s *ConversationService) checkOpenConversations(tx Tx, ws string) error {
	bound, err := s.openBound(tx, ws)
	if err != nil || !bound.bounded {
		return err
	}
	n, err := countOpenConversations(tx, ws, s.now(), bound.max)
	if err != nil {
		return err
	}
	if n < bound.max {
		return nil
	}
	by := "the server's --max-open-conversations"
	if bound.byPlan {
		by = fmt.Sprintf("its %s limit of %d", data.LimitOpenConversations, bound.max)
	}
	return data.Errorf(data.ECONFLICT, "The workspace has %s, the most it may have (%s): end one, or wait for an idle one to expire after %d minutes.",
		countOf(n, "open conversation"), by, int(data.ConversationIdleTimeout.Minutes()))
}
