package ledger

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/cortex"
	"github.com/clawledger/clawledger/embed"
	"github.com/clawledger/clawledger/redact"
	"github.com/clawledger/clawledger/view"
)

// The cortex (issue 15): episodes, facets and entities derived from the
// ledger (package cortex), kept current by every ingest, watch and query
// refresh, rebuilt on demand.

// TaskCortex is the progress bar of a cortex rebuild (ledger lines).
const TaskCortex = "deriving the cortex"

// TopicsPerEpisode is how many topic keywords an episode shows.
const TopicsPerEpisode = 5

// ErrNoCortex: the ledger's backend keeps no cortex.
var ErrNoCortex = errors.New("this ledger's backend keeps no cortex yet")

// cortexOf is a store's cortex, or an unavailable error when its backend
// keeps none.
func cortexOf(st clawledger.Store) (clawledger.CortexStore, error) {
	cs, ok := st.(clawledger.CortexStore)
	if !ok {
		return nil, clawledger.Reasonf(clawledger.EUNAVAILABLE, ErrNoCortex, "the cortex is not kept on this ledger's backend yet (a SQLite ledger keeps it)")
	}
	return cs, nil
}

// noteEpisodesNotEmbedded: a search of episodes with an embedder whose
// vectors have none yet.
const noteEpisodesNotEmbedded = "no episode summary is embedded yet (run `clawledger embed` or `clawledger cortex rebuild`)"

// episodeIndex is the search index of a store's episode summaries.
func episodeIndex(st clawledger.Store) (clawledger.SearchReader, error) {
	if _, err := cortexOf(st); err != nil {
		return nil, err
	}
	cs, ok := st.(clawledger.CortexSearch)
	if !ok {
		return nil, clawledger.Reasonf(clawledger.EUNAVAILABLE, ErrNoCortex, "this ledger's backend cannot search episodes yet")
	}
	return cs.EpisodeIndex(), nil
}

// builder is the cortex builder of a store that keeps one (nil otherwise).
func builder(st clawledger.Store) *cortex.Builder {
	cs, ok := st.(clawledger.CortexStore)
	lr, ok2 := st.(clawledger.CortexReader)
	if !ok || !ok2 {
		return nil
	}
	return &cortex.Builder{Ledger: lr, Store: cs}
}

// updateCortex brings the cortex up to date after an ingest: appended
// lines extend their transcript's episodes, a replaced transcript is
// derived again. A query's refresh derives at most its backlog cap and
// returns how far behind it left the cortex. A backend that keeps no
// cortex is left alone.
func (s *Service) updateCortex(ctx context.Context, st clawledger.Store, d derivation) (behind int64, err error) {
	b := builder(st)
	if b == nil {
		return 0, nil
	}
	if d.query {
		b.MaxBehind = d.backlog
	} else {
		b.Progress = s.optionalBar(TaskCortex)
	}
	b.Fed = d.fedCortex.derived()
	stats, err := b.Update(ctx)
	if err != nil {
		return 0, fmt.Errorf("cortex: %w", err)
	}
	return stats.Behind, nil
}

// cortexQuery checks a cortex query's request, refreshes the ledger for
// it and opens its cortex.
func (s *Service) cortexQuery(ctx context.Context, req interface{ Validate() error }, r Refresh, dirs []string) (*answer, clawledger.CortexStore, error) {
	if err := req.Validate(); err != nil {
		return nil, nil, err
	}
	a, err := s.query(ctx, r, dirs)
	if err != nil {
		return nil, nil, err
	}
	cs, err := cortexOf(a.r)
	return a, cs, err
}

// cortexNote is the note of a cortex query whose refresh left the cortex
// behind.
func cortexNote(a *answer, r Refresh) string {
	if a.behind.cortex == 0 {
		return ""
	}
	return fmt.Sprintf("the cortex is %d ledger lines behind (a query derives at most %d): run `clawledger ingest` or `clawledger cortex rebuild`",
		a.behind.cortex, r.IndexBacklog)
}

// CortexEpisodesRequest lists episodes: one session's in file order, else
// the newest first.
type CortexEpisodesRequest struct {
	Session string `json:"session,omitempty"` // a session id, unique prefix or transcript path: all its transcripts
	Agent   string `json:"agent,omitempty"`
	Since   int64  `json:"since,omitempty"` // epoch ms: episodes that ended at or after it; 0 = open
	Until   int64  `json:"until,omitempty"` // epoch ms: episodes that started before it; 0 = open
	Limit   int    `json:"limit,omitempty"` // 0 = all
	// StateDirs limits the answer (and the refresh) to these state dirs
	// (absolute paths, as the ledger holds them); empty: every state dir.
	StateDirs []string `json:"state_dirs,omitempty"`
	Refresh   Refresh  `json:"-"`
}

// CortexEpisodesDefaults is a request with the defaults every surface
// shows.
func CortexEpisodesDefaults() CortexEpisodesRequest { return CortexEpisodesRequest{Limit: 50} }

// CortexEpisodes lists episodes with their summaries, topic keywords and
// facets (with the entries each came from).
func (s *Service) CortexEpisodes(ctx context.Context, req CortexEpisodesRequest) (*view.CortexEpisodes, error) {
	a, cs, err := s.cortexQuery(ctx, &req, req.Refresh, req.StateDirs)
	if err != nil {
		return nil, err
	}
	f := clawledger.EpisodeFilter{Agent: req.Agent, Since: req.Since, Until: req.Until, Limit: req.Limit}
	newest := false // the store lists a few transcripts' in file order
	switch {
	case req.Session != "":
		sel, err := resolve(ctx, a.r, req.Session, req.Agent, a.dirs)
		if err != nil {
			return nil, err
		}
		f.SourceIDs = sel.sourceIDs()
	case a.dirs != nil:
		if f.SourceIDs, err = sourcesIn(ctx, a.r, a.dirs); err != nil {
			return nil, err
		}
		f.Limit, newest = 0, true
	}
	eps, err := cs.CortexEpisodes(ctx, f)
	if err != nil {
		return nil, err
	}
	if newest {
		slices.SortFunc(eps, func(x, y *clawledger.Episode) int {
			return cmp.Or(cmp.Compare(y.EndMs, x.EndMs), cmp.Compare(y.ID, x.ID))
		})
		if req.Limit > 0 && len(eps) > req.Limit {
			eps = eps[:req.Limit]
		}
	}
	out := &view.CortexEpisodes{Note: cortexNote(a, req.Refresh), Episodes: []view.CortexEpisode{}}
	if len(eps) == 0 {
		return out, nil
	}
	topics, err := episodeTopics(ctx, cs, eps)
	if err != nil {
		return nil, err
	}
	ids := make([]int64, len(eps))
	for i, ep := range eps {
		ids[i] = ep.ID
	}
	occ, err := cs.CortexEpisodeFacets(ctx, ids)
	if err != nil {
		return nil, err
	}
	byEp := map[int64][]clawledger.FacetOccurrence{}
	for _, o := range occ {
		byEp[o.EpisodeID] = append(byEp[o.EpisodeID], o)
	}
	var llm map[int64]string
	if sc, ok := a.r.(clawledger.CortexSummaries); ok {
		if llm, err = sc.LLMSummaries(ctx, ids); err != nil {
			return nil, err
		}
	}
	for i, ep := range eps {
		v := view.NewCortexEpisode(ep, topics[i], byEp[ep.ID])
		v.LLMSummary = llm[ep.ID]
		out.Episodes = append(out.Episodes, v)
	}
	return out, nil
}

// Validate checks a request's fields (every surface checks before the
// refresh does any work).
func (r *CortexEpisodesRequest) Validate() error {
	if r.Limit < 0 {
		return clawledger.FieldErrorf("limit", "must not be negative")
	}
	return nil
}

// episodeTopics weighs each episode's terms against every episode.
func episodeTopics(ctx context.Context, cs clawledger.CortexStore, eps []*clawledger.Episode) ([][]view.Topic, error) {
	seen := map[string]bool{}
	var terms []string
	for _, ep := range eps {
		for _, t := range ep.Terms {
			if !seen[t.Term] {
				seen[t.Term] = true
				terms = append(terms, t.Term)
			}
		}
	}
	slices.Sort(terms)
	n, df, err := cs.CortexTerms(ctx, "", terms)
	if err != nil {
		return nil, err
	}
	out := make([][]view.Topic, len(eps))
	for i, ep := range eps {
		for _, k := range cortex.Keywords(ep.Terms, n, df, TopicsPerEpisode) {
			out[i] = append(out[i], view.Topic{Term: k.Term, Score: k.Score, Confidence: k.Confidence})
		}
	}
	return out, nil
}

// CortexFacetsRequest lists facets, the most widespread first.
type CortexFacetsRequest struct {
	Type  string `json:"type,omitempty"` // a facet type ("" = every type but topics)
	Agent string `json:"agent,omitempty"`
	Top   int    `json:"top,omitempty"` // 0 = all
	// StateDirs limits the refresh to these state dirs (facets sum the
	// episodes of every state dir).
	StateDirs []string `json:"state_dirs,omitempty"`
	Refresh   Refresh  `json:"-"`
}

// CortexFacetsDefaults is a request with the defaults every surface shows.
func CortexFacetsDefaults() CortexFacetsRequest { return CortexFacetsRequest{Top: 20} }

// facetType reads a facet type ("" for any).
func facetType(field, s string) (clawledger.FacetType, error) {
	t := clawledger.FacetType(strings.ToLower(strings.TrimSpace(s)))
	if t != "" && !t.Valid() {
		names := make([]string, len(clawledger.FacetTypes))
		for i, x := range clawledger.FacetTypes {
			names[i] = string(x)
		}
		return "", clawledger.FieldErrorf(field, "must be one of %s, not %q", strings.Join(names, ", "), s)
	}
	return t, nil
}

// Validate checks a request's fields.
func (r *CortexFacetsRequest) Validate() error {
	if _, err := facetType("type", r.Type); err != nil {
		return err
	}
	if r.Top < 0 {
		return clawledger.FieldErrorf("top", "must not be negative")
	}
	return nil
}

// CortexFacets lists facets summed over their episodes: count, episodes,
// first and last seen, confidence. Topics (--type topic) are the
// episodes' words weighed by TF-IDF.
func (s *Service) CortexFacets(ctx context.Context, req CortexFacetsRequest) (*view.CortexFacets, error) {
	_, cs, err := s.cortexQuery(ctx, &req, req.Refresh, req.StateDirs)
	if err != nil {
		return nil, err
	}
	typ, _ := facetType("type", req.Type)
	facets, err := cs.CortexFacets(ctx, clawledger.FacetFilter{Type: typ, Agent: req.Agent, Top: req.Top})
	if err != nil {
		return nil, err
	}
	return view.NewCortexFacets(typ, req.Agent, facets), nil
}

// CortexEntityRequest asks for every episode that touched an entity.
type CortexEntityRequest struct {
	// Value is the entity: a file (by its path or trailing path
	// components), a URL (or its host), a command, a project, a peer, a
	// topic word, ...
	Value string `json:"value"`
	Type  string `json:"type,omitempty"` // "" = any type
	Agent string `json:"agent,omitempty"`
	Limit int    `json:"limit,omitempty"` // 0 = all
	// StateDirs limits the answer (and the refresh) to these state dirs.
	StateDirs []string `json:"state_dirs,omitempty"`
	Refresh   Refresh  `json:"-"`
}

// CortexEntityDefaults is a request with the defaults every surface shows.
func CortexEntityDefaults() CortexEntityRequest { return CortexEntityRequest{Limit: 50} }

// Validate checks a request's fields.
func (r *CortexEntityRequest) Validate() error {
	if strings.TrimSpace(r.Value) == "" {
		return clawledger.FieldErrorf("value", "is required: a file, URL, command, project, peer, ...")
	}
	if _, err := facetType("type", r.Type); err != nil {
		return err
	}
	if r.Limit < 0 {
		return clawledger.FieldErrorf("limit", "must not be negative")
	}
	return nil
}

// CortexEntity lists every episode that touched an entity, newest first,
// with its agent and session and the entries it came from, across agents
// and sessions.
func (s *Service) CortexEntity(ctx context.Context, req CortexEntityRequest) (*view.CortexEntity, error) {
	a, cs, err := s.cortexQuery(ctx, &req, req.Refresh, req.StateDirs)
	if err != nil {
		return nil, err
	}
	typ, _ := facetType("type", req.Type)
	q := clawledger.EntityQuery{Type: typ, Value: req.Value, Agent: req.Agent, Limit: req.Limit}
	if a.dirs != nil {
		q.Limit = 0 // cut after the state dir filter
	}
	hits, err := cs.CortexEntity(ctx, q)
	if err != nil {
		return nil, err
	}
	if a.dirs != nil {
		ids, err := sourcesIn(ctx, a.r, a.dirs)
		if err != nil {
			return nil, err
		}
		hits = slices.DeleteFunc(hits, func(h *clawledger.EntityHit) bool { return !slices.Contains(ids, h.Episode.SourceID) })
		if req.Limit > 0 && len(hits) > req.Limit {
			hits = hits[:req.Limit]
		}
	}
	return view.NewCortexEntity(req.Value, typ, hits), nil
}

// CortexRebuildRequest derives the whole cortex again.
type CortexRebuildRequest struct {
	// LLMSummary asks an OpenAI-compatible chat model (embed.SummarizerFromEnv)
	// for a summary of every episode whose summary text has none yet
	// (they are cached by its hash). Nothing else ever calls it: not a
	// query, not an ingest, not a watch.
	LLMSummary bool `json:"llm_summary,omitempty"`
}

// TaskSummarize is the progress bar of the LLM summaries (episodes).
const TaskSummarize = "summarizing episodes"

// summaryBatch is how many episodes are summarized between two writes.
const summaryBatch = 16

// CortexRebuild derives the whole cortex again from the ledger in one
// transaction (queries answer from the previous cortex until it commits),
// then embeds the episode summaries that have no vector when an embedder
// is configured. The cortex it gives is the one incremental updates give,
// byte for byte.
func (s *Service) CortexRebuild(ctx context.Context, req CortexRebuildRequest) (*view.CortexRebuild, error) {
	st, err := s.write(ctx, true)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	cs, err := cortexOf(st)
	if err != nil {
		return nil, err
	}
	var sum *embed.Summarizer // checked before the rebuild: a summary that cannot run fails first
	if req.LLMSummary {
		if _, ok := st.(clawledger.CortexSummaries); !ok {
			return nil, clawledger.Reasonf(clawledger.EUNAVAILABLE, ErrNoCortex, "this ledger's backend keeps no LLM summaries yet")
		}
		if sum, err = embed.SummarizerFromEnv(s.getenv); err != nil {
			return nil, &clawledger.Error{Code: clawledger.EINVALID, Message: err.Error(), Err: err}
		}
	}
	b := builder(st)
	b.Progress = s.optionalBar(TaskCortex)
	stats, err := b.Rebuild(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, clawledger.Reasonf(clawledger.EINTERNAL, ErrInterrupted,
				"cortex rebuild interrupted: nothing was changed, queries still answer from the previous cortex")
		}
		return nil, err
	}
	out := &view.CortexRebuild{Sources: stats.Sources, Lines: stats.Lines}
	// the episode summaries without a vector, when an embedder is configured
	embedded, err := s.embedNew(ctx, st, derivation{network: true})
	if err != nil {
		s.observer().EmbedFailed(err, false)
	}
	out.Embedded = int64(embedded)
	if idx, err := episodeIndex(st); err == nil {
		if out.Episodes, out.Vectors, err = idx.SearchIndexCounts(ctx); err != nil {
			return nil, err
		}
	} else if out.Episodes, _, err = cs.CortexTerms(ctx, "", []string{}); err != nil {
		return nil, err
	}
	facets, err := cs.CortexFacets(ctx, clawledger.FacetFilter{})
	if err != nil {
		return nil, err
	}
	out.Facets = int64(len(facets))
	if req.LLMSummary {
		n, err := s.summarizeEpisodes(ctx, st.(clawledger.CortexSummaries), sum, out.Episodes)
		if err != nil {
			return nil, fmt.Errorf("the cortex was rebuilt, but its LLM summaries failed (%d stored; run again to go on): %w", n, err)
		}
		out.Summarized, out.LLMSummaries = int64(n), out.Episodes
	}
	return out, nil
}

// summarizeEpisodes asks the configured chat model for a summary of every
// episode whose summary text has none yet, from that text (secrets
// masked, as everything the cortex stores), and stores them as they come;
// it returns how many it asked for.
func (s *Service) summarizeEpisodes(ctx context.Context, cs clawledger.CortexSummaries, sum *embed.Summarizer, episodes int64) (int, error) {
	bar := s.progress(TaskSummarize)
	bar.Start(episodes)
	defer bar.Finish()
	n := 0
	for after := int64(0); ; {
		batch, err := cs.EpisodesToSummarize(ctx, after, summaryBatch)
		if err != nil || len(batch) == 0 {
			return n, err
		}
		ids, texts := make([]int64, len(batch)), make([]string, len(batch))
		for i, p := range batch {
			text, err := sum.Summarize(ctx, p.Text)
			if err != nil {
				return n, clawledger.Errorf(clawledger.EUNAVAILABLE, "%v", err)
			}
			ids[i], texts[i] = p.ID, redact.Secrets(text)
		}
		if err := cs.PutLLMSummaries(ctx, sum.Model, ids, texts); err != nil {
			return n, err
		}
		n += len(batch)
		bar.Add(int64(len(batch)))
		after = ids[len(ids)-1]
	}
}
