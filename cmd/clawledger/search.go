package main

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/clawledger/clawledger/search"
	"github.com/clawledger/clawledger/view"
)

// lexicalWindow is how many of the newest matches a broad query ranks
// (--exhaustive ranks all).
const lexicalWindow = 2000

func (a *app) searchCommand() *cobra.Command {
	var req search.Request
	var agent, session, role, source, since, until string
	var explain, exhaustive bool
	cmd := &cobra.Command{
		Use:   "search QUERY",
		Short: "Search sessions and memory files (full-text, vector or hybrid)",
		Long: `Search user and assistant messages, compaction summaries and workspace
memory files (MEMORY.md, memory/**/*.md, USER.md).

QUERY: words (all must match), "quoted phrases", prefix terms (deploy*),
OR between two terms, -word to exclude. Chinese, Japanese and Korean text
is found by any substring.

Ranking: SQLite FTS5 BM25; with an embedder configured (see clawledger
embed) hybrid by default: 0.7 x vector + 0.3 x text score, or reciprocal
rank fusion (--fusion rrf), over 4x --limit candidates per lane. --mmr
diversifies, --decay favors recent hits (MEMORY.md, USER.md and undated
memory files never decay). A query matching more than 2,000 chunks ranks
the newest 2,000 by BM25 (--exhaustive ranks all). --explain shows each lane's
rank and score.

Each session hit names its transcript path and entry id, for
clawledger show PATH --around ENTRY.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			req.Query = strings.Join(args, " ")
			req.Filter.AgentID, req.Filter.Role, req.Filter.Source = agent, role, source
			now := time.Now()
			var err error
			if req.Filter.Since, req.Filter.Until, err = parseRange(since, until, now, time.Local); err != nil {
				return err
			}
			req.Now = now.UnixMilli()
			if !exhaustive {
				req.Window = lexicalWindow
			}
			db, err := a.openReader(ctx)
			if err != nil {
				return err
			}
			defer db.Close()
			if session != "" {
				list, err := db.FindSessions(ctx, session)
				if err != nil {
					return err
				}
				if len(list) == 0 {
					return fmt.Errorf("no session matches %q (see `clawledger sessions --include-deleted`)", session)
				}
				// every transcript of the session (live, archives, forks), of one session only
				req.Filter.SourceIDs = []int64{}
				ids := map[string]bool{}
				for _, s := range list {
					req.Filter.SourceIDs = append(req.Filter.SourceIDs, s.SourceID)
					ids[s.SessionID] = true
				}
				if len(ids) > 1 {
					return usagef("%q matches %d sessions: %s", session, len(ids), strings.Join(slices.Sorted(maps.Keys(ids)), ", "))
				}
			}
			eng, err := a.searchEngine(ctx, db, req.Mode)
			if err != nil {
				return err
			}
			res, err := eng.Search(ctx, req)
			if err != nil {
				return err
			}
			if a.searchBehind > 0 {
				behind := fmt.Sprintf("the search index is %d ledger lines behind (a query indexes at most %d): run `clawledger ingest` or `clawledger reindex`", a.searchBehind, queryPathBacklog)
				res.Note = strings.TrimPrefix(res.Note+"; "+behind, "; ")
			}
			if a.json {
				return a.printJSON(view.NewSearch(req.Query, res, explain))
			}
			a.printSearch(req.Query, res, explain)
			return nil
		},
	}
	refresh := a.addRefreshFlag(cmd)
	cmd.PreRunE = func(cmd *cobra.Command, _ []string) error {
		// bad flags are reported before the refresh does any work
		if err := checkSearchFlags(&req, role, source); err != nil {
			return err
		}
		return refresh(cmd.Context())
	}
	fl := cmd.Flags()
	fl.StringVar(&agent, "agent", "", "only this agent")
	fl.StringVar(&session, "session", "", "only this session (id, unique id prefix, or transcript path)")
	fl.StringVar(&role, "role", "", "only user, assistant, compaction, branch_summary or memory text")
	fl.StringVar(&source, "source", "", "only sessions or memory")
	fl.StringVar(&since, "since", "", "only hits since (YYYY-MM-DD, RFC 3339, or an age like 7d)")
	fl.StringVar(&until, "until", "", "only hits up to this date (inclusive) or before this time")
	fl.IntVar(&req.Limit, "limit", 10, "at most this many hits")
	fl.IntVar(&req.PerSession, "per-session", 0, "at most N hits per session, grouped by session")
	fl.StringVar(&req.Mode, "mode", "", "lexical, vector or hybrid (default: hybrid when vectors exist)")
	fl.StringVar(&req.Fusion, "fusion", search.FusionWeighted, "hybrid merge: weighted (0.7 vector + 0.3 text) or rrf")
	fl.BoolVar(&req.MMR, "mmr", false, "diversify hits by maximal marginal relevance")
	fl.Float64Var(&req.MMRLambda, "mmr-lambda", search.MMRLambda, "MMR trade-off: 1 = relevance only, 0 = diversity only")
	fl.BoolVar(&req.Decay, "decay", false, "favor recent hits (exponential decay; evergreen memory files exempt)")
	fl.Float64Var(&req.HalfLifeDays, "half-life", search.HalfLifeDays, "temporal decay half-life in days")
	fl.Float64Var(&req.MinScore, "min-score", 0, "drop hits scoring below this")
	fl.BoolVar(&explain, "explain", false, "show each lane's rank and score")
	fl.BoolVar(&exhaustive, "exhaustive", false, "rank every lexical match, not only the newest 2,000")
	return cmd
}

func checkSearchFlags(req *search.Request, role, source string) error {
	switch req.Mode {
	case "", search.ModeLexical, search.ModeVector, search.ModeHybrid:
	default:
		return usagef("--mode must be lexical, vector or hybrid, not %q", req.Mode)
	}
	switch req.Fusion {
	case search.FusionWeighted, search.FusionRRF:
	default:
		return usagef("--fusion must be weighted or rrf, not %q", req.Fusion)
	}
	switch role {
	case "", "user", "assistant", "compaction", "branch_summary", "memory":
	default:
		return usagef("--role must be user, assistant, compaction, branch_summary or memory, not %q", role)
	}
	switch source {
	case "", search.SourceSessions, search.SourceMemory:
	default:
		return usagef("--source must be sessions or memory, not %q", source)
	}
	if req.Limit <= 0 {
		return usagef("--limit must be at least 1")
	}
	if req.PerSession < 0 {
		return usagef("--per-session must not be negative")
	}
	if req.MMRLambda < 0 || req.MMRLambda > 1 {
		return usagef("--mmr-lambda must be between 0 and 1")
	}
	if req.HalfLifeDays <= 0 {
		return usagef("--half-life must be positive")
	}
	return nil
}

func (a *app) colorOut() bool {
	if a.getenv("NO_COLOR") != "" {
		return false
	}
	f, ok := a.stdout.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func (a *app) printSearch(query string, res *search.Result, explain bool) {
	open, close := "**", "**"
	if a.colorOut() {
		open, close = "\x1b[1;33m", "\x1b[0m"
	}
	if len(res.Hits) == 0 {
		a.printf("no hits for %q\n", query)
	}
	group := 0
	for i := range res.Hits {
		h := &res.Hits[i]
		if g := h.Explain.SessionGroup; g > 0 && g != group {
			group = g
			if h.Kind == search.KindMemory {
				a.printf("── %s\n", h.Path)
			} else {
				a.printf("── session %s (%s)\n", h.SessionID, h.Path)
			}
		}
		parts := []string{h.AgentID}
		when := ""
		if t := view.Time(h.TsMs); t != nil {
			when = (*t)[:16]
			when = strings.Replace(when, "T", " ", 1)
		}
		var where string
		if h.Kind == search.KindMemory {
			parts = append(parts, "memory")
			where = fmt.Sprintf("%s:%d-%d", h.Path, h.StartLine, h.EndLine)
		} else {
			parts = append(parts, h.Role)
			where = fmt.Sprintf("%s:%d  session %s  entry %s", h.Path, h.StartLine, h.SessionID, h.EntryID)
		}
		if when != "" {
			parts = append(parts, when)
		}
		parts = append(parts, view.HitFlags(h)...)
		a.printf("%2d. %s  [%.3f]\n    %s\n", h.Rank, strings.Join(parts, " · "), h.Score, where)
		a.printf("    %s\n", view.Marks(strings.Join(strings.Fields(h.Snippet), " "), open, close))
		if explain {
			a.printf("    %s\n", explainLine(&h.Explain))
		}
	}
	if explain {
		a.printf("\nmode %s, fusion %s, %d candidates per lane; FTS %s\n", res.Mode, res.Fusion, res.Candidates, res.FTS)
		if res.Mode != search.ModeVector {
			if res.LexicalComplete {
				a.printf("lexical: %d matches, all ranked\n", res.LexicalMatches)
			} else {
				// the window cut: more matched than were ranked
				a.printf("lexical: more than %d matches, the newest %d ranked (--exhaustive ranks all)\n", res.LexicalMatches, res.LexicalMatches)
			}
		}
		if res.Mode != search.ModeLexical {
			a.printf("vector: %d chunks scanned\n", res.VectorChunks)
		}
	}
	if res.Note != "" {
		a.warnf("note: %s\n", res.Note)
	}
}

func explainLine(e *search.Explain) string {
	var parts []string
	if e.LexicalRank > 0 {
		parts = append(parts, fmt.Sprintf("lexical #%d bm25 %.3f -> %.3f", e.LexicalRank, e.BM25, e.TextScore))
	} else {
		parts = append(parts, "lexical -")
	}
	if e.VectorRank > 0 {
		parts = append(parts, fmt.Sprintf("vector #%d cosine %.3f", e.VectorRank, e.Cosine))
	} else {
		parts = append(parts, "vector -")
	}
	parts = append(parts, fmt.Sprintf("%s %.3f", e.Fusion, e.FusedScore))
	if e.Decay != 1 {
		parts = append(parts, fmt.Sprintf("decay x%.3f", e.Decay))
	}
	if e.MMRPick > 0 {
		parts = append(parts, fmt.Sprintf("mmr pick %d", e.MMRPick))
	}
	return strings.Join(parts, " · ")
}
