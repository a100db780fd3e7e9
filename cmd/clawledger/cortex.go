package main

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/clawledger/clawledger/ledger"
	"github.com/clawledger/clawledger/view"
)

func newCortexCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "cortex",
		Short: "Episodes, facets and entities derived from the ledger",
		Long: `The cortex is derived from the ledger: every transcript cut into episodes
(coherent segments of work, each with an extractive summary: the ask, the
outcome, files read and modified, commands run, URLs fetched, errors met),
the facets found in each (files, commands, URLs, tools, error kinds, models,
projects, channels, peers, skills, topic keywords) with the entries they
came from, and the entities they name across agents and sessions.

An episode starts at a session start or reset, after a compaction, at a user
ask after a time gap (30 minutes) and at a model switch after an ask.

Every ingest, watch and query keeps the cortex current from the lines it
added; a replaced transcript is derived again. ` + "`cortex rebuild`" + ` derives it
all again, with the same result. Kept on SQLite ledgers.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newCortexEpisodesCmd(a), newCortexFacetsCmd(a), newCortexEntityCmd(a), newCortexRebuildCmd(a))
	return cmd
}

// completeQuery completes a cortex query's request from its flags: its
// refresh and state dirs, then checks it.
func (a *app) completeQuery(f refreshFlag, r *ledger.Refresh, dirs *[]string, req interface{ Validate() error }) error {
	*r = f.policy()
	var err error
	if *dirs, err = a.scope(); err != nil {
		return err
	}
	return req.Validate()
}

// cortexEpisodesOptions are the flags of cortex episodes.
type cortexEpisodesOptions struct {
	*app
	ledger.CortexEpisodesRequest
	since, until string
	refresh      refreshFlag
}

func newCortexEpisodesCmd(a *app) *cobra.Command {
	o := &cortexEpisodesOptions{app: a, CortexEpisodesRequest: ledger.CortexEpisodesDefaults()}
	cmd := &cobra.Command{
		Use:   "episodes [SESSION]",
		Short: "List episodes: one session's in order, else the newest first",
		Long: `List episodes with their counts (entries, messages, tool calls, errors,
tokens, cost), their summary, topic keywords and facets, each facet with the
entries it came from. SESSION is a session id, a unique prefix of one or a
transcript path: its episodes in file order (all its transcripts). Without
it, the newest episodes first.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				o.Session = args[0]
			}
			var err error
			if o.Since, o.Until, err = parseRange(o.since, o.until, time.Now(), time.Local); err != nil {
				return err
			}
			if err := a.completeQuery(o.refresh, &o.Refresh, &o.StateDirs, &o.CortexEpisodesRequest); err != nil {
				return err
			}
			return a.runs(o, func() error { return cortexEpisodesRun(cmd.Context(), o) })
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.Agent, "agent", "", "only this agent's episodes")
	fl.StringVar(&o.since, "since", "", "only episodes that ended since (YYYY-MM-DD, RFC 3339, or an age like 7d)")
	fl.StringVar(&o.until, "until", "", "only episodes that started up to this date (inclusive) or time")
	fl.IntVar(&o.Limit, "limit", o.Limit, "at most this many episodes (0: all)")
	fl.BoolVar(&o.refresh.off, "no-refresh", false, noRefreshHelp)
	return cmd
}

func cortexEpisodesRun(ctx context.Context, o *cortexEpisodesOptions) error {
	svc, err := o.service()
	if err != nil {
		return err
	}
	out, err := svc.CortexEpisodes(ctx, o.CortexEpisodesRequest)
	if err != nil {
		return err
	}
	if o.json {
		return o.printJSON(out)
	}
	if len(out.Episodes) == 0 {
		o.printf("no episodes\n")
	} else {
		tw := newTable(o.stdout, "START", "AGENT", "SESSION", "#", "BOUNDARY", "MSGS", "TOOLS", "ERRORS", "TOPICS", "ASK")
		for _, ep := range out.Episodes {
			tw.row(shortTime(ep.Start), ep.Agent, shortID(ep.SessionID), ep.Seq, ep.Boundary, ep.Messages, ep.ToolCalls, ep.Errors,
				topicList(ep.Topics, 3), oneLineText(ep.Summary.Ask, 60))
		}
		tw.flush()
	}
	if out.Note != "" {
		o.warnf("note: %s\n", out.Note)
	}
	return nil
}

// shortTime is a time to the minute, or "-".
func shortTime(t *string) string {
	if t == nil {
		return "-"
	}
	return (*t)[:16]
}

func topicList(topics []view.Topic, n int) string {
	var terms []string
	for i, t := range topics {
		if i == n {
			break
		}
		terms = append(terms, t.Term)
	}
	return strings.Join(terms, ",")
}

// cortexFacetsOptions are the flags of cortex facets.
type cortexFacetsOptions struct {
	*app
	ledger.CortexFacetsRequest
	refresh refreshFlag
}

func newCortexFacetsCmd(a *app) *cobra.Command {
	o := &cortexFacetsOptions{app: a, CortexFacetsRequest: ledger.CortexFacetsDefaults()}
	cmd := &cobra.Command{
		Use:   "facets",
		Short: "List facets, the most widespread first",
		Long: `List facets summed over the episodes they occur in: how many episodes,
how many entries, first and last seen, confidence (1 when extracted, less
when inferred). Types: file, command, url, tool, error, model, project,
channel, peer, skill, topic. Without --type every type but topics, which are
the episodes' words weighed by TF-IDF (--type topic).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := a.completeQuery(o.refresh, &o.Refresh, &o.StateDirs, &o.CortexFacetsRequest); err != nil {
				return err
			}
			return a.runs(o, func() error { return cortexFacetsRun(cmd.Context(), o) })
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.Type, "type", "", "only facets of this type")
	fl.IntVar(&o.Top, "top", o.Top, "the N most widespread (0: all)")
	fl.StringVar(&o.Agent, "agent", "", "count only this agent's episodes")
	fl.BoolVar(&o.refresh.off, "no-refresh", false, noRefreshHelp)
	return cmd
}

func cortexFacetsRun(ctx context.Context, o *cortexFacetsOptions) error {
	svc, err := o.service()
	if err != nil {
		return err
	}
	out, err := svc.CortexFacets(ctx, o.CortexFacetsRequest)
	if err != nil {
		return err
	}
	if o.json {
		return o.printJSON(out)
	}
	if len(out.Facets) == 0 {
		o.printf("no facets\n")
		return nil
	}
	tw := newTable(o.stdout, "TYPE", "VALUE", "EPISODES", "COUNT", "FIRST SEEN", "LAST SEEN", "CONFIDENCE")
	for _, f := range out.Facets {
		tw.row(f.Type, oneLineText(f.Value, 80), f.Episodes, f.Count, shortTime(f.FirstSeen), shortTime(f.LastSeen),
			strconv.FormatFloat(f.Confidence, 'f', -1, 64))
	}
	tw.flush()
	return nil
}

// cortexEntityOptions are the flags of cortex entity.
type cortexEntityOptions struct {
	*app
	ledger.CortexEntityRequest
	refresh refreshFlag
}

func newCortexEntityCmd(a *app) *cobra.Command {
	o := &cortexEntityOptions{app: a, CortexEntityRequest: ledger.CortexEntityDefaults()}
	cmd := &cobra.Command{
		Use:   "entity VALUE",
		Short: "Every episode that touched a file, URL, command, project, peer, ..., newest first",
		Long: `List every episode that touched an entity, newest first, across agents and
sessions: its agent and session, the facet it matched and the entries it
came from. A file is found by its path or its trailing path components
(report.md, docs/report.md), a URL by itself or its host, a topic by its
word, anything else by its value.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.Value = args[0]; strings.TrimSpace(o.Value) == "" {
				return usagef("give a VALUE: a file, URL, command, project, peer, ...")
			}
			if err := a.completeQuery(o.refresh, &o.Refresh, &o.StateDirs, &o.CortexEntityRequest); err != nil {
				return err
			}
			return a.runs(o, func() error { return cortexEntityRun(cmd.Context(), o) })
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.Type, "type", "", "only facets of this type (file, url, command, project, peer, ...)")
	fl.StringVar(&o.Agent, "agent", "", "only this agent's episodes")
	fl.IntVar(&o.Limit, "limit", o.Limit, "at most this many episodes (0: all)")
	fl.BoolVar(&o.refresh.off, "no-refresh", false, noRefreshHelp)
	return cmd
}

func cortexEntityRun(ctx context.Context, o *cortexEntityOptions) error {
	svc, err := o.service()
	if err != nil {
		return err
	}
	out, err := svc.CortexEntity(ctx, o.CortexEntityRequest)
	if err != nil {
		return err
	}
	if o.json {
		return o.printJSON(out)
	}
	if len(out.Hits) == 0 {
		o.printf("no episode touched %s\n", out.Value)
		return nil
	}
	tw := newTable(o.stdout, "END", "AGENT", "SESSION", "#", "MATCH", "COUNT", "ENTRIES", "ASK")
	for _, h := range out.Hits {
		ep := h.Episode
		tw.row(shortTime(ep.End), ep.Agent, shortID(ep.SessionID), ep.Seq, oneLineText(h.Match.Type+" "+h.Match.Value, 60), h.Match.Count,
			oneLineText(strings.Join(h.Match.EntryIDs, ","), 30), oneLineText(ep.Summary.Ask, 50))
	}
	tw.flush()
	return nil
}

// cortexRebuildOptions are the flags of cortex rebuild.
type cortexRebuildOptions struct {
	*app
	ledger.CortexRebuildRequest
}

func newCortexRebuildCmd(a *app) *cobra.Command {
	o := &cortexRebuildOptions{app: a}
	cmd := &cobra.Command{
		Use:   "rebuild",
		Short: "Derive the whole cortex again from the ledger",
		Long: `Derive the whole cortex again from the ledger, in one transaction: queries
answer from the previous cortex until it is done, and an interrupted rebuild
leaves it as it was. Ingest, watch and queries keep the cortex current by
themselves; a rebuild gives the same cortex, byte for byte. Episode
summaries are then embedded when an embedding provider is configured.

--llm-summary then asks an OpenAI-compatible chat model for a one or two
sentence summary of each episode, from its extractive summary (secrets
masked), and shows it with the episode (llm_summary). They are cached by
the hash of that text: only new or changed episodes are asked again. The
endpoint is $CLAWLEDGER_LLM_BASE_URL (default https://api.openai.com/v1),
the model $CLAWLEDGER_LLM_MODEL (default gpt-4o-mini), the key
$CLAWLEDGER_LLM_API_KEY (else $OPENAI_API_KEY for OpenAI's own API). Nothing
else calls it: not a query, an ingest or a watch.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.runs(o, func() error { return cortexRebuildRun(cmd.Context(), o) })
		},
	}
	cmd.Flags().BoolVar(&o.LLMSummary, "llm-summary", false, "then summarize each new or changed episode with the configured chat model")
	return cmd
}

func cortexRebuildRun(ctx context.Context, o *cortexRebuildOptions) error {
	svc, err := o.service()
	if err != nil {
		return err
	}
	out, err := svc.CortexRebuild(ctx, o.CortexRebuildRequest)
	if err != nil {
		return err
	}
	if o.json {
		return o.printJSON(out)
	}
	a := o.app
	a.printf("derived    %d episodes from %d transcripts (%d lines), %d facets\n", out.Episodes, out.Sources, out.Lines, out.Facets)
	if out.Vectors > 0 || out.Embedded > 0 {
		a.printf("embedded   %d episode summaries (%d with vectors)\n", out.Embedded, out.Vectors)
	}
	if o.LLMSummary {
		a.printf("summarized %d episodes by the LLM (%d from the cache)\n", out.Summarized, out.LLMSummaries-out.Summarized)
	}
	if out.Note != "" {
		a.warnf("note: %s\n", out.Note)
	}
	return nil
}
