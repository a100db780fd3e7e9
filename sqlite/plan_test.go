package sqlite

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/clawledger/clawledger"
)

// TestReadPlans: the reads a web page makes per request seek, never walk
// every session. A page of the session list reads sessions_recent in
// order, with no sort of every session (the index's order is the list's),
// and a session reference is resolved by index seeks: its id, its path, a
// prefix of its id. Status counts in one pass over the sources.
func TestReadPlans(t *testing.T) {
	ctx := context.Background()
	db, _ := openStateDir(t)
	if err := db.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	sorted := []string{"USE TEMP B-TREE FOR ORDER BY", "USE TEMP B-TREE FOR LAST TERM OF ORDER BY"}
	scans := []string{"SCAN s", "SCAN src", "SCAN sessions"}
	page, pageArgs := sessionsQuery(clawledger.SessionFilter{Limit: 50})
	agentPage, agentArgs := sessionsQuery(clawledger.SessionFilter{Agent: "main", Since: 1, Limit: 50})
	all, allArgs := sessionsQuery(clawledger.SessionFilter{})
	for _, c := range []struct {
		name     string
		query    string
		args     []any
		top, any []string // steps banned in the query itself, and anywhere
	}{
		{"sessions page", page, pageArgs, append(sorted, "SCAN src"), nil},
		{"an agent's sessions page", agentPage, agentArgs, append(sorted, "SCAN src"), nil},
		{"every session", all, allArgs, sorted, nil},
		{"session by id or path", findExact, []any{"x", "x"}, nil, append(scans, "SCAN sources")},
		// a path's suffix is found by a scan of the paths (never of the sessions)
		{"session by id prefix or path suffix", findPrefix, []any{"ab%", "%/ab"}, nil, scans},
		// status reads the sources once, not once per count
		{"status", statusDirs, nil, nil, []string{"SEARCH s USING INDEX sqlite_autoindex_sources_1",
			"SEARCH s USING COVERING INDEX sqlite_autoindex_sources_1"}},
	} {
		plan := explain(t, db, c.query, c.args...)
		for _, step := range plan {
			banned := c.any
			if step.top {
				banned = append(banned, c.top...)
			}
			for _, b := range banned {
				if step.detail == b || strings.HasPrefix(step.detail, b+" ") {
					t.Errorf("%s: the plan has %q", c.name, step.detail)
				}
			}
		}
	}
}

type planStep struct {
	detail string
	top    bool // a step of the query itself, not of a subquery
}

// explain is a query's plan.
func explain(t *testing.T, db *DB, query string, args ...any) []planStep {
	t.Helper()
	rows, err := db.r.DB.QueryContext(context.Background(), "EXPLAIN QUERY PLAN "+query, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []planStep
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, planStep{detail, parent == 0})
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return plan
}

// TestUsageSlotsPlan: a commit sums again only the quarter hours that
// changed, found in lines_usage_slots (never a walk of every message), in
// the index's order (no sort: the sums add up as usage's query adds them).
func TestUsageSlotsPlan(t *testing.T) {
	db, _ := openStateDir(t)
	if err := db.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	q := fmt.Sprintf(usageSums, usageSlot, "", " AND "+usageSlot+" >= ? AND "+usageSlot+" < ?", countedOnce)
	for _, step := range explain(t, db, q, 1, 2) {
		if strings.HasPrefix(step.detail, "SCAN m") || strings.HasPrefix(step.detail, "USE TEMP B-TREE") {
			t.Errorf("the plan has %q", step.detail)
		}
	}
}
