package sqlite_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/clawledger/clawledger"
)

// TestUserTexts reads the first and last user messages of several
// transcripts in one call: each its own, in file order, empty texts
// skipped, a transcript without user messages absent.
func TestUserTexts(t *testing.T) {
	l := newLedger(t)
	start := time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)
	a := l.transcript("main", start, "a1", "r", "", "r", "a3", "r", "a4", "r", "a5", "r", "a6", "r", "a7", "r")
	b := l.transcript("main", start.Add(time.Hour), "b1", "r")
	l.transcript("ops", start.Add(2*time.Hour)) // no user messages
	l.ingest()
	ctx := context.Background()
	list, err := l.db.Sessions(ctx, clawledger.SessionFilter{})
	if err != nil {
		t.Fatal(err)
	}
	src := map[string]int64{}
	var ids []int64
	for _, s := range list {
		src[s.SessionID] = s.SourceID
		ids = append(ids, s.SourceID)
	}
	if len(ids) != 3 {
		t.Fatalf("%d sessions, want 3", len(ids))
	}
	ids = append(ids, ids[0]) // a repeated id counts once
	for _, tc := range []struct {
		n    int
		last bool
		want map[string][]string
	}{
		{5, false, map[string][]string{a.ID: {"a1", "a3", "a4", "a5", "a6"}, b.ID: {"b1"}}},
		{3, true, map[string][]string{a.ID: {"a5", "a6", "a7"}, b.ID: {"b1"}}},
	} {
		got, err := l.db.UserTexts(ctx, ids, tc.n, tc.last)
		if err != nil {
			t.Fatal(err)
		}
		want := map[int64][]string{}
		for id, texts := range tc.want {
			want[src[id]] = texts
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("UserTexts(%d, last=%v) = %v, want %v", tc.n, tc.last, got, want)
		}
	}
	if got, err := l.db.UserTexts(ctx, nil, 3, true); err != nil || len(got) != 0 {
		t.Errorf("no ids: %v, %v", got, err)
	}
}
