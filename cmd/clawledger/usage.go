package main

import (
	"cmp"
	"context"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // --timezone works on systems without a zoneinfo database

	"github.com/dustin/go-humanize"
	"github.com/spf13/cobra"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/report"
	"github.com/clawledger/clawledger/sqlite"
	"github.com/clawledger/clawledger/view"
)

// usageHeaders are the first column of each usage report's table.
var usageHeaders = map[string]string{
	"daily":   "DATE",
	"weekly":  "WEEK",
	"monthly": "MONTH",
	"session": "SESSION",
	"model":   "MODEL",
}

func (a *app) usageCommand() *cobra.Command {
	var agent, since, until, tz, weekStart string
	var breakdown bool
	cmd := &cobra.Command{
		Use:       "usage [daily|weekly|monthly|session|model]",
		Short:     "Token usage and cost per day, week, month, session or model (ccusage-compatible totals)",
		ValidArgs: []string{"daily", "weekly", "monthly", "session", "model"},
		Long: `Input, output, cache write and cache read tokens, total tokens and cost of
every assistant message, per period (daily by default), session or model.

Each message is counted once, even when a live transcript, its .reset and
.deleted archives and forks all hold a copy. Its model is its own, else the
latest model_change or model-snapshot before it. Cost is the one OpenClaw
recorded with the message. --json rows and totals use ccusage's field names
(totals: inputTokens, outputTokens, cacheCreationTokens, cacheReadTokens,
totalTokens, totalCost) and equal ccusage's on the same state dir, except
where docs/usage.md explains why not.

Cron run logs report their runs' usage too (snake_case usage fields); it is
shown on its own line and not added to the totals, since the runs' own
transcripts already hold it.`,
		Args: cobra.MatchAll(cobra.MaximumNArgs(1), cobra.OnlyValidArgs),
	}
	refresh := a.addRefreshFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		ctx := cmd.Context()
		kind := "daily"
		if len(args) == 1 {
			kind = args[0]
		}
		loc, err := loadLocation(tz)
		if err != nil {
			return err
		}
		start, err := report.ParseWeekday(weekStart)
		if err != nil {
			return usagef("--week-start: %v", err)
		}
		f := clawledger.UsageFilter{Agent: agent}
		if f.Since, f.Until, err = parseRange(since, until, time.Now(), loc); err != nil {
			return err
		}
		db, err := a.queryDB(ctx, refresh)
		if err != nil {
			return err
		}
		defer db.Close()
		f.BySource = kind == "session"
		groups, err := db.Usage(ctx, f)
		if err != nil {
			return err
		}
		cron, err := db.CronUsage(ctx, f)
		if err != nil {
			return err
		}
		var sessions map[int64]*clawledger.Session
		if f.BySource {
			if sessions, err = sessionsBySource(ctx, db); err != nil {
				return err
			}
		}
		rep := report.NewUsageReport()
		rowSession := map[string]*clawledger.Session{}
		for i := range groups {
			g := &groups[i]
			key := usageKey(kind, g, loc, start, sessions[g.SourceID])
			if _, ok := rowSession[key]; !ok && f.BySource {
				rowSession[key] = sessions[g.SourceID]
			}
			rep.Add(key, g)
		}
		u := view.NewUsage(kind, rep, rowSession, cron, loc.String())
		if a.json {
			return a.printJSON(u)
		}
		a.printUsage(u, breakdown)
		return nil
	}
	fl := cmd.Flags()
	fl.StringVar(&agent, "agent", "", "only this agent (default: all agents)")
	fl.StringVar(&since, "since", "", "from this date or time on (YYYY-MM-DD in --timezone, RFC 3339, or an age like 7d)")
	fl.StringVar(&until, "until", "", "up to this date (inclusive) or time")
	fl.StringVarP(&tz, "timezone", "z", "", "time zone the periods are cut in (IANA name such as Europe/Berlin, or UTC; default: local)")
	fl.StringVar(&weekStart, "week-start", "sunday", "first day of a week for weekly (ccusage's default is sunday)")
	fl.BoolVar(&breakdown, "breakdown", false, "show each model's share under each row")
	return cmd
}

// usageKey is the row a group of messages counts in: its period, its
// session (s: the transcript the messages were first written in) or its model.
func usageKey(kind string, g *clawledger.UsageGroup, loc *time.Location, weekStart time.Weekday, s *clawledger.Session) string {
	switch kind {
	case "session":
		if s == nil || s.SessionID == "" { // no header id: the transcript alone
			return "source\x00" + strconv.FormatInt(g.SourceID, 10)
		}
		return s.AgentID + "\x00" + s.SessionID + "\x00" + s.Topic
	case "model":
		return cmp.Or(g.Model, report.UnknownModel)
	}
	p, _ := report.ParsePeriod(kind)
	return report.Bucket(p, g.Start, loc, weekStart)
}

// sessionsBySource maps every transcript, archives included, to its session.
func sessionsBySource(ctx context.Context, db *sqlite.DB) (map[int64]*clawledger.Session, error) {
	list, err := db.Sessions(ctx, clawledger.SessionFilter{IncludeDeleted: true})
	if err != nil {
		return nil, err
	}
	out := make(map[int64]*clawledger.Session, len(list))
	for _, s := range list {
		out[s.SourceID] = s
	}
	return out, nil
}

func (a *app) printUsage(u *view.Usage, breakdown bool) {
	kind, rows, totals, cron := u.Kind, u.Rows, u.Totals, u.Cron
	if len(rows) == 0 {
		a.printf("no usage\n")
	} else {
		second := "MODELS"
		if kind == "model" {
			second = "PROVIDER"
		}
		tw := newTable(a.stdout, usageHeaders[kind], second, "INPUT", "OUTPUT", "CACHE WRITE", "CACHE READ", "TOTAL TOKENS", "COST", "MSGS")
		for _, r := range rows {
			first, second := r.Date+r.Week+r.Month+r.Model, strings.Join(r.ModelsUsed, ", ")
			switch kind {
			case "session":
				first = r.Agent + "/" + shortID(r.SessionID)
				if r.Topic != "" {
					first += " #" + r.Topic
				}
			case "model":
				second = r.Provider
			}
			tw.row(first, second, comma(r.InputTokens), comma(r.OutputTokens), comma(r.CacheCreationTokens), comma(r.CacheReadTokens),
				comma(r.TotalTokens), money(r.TotalCost), r.MessageCount)
			if breakdown {
				for _, m := range r.ModelBreakdowns {
					tw.row("", "  "+m.ModelName, comma(m.InputTokens), comma(m.OutputTokens), comma(m.CacheCreationTokens),
						comma(m.CacheReadTokens), comma(m.TotalTokens), money(m.Cost), m.MessageCount)
				}
			}
		}
		tw.row("TOTAL", "", comma(totals.InputTokens), comma(totals.OutputTokens), comma(totals.CacheCreationTokens), comma(totals.CacheReadTokens),
			comma(totals.TotalTokens), money(totals.TotalCost), u.Messages)
		tw.flush()
	}
	if cron.Runs > 0 {
		a.printf("\ncron runs  %d finished (%d with usage): input %s, output %s, cache write %s, cache read %s, total %s\n"+
			"           (held in the runs' own transcripts too, so not added to the total above)\n",
			cron.Runs, cron.RunsWithUsage, comma(cron.InputTokens), comma(cron.OutputTokens), comma(cron.CacheCreationTokens), comma(cron.CacheReadTokens), comma(cron.TotalTokens))
	}
}

func comma(n int64) string { return humanize.Comma(n) }

// loadLocation reads --timezone: an IANA name, UTC, or empty for local time.
func loadLocation(name string) (*time.Location, error) {
	if name == "" || strings.EqualFold(name, "local") {
		return time.Local, nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, usagef("--timezone %q: not a time zone name (e.g. UTC, Europe/Berlin, America/New_York)", name)
	}
	return loc, nil
}
