package report

import (
	"cmp"
	"slices"

	"github.com/clawledger/clawledger"
)

// Tokens sums the usage of some assistant messages.
type Tokens struct {
	Input      int64
	Output     int64
	CacheRead  int64
	CacheWrite int64
	Total      int64 // per message the larger of the four kinds' sum and the written total (ccusage's totalTokens)
	Cost       float64
	Messages   int64
}

// Add counts a group of messages.
func (t *Tokens) Add(g *clawledger.UsageGroup) {
	t.Input += g.Input
	t.Output += g.Output
	t.CacheRead += g.CacheRead
	t.CacheWrite += g.CacheWrite
	t.Total += g.Tokens
	t.Cost += g.Cost
	t.Messages += g.Messages
}

// ModelUsage is one model's share of a row.
type ModelUsage struct {
	Model    string
	Provider string // the provider of its first message
	Tokens
}

// UsageRow is one row of a usage report: a period, a session or a model.
type UsageRow struct {
	Key         string
	First, Last int64 // epoch ms of its first and last message
	Tokens
	Models []*ModelUsage // most expensive first

	byModel map[string]*ModelUsage
}

// UnknownModel names the model of messages no model was attributed to.
const UnknownModel = "unknown"

// UsageReport groups usage records into rows by a key the caller chooses
// (a period, a session, a model) and keeps the totals.
type UsageReport struct {
	Totals Tokens
	rows   map[string]*UsageRow
}

// NewUsageReport returns an empty report.
func NewUsageReport() *UsageReport { return &UsageReport{rows: map[string]*UsageRow{}} }

// Add counts g in the row key.
func (r *UsageReport) Add(key string, g *clawledger.UsageGroup) {
	row := r.rows[key]
	if row == nil {
		row = &UsageRow{Key: key, First: g.First, Last: g.Last, byModel: map[string]*ModelUsage{}}
		r.rows[key] = row
	}
	row.First, row.Last = min(row.First, g.First), max(row.Last, g.Last)
	row.Add(g)
	model := cmp.Or(g.Model, UnknownModel)
	m := row.byModel[model]
	if m == nil {
		m = &ModelUsage{Model: model, Provider: g.Provider}
		row.byModel[model] = m
	}
	m.Add(g)
	r.Totals.Add(g)
}

// Rows returns the rows ordered by key, each with its models most
// expensive first.
func (r *UsageReport) Rows() []*UsageRow {
	out := make([]*UsageRow, 0, len(r.rows))
	for _, row := range r.rows {
		row.Models = row.Models[:0]
		for _, m := range row.byModel {
			row.Models = append(row.Models, m)
		}
		slices.SortFunc(row.Models, func(a, b *ModelUsage) int {
			return cmp.Or(cmp.Compare(b.Cost, a.Cost), cmp.Compare(b.Total, a.Total), cmp.Compare(a.Model, b.Model))
		})
		out = append(out, row)
	}
	slices.SortFunc(out, func(a, b *UsageRow) int { return cmp.Compare(a.Key, b.Key) })
	return out
}
