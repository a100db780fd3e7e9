package main

import (
	"context"
	"strings"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/openclaw"
	"github.com/clawledger/clawledger/sqlite"
	"github.com/clawledger/clawledger/view"
)

// lastUserMessages is how many of its last user messages a session row shows.
const lastUserMessages = 3

// sessionDetails are what a session row shows beyond the stored summary.
type sessionDetails struct {
	LastUserMessages []string
	Match            *view.ProjectMatch
}

// loadDetails reads the last user messages of every listed session, in one
// query for all of them, by source id.
func loadDetails(ctx context.Context, db *sqlite.DB, list []*clawledger.Session) (map[int64]*sessionDetails, error) {
	ids := make([]int64, len(list))
	for i, s := range list {
		ids[i] = s.SourceID
	}
	texts, err := db.UserTexts(ctx, ids, lastUserMessages, true)
	if err != nil {
		return nil, err
	}
	out := make(map[int64]*sessionDetails, len(list))
	for _, s := range list {
		last := texts[s.SourceID]
		for i, t := range last {
			last[i] = openclaw.Clip(strings.TrimSpace(t), 500)
		}
		out[s.SourceID] = &sessionDetails{LastUserMessages: last}
	}
	return out, nil
}

// toSessionJSON renders a session; d (may be nil) adds its details.
func toSessionJSON(s *clawledger.Session, d *sessionDetails) view.Session {
	if d == nil {
		return view.NewSession(s, nil, nil)
	}
	return view.NewSession(s, d.LastUserMessages, d.Match)
}
