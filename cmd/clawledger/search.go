package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/clawledger/clawledger/ledger"
	"github.com/clawledger/clawledger/search"
	"github.com/clawledger/clawledger/view"
)

// searchOptions are the flags of search.
type searchOptions struct {
	*app
	ledger.SearchRequest
	since, until string
	refresh      refreshFlag
	by           byFlag
}

func newSearchCmd(a *app) *cobra.Command {
	o := &searchOptions{app: a, SearchRequest: ledger.SearchDefaults()}
	cmd := &cobra.Command{
		Use:   "search QUERY",
		Short: "Search sessions, memory and workspace files (full-text, vector or hybrid)",
		Long: `Search user and assistant messages (user messages without the envelope
OpenClaw's gateway wrapped them in), compaction summaries and every
workspace file: the memory files (MEMORY.md, memory/**/*.md, USER.md:
--source memory) and the others (SOUL.md, IDENTITY.md, AGENTS.md, TOOLS.md,
HEARTBEAT.md, BOOTSTRAP.md, DREAMS.md: --source workspace), and the chunks
of OpenClaw's own memory index whose files the ledger does not hold (its
extraPaths, transcripts the ledger never saw: --source memory_index).

QUERY: words (all must match), "quoted phrases", prefix terms (deploy*),
OR between two terms, -word to exclude. Chinese, Japanese and Korean text
is found by any substring.

Ranking: SQLite FTS5 BM25; with an embedder configured (see clawledger
embed) hybrid by default: 0.7 x vector + 0.3 x text score, or reciprocal
rank fusion (--fusion rrf), over 4x --limit candidates per lane. --mmr
diversifies, --decay favors recent hits (only dated memory files,
memory/YYYY-MM-DD*.md, decay: every other workspace file is evergreen). A query matching more than 2,000 chunks ranks
the newest 2,000 by BM25 (--exhaustive ranks all). --explain shows each lane's
rank and score.

Each session hit names its transcript path and entry id, for
clawledger show PATH --around ENTRY.

--episodes searches the cortex's episodes instead (see clawledger cortex):
their summaries (the ask, the outcome, files, commands, URLs, errors), with
the same query language, modes and ranking; each hit is one episode, with
its session, first entry and lines. Episode summaries are embedded with
the chunks when an embedder is configured.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.complete(args, time.Now()); err != nil {
				return err
			}
			return a.runs(o, func() error { return searchRun(cmd.Context(), o) })
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.Agent, "agent", "", "only this agent")
	fl.StringVar(&o.Session, "session", "", "only this session (id, unique id prefix, or transcript path)")
	fl.StringVar(&o.Role, "role", "", "only user, assistant, compaction, branch_summary, memory, workspace or memory_index text")
	fl.StringVar(&o.Source, "source", "", "only sessions, memory, workspace files or memory_index (OpenClaw's memory index)")
	fl.StringVar(&o.since, "since", "", "only hits since (YYYY-MM-DD, RFC 3339, or an age like 7d)")
	fl.StringVar(&o.until, "until", "", "only hits up to this date (inclusive) or before this time")
	fl.IntVar(&o.Limit, "limit", o.Limit, "at most this many hits")
	fl.IntVar(&o.PerSession, "per-session", 0, "at most N hits per session, grouped by session")
	fl.StringVar(&o.Mode, "mode", "", "lexical, vector or hybrid (default: hybrid when vectors exist)")
	fl.StringVar(&o.Fusion, "fusion", o.Fusion, "hybrid merge: weighted (0.7 vector + 0.3 text) or rrf")
	fl.BoolVar(&o.MMR, "mmr", false, "diversify hits by maximal marginal relevance")
	fl.Float64Var(&o.MMRLambda, "mmr-lambda", o.MMRLambda, "MMR trade-off: 1 = relevance only, 0 = diversity only")
	fl.BoolVar(&o.Decay, "decay", false, "favor recent hits (exponential decay; evergreen workspace files exempt)")
	fl.Float64Var(&o.HalfLifeDays, "half-life", o.HalfLifeDays, "temporal decay half-life in days")
	fl.Float64Var(&o.MinScore, "min-score", 0, "drop hits scoring below this")
	fl.BoolVar(&o.Explain, "explain", false, "show each lane's rank and score")
	fl.BoolVar(&o.Exhaustive, "exhaustive", false, "rank every lexical match, not only the newest 2,000")
	fl.BoolVar(&o.Episodes, "episodes", false, "search the cortex's episode summaries: one hit per episode")
	fl.StringVar(&o.Cursor, "cursor", "", "the next page of the search that gave this next_cursor")
	fl.BoolVar(&o.refresh.off, "no-refresh", false, noRefreshHelp)
	o.by.register(fl)
	return cmd
}

// complete checks the flags and fills the request: bad flags are reported
// before the refresh does any work.
func (o *searchOptions) complete(args []string, now time.Time) error {
	o.Query = strings.Join(args, " ")
	if err := o.Validate(); err != nil {
		return err
	}
	var err error
	if o.Since, o.Until, err = parseRange(o.since, o.until, now, time.Local); err != nil {
		return err
	}
	o.Refresh = o.refresh.policy()
	o.StateDirs, err = o.scope()
	if err != nil {
		return err
	}
	o.Host, err = o.reportHost(o.by)
	return err
}

func searchRun(ctx context.Context, o *searchOptions) error {
	svc, err := o.service()
	if err != nil {
		return err
	}
	if o.by.hosts() {
		return eachHost(ctx, o.app, o.Refresh, o.StateDirs, func(ctx context.Context, host string) (*view.Search, error) {
			req := o.SearchRequest
			req.Host, req.Refresh = host, ledger.Refresh{}
			return svc.Search(ctx, req)
		}, func(res *view.Search) { o.printSearch(o.Query, res.Result, o.Explain) })
	}
	res, err := svc.Search(ctx, o.SearchRequest)
	if err != nil {
		return err
	}
	if o.json {
		return o.printJSON(res)
	}
	o.printSearch(o.Query, res.Result, o.Explain)
	if res.NextCursor != "" {
		o.printf("\nmore hits: --cursor %s shows the next page\n", res.NextCursor)
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
			if search.FileKind(h.Kind) {
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
		switch {
		case search.FileKind(h.Kind):
			parts = append(parts, h.Kind)
			where = fmt.Sprintf("%s:%d-%d", h.Path, h.StartLine, h.EndLine)
		case h.Kind == search.KindEpisode:
			parts = append(parts, "episode", h.Role)
			where = fmt.Sprintf("%s:%d-%d  session %s  from entry %s", h.Path, h.StartLine, h.EndLine, h.SessionID, h.EntryID)
		default:
			parts = append(parts, h.Role)
			where = fmt.Sprintf("%s:%d  session %s  entry %s", h.Path, h.StartLine, h.SessionID, h.EntryID)
		}
		if when != "" {
			parts = append(parts, when)
		}
		parts = append(parts, view.HitFlags(h)...)
		a.printf("%2d. %s  [%.3f]\n    %s\n", h.Rank, strings.Join(parts, " · "), h.Score, where)
		a.printf("    %s\n", highlight(strings.Join(strings.Fields(h.Snippet), " "), open, close))
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
