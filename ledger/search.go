package ledger

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
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
	Role    string `json:"role,omitempty"`    // user, assistant, compaction, branch_summary, memory, workspace, memory_index
	Source  string `json:"source,omitempty"`  // sessions, memory, workspace or memory_index
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
	Exhaustive bool `json:"exhaustive,omitempty"`
	Explain    bool `json:"explain,omitempty"` // say how each hit ranked
	// Episodes searches the cortex's episodes (their summaries) instead
	// of messages and files: each hit is one episode.
	Episodes bool  `json:"episodes,omitempty"`
	Now      int64 `json:"-"` // epoch ms decay counts from; 0 = now
	// Host keeps one host's sources, in a ledger of many hosts ("": every
	// host's).
	Host string `json:"host,omitempty"`
	// StateDirs limits the answer (and the refresh) to these state dirs
	// (absolute paths, as the ledger holds them); empty: every state dir.
	StateDirs []string `json:"state_dirs,omitempty"`
	Refresh   Refresh  `json:"-"`
	// Cursor is where the page starts: a next_cursor of the page before,
	// of the same request (the limit may differ). A search of episodes
	// does not page.
	Cursor string `json:"cursor,omitempty"`
}

// hash names what a search ranks: every field but the page's (limit,
// cursor), how it is shown, the time range, which the first page resolves
// (--since 7d) and its cursor keeps, and the state dirs of the process
// that answers (serve's --state), so that the CLI's cursor pages the API.
func (r SearchRequest) hash() string {
	r.Limit, r.Cursor, r.Explain, r.Since, r.Until, r.StateDirs = 0, "", false, 0, 0, nil
	b, _ := json.Marshal(r)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
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
	case "", "user", "assistant", "compaction", "branch_summary", search.KindMemory, search.KindWorkspace, search.KindMemoryIndex:
	default:
		return clawledger.FieldErrorf("role", "must be user, assistant, compaction, branch_summary, memory, workspace or memory_index, not %q", r.Role)
	}
	switch r.Source {
	case "", search.SourceSessions, search.SourceMemory, search.SourceWorkspace, search.SourceMemoryIndex:
	default:
		return clawledger.FieldErrorf("source", "must be sessions, memory, workspace or memory_index, not %q", r.Source)
	}
	if r.Episodes && (r.Role != "" || r.Source != "") {
		return clawledger.FieldErrorf("episodes", "searches episode summaries: it takes no role or source")
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

// sourcesIn lists the sources of some state dirs (transcripts and
// workspace files: those the index chunks), for the search filter, which
// both lanes apply (the vector scan knows a chunk's source, not its state
// dir).
func sourcesIn(ctx context.Context, r clawledger.Store, dirs []string) ([]int64, error) {
	all, err := r.AllSources(ctx)
	if err != nil {
		return nil, err
	}
	ids := []int64{}
	for _, src := range all {
		if slices.Contains(dirs, src.StateDir) {
			ids = append(ids, src.ID)
		}
	}
	return ids, nil
}

// Search ranks the hits of a query: full-text (BM25), vector or hybrid.
// Each hit names its session, entry and line, or its memory file and
// lines. A note says when the search could not rank by meaning, and when
// the index is behind the ledger.
func (s *Service) Search(ctx context.Context, req SearchRequest) (*view.Search, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	a, err := s.queryOn(ctx, req.Refresh, req.StateDirs, req.Host)
	if err != nil {
		return nil, err
	}
	r, behind := a.r, a.behind.index
	sr := search.Request{Query: req.Query, Limit: req.Limit, PerSession: req.PerSession, Mode: req.Mode, Fusion: req.Fusion,
		MMR: req.MMR, MMRLambda: req.MMRLambda, Decay: req.Decay, HalfLifeDays: req.HalfLifeDays, MinScore: req.MinScore, Now: req.Now,
		Filter: search.Filter{AgentID: req.Agent, Role: req.Role, Source: req.Source, Since: req.Since, Until: req.Until}}
	if sr.Now == 0 {
		sr.Now = time.Now().UnixMilli()
	}
	if !req.Exhaustive {
		sr.Window = LexicalWindow
	}
	if sr.Page, err = view.SearchAfter(req.Cursor, req.hash()); err != nil {
		return nil, err
	}
	if sr.Page != nil && req.Episodes {
		return nil, clawledger.FieldErrorf("cursor", "a search of episodes does not page")
	}
	if req.Session != "" {
		sel, err := resolve(ctx, r, req.Session, req.Agent, a.dirs)
		if err != nil {
			return nil, err
		}
		sr.Filter.SourceIDs = sel.sourceIDs() // every transcript of the session (live, archives, forks)
	} else if a.dirs != nil {
		if sr.Filter.SourceIDs, err = sourcesIn(ctx, r, a.dirs); err != nil {
			return nil, err
		}
	}
	var idx clawledger.SearchReader = r
	if req.Episodes {
		if idx, err = episodeIndex(r); err != nil {
			return nil, err
		}
	}
	run := func(fresh bool) (*search.Result, func(context.Context) (bool, error), error) {
		eng, current, err := s.searchEngine(ctx, idx, req.Mode, fresh)
		if err != nil {
			return nil, nil, err
		}
		if req.Episodes {
			eng.NotEmbedded = noteEpisodesNotEmbedded
		} else if eng.Embedder != nil {
			if err := s.matrix.fill(ctx, r, eng); err != nil {
				return nil, nil, err
			}
		}
		res, err := eng.Search(ctx, sr)
		return res, current, err
	}
	res, current, err := run(false)
	if err == nil && current != nil {
		// the embedder's setting came from the store's cache: asked again
		// when it changed before the search's snapshot
		var same bool
		if same, err = current(ctx); err == nil && !same {
			res, _, err = run(true)
		}
	}
	if err != nil {
		return nil, err
	}
	if req.Episodes && a.behind.cortex > 0 {
		res.Note = strings.TrimPrefix(res.Note+"; "+cortexNote(a, req.Refresh), "; ")
	} else if behind > 0 {
		note := fmt.Sprintf("the search index is %d ledger lines behind (a query indexes at most %d): run `clawledger ingest` or `clawledger reindex`",
			behind, req.Refresh.IndexBacklog)
		res.Note = strings.TrimPrefix(res.Note+"; "+note, "; ")
	}
	out := view.NewSearch(req.Query, res, req.Explain)
	if res.Next != nil && !req.Episodes { // episodes change in place: no snapshot of them
		out.NextCursor = view.SearchCursor(res.Next, req.hash())
	}
	return out, nil
}
