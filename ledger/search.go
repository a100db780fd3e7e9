package ledger

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/search"
	"github.com/clawledger/clawledger/view"
)

// SearchRequest is one search over messages, compaction summaries and
// memory files. Start from SearchDefaults.
type SearchRequest struct {
	// Query: words (all must match), "quoted phrases", prefix terms
	// (deploy*), OR between two terms, -word to exclude.
	Query   string `json:"query"`
	Agent   string `json:"agent,omitempty"`
	Session string `json:"session,omitempty"` // a session id, unique prefix or transcript path: all its transcripts
	Role    string `json:"role,omitempty"`    // user, assistant, compaction, branch_summary, memory
	Source  string `json:"source,omitempty"`  // sessions or memory
	Since   int64  `json:"since,omitempty"`   // epoch ms; 0 = open
	Until   int64  `json:"until,omitempty"`   // epoch ms, exclusive; 0 = open
	Limit   int    `json:"limit,omitempty"`
	// PerSession keeps at most this many hits per session, grouped by
	// session (0: no cap).
	PerSession   int     `json:"per_session,omitempty"`
	Mode         string  `json:"mode,omitempty"`   // lexical, vector, hybrid; "" = hybrid when vectors exist
	Fusion       string  `json:"fusion,omitempty"` // weighted or rrf
	MMR          bool    `json:"mmr,omitempty"`
	MMRLambda    float64 `json:"mmr_lambda,omitempty"`
	Decay        bool    `json:"decay,omitempty"`
	HalfLifeDays float64 `json:"half_life,omitempty"`
	MinScore     float64 `json:"min_score,omitempty"`
	// Exhaustive ranks every lexical match, not only the newest 2,000.
	Exhaustive bool    `json:"exhaustive,omitempty"`
	Explain    bool    `json:"explain,omitempty"` // say how each hit ranked
	Now        int64   `json:"-"`                 // epoch ms decay counts from; 0 = now
	Refresh    Refresh `json:"-"`
}

// SearchDefaults is a request with the defaults every surface shows.
func SearchDefaults() SearchRequest {
	return SearchRequest{Limit: 10, Fusion: search.FusionWeighted, MMRLambda: search.MMRLambda, HalfLifeDays: search.HalfLifeDays}
}

// LexicalWindow is how many of the newest matches a broad query ranks
// (Exhaustive ranks all).
const LexicalWindow = 2000

// Validate checks a request's fields (every surface checks before a
// search's refresh does any work).
func (r *SearchRequest) Validate() error {
	switch r.Mode {
	case "", search.ModeLexical, search.ModeVector, search.ModeHybrid:
	default:
		return clawledger.FieldErrorf("mode", "must be lexical, vector or hybrid, not %q", r.Mode)
	}
	switch r.Fusion {
	case search.FusionWeighted, search.FusionRRF:
	default:
		return clawledger.FieldErrorf("fusion", "must be weighted or rrf, not %q", r.Fusion)
	}
	switch r.Role {
	case "", "user", "assistant", "compaction", "branch_summary", "memory":
	default:
		return clawledger.FieldErrorf("role", "must be user, assistant, compaction, branch_summary or memory, not %q", r.Role)
	}
	switch r.Source {
	case "", search.SourceSessions, search.SourceMemory:
	default:
		return clawledger.FieldErrorf("source", "must be sessions or memory, not %q", r.Source)
	}
	switch {
	case r.Limit <= 0:
		return clawledger.FieldErrorf("limit", "must be at least 1")
	case r.PerSession < 0:
		return clawledger.FieldErrorf("per_session", "must not be negative")
	case r.MMRLambda < 0 || r.MMRLambda > 1:
		return clawledger.FieldErrorf("mmr_lambda", "must be between 0 and 1")
	case r.HalfLifeDays <= 0:
		return clawledger.FieldErrorf("half_life", "must be positive")
	}
	return nil
}

// Search ranks the hits of a query: full-text (BM25), vector or hybrid.
// Each hit names its session, entry and line, or its memory file and
// lines. A note says when the search could not rank by meaning, and when
// the index is behind the ledger.
func (s *Service) Search(ctx context.Context, req SearchRequest) (*view.Search, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	behind, err := s.refresh(ctx, req.Refresh)
	if err != nil {
		return nil, err
	}
	r, err := s.read(ctx)
	if err != nil {
		return nil, err
	}
	sr := search.Request{Query: req.Query, Limit: req.Limit, PerSession: req.PerSession, Mode: req.Mode, Fusion: req.Fusion,
		MMR: req.MMR, MMRLambda: req.MMRLambda, Decay: req.Decay, HalfLifeDays: req.HalfLifeDays, MinScore: req.MinScore, Now: req.Now,
		Filter: search.Filter{AgentID: req.Agent, Role: req.Role, Source: req.Source, Since: req.Since, Until: req.Until}}
	if sr.Now == 0 {
		sr.Now = time.Now().UnixMilli()
	}
	if !req.Exhaustive {
		sr.Window = LexicalWindow
	}
	if req.Session != "" {
		sel, err := resolve(ctx, r, req.Session, req.Agent)
		if err != nil {
			return nil, err
		}
		sr.Filter.SourceIDs = sel.sourceIDs() // every transcript of the session (live, archives, forks)
	}
	eng, err := s.searchEngine(ctx, r, req.Mode)
	if err != nil {
		return nil, err
	}
	res, err := eng.Search(ctx, sr)
	if err != nil {
		return nil, err
	}
	if behind > 0 {
		note := fmt.Sprintf("the search index is %d ledger lines behind (a query indexes at most %d): run `clawledger ingest` or `clawledger reindex`",
			behind, req.Refresh.IndexBacklog)
		res.Note = strings.TrimPrefix(res.Note+"; "+note, "; ")
	}
	return view.NewSearch(req.Query, res, req.Explain), nil
}
