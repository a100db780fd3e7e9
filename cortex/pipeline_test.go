package cortex_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/cortex"
)

// fakeLedger holds transcripts of two lines (a header and an ask), and
// fails to read one of them.
type fakeLedger struct{ failOn int64 }

func (l fakeLedger) CortexLines(_ context.Context, sourceID, after int64, _ int) ([]clawledger.CortexLine, error) {
	if sourceID == l.failOn {
		return nil, errors.New("disk on fire")
	}
	if after >= 0 {
		return nil, nil
	}
	header := `{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00Z","cwd":"/w"}`
	ask := `{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:01Z","message":{"role":"user","content":"Fix it"}}`
	return []clawledger.CortexLine{
		{Line: clawledger.Line{Offset: 0, No: 1, Raw: []byte(header)}},
		{Line: clawledger.Line{Offset: int64(len(header) + 1), No: 2, Raw: []byte(ask)}, EntryID: "a"},
	}, nil
}

// fakeStore lists transcripts to derive and records what is put, failing
// to put one of them.
type fakeStore struct {
	clawledger.CortexStore // the queries: not used by a Builder
	srcs                   []*clawledger.CortexSource
	failOn                 int64
	put                    []int64
	committed              bool
}

func (s *fakeStore) CortexSources(context.Context, bool) ([]*clawledger.CortexSource, bool, error) {
	return s.srcs, false, nil
}

func (s *fakeStore) BeginCortex(context.Context, bool) (clawledger.CortexTx, error) { return s, nil }

func (s *fakeStore) Put(_ context.Context, c *clawledger.CortexChange) error {
	if c.SourceID == s.failOn {
		return errors.New("disk full")
	}
	s.put = append(s.put, c.SourceID)
	return nil
}

func (s *fakeStore) Commit(context.Context, bool) error { s.committed = true; return nil }

func (s *fakeStore) Rollback() error { return nil }

// TestBuilderPipeline: the changes of a run are stored in the order of the
// transcripts, and a failure to read or to store one stops the run with an
// error naming it, nothing committed (the stages still running stop too:
// the transcripts outnumber what the stages hold between them).
func TestBuilderPipeline(t *testing.T) {
	const n = 40
	srcs := make([]*clawledger.CortexSource, n)
	want := make([]int64, n)
	for i := range srcs {
		srcs[i] = &clawledger.CortexSource{SourceID: int64(i + 1), Path: fmt.Sprintf("agents/main/sessions/%02d.jsonl", i+1), Offset: -1}
		want[i] = int64(i + 1)
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, c := range []struct {
		name                  string
		ctx                   context.Context
		readFails, storeFails int64
		err                   string
	}{
		{name: "every transcript", ctx: context.Background()},
		{name: "a read fails", ctx: context.Background(), readFails: 17, err: "agents/main/sessions/17.jsonl: disk on fire"},
		{name: "a put fails", ctx: context.Background(), storeFails: 5, err: "agents/main/sessions/05.jsonl: disk full"},
		{name: "cancelled", ctx: cancelled, err: context.Canceled.Error()},
	} {
		t.Run(c.name, func(t *testing.T) {
			store := &fakeStore{srcs: srcs, failOn: c.storeFails}
			b := &cortex.Builder{Ledger: fakeLedger{failOn: c.readFails}, Store: store}
			st, err := b.Rebuild(c.ctx)
			if c.err == "" {
				if err != nil || !store.committed || !slices.Equal(store.put, want) || st.Sources != n || st.Lines != 2*n {
					t.Fatalf("err %v, committed %v, put %v, stats %+v", err, store.committed, store.put, st)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.err) || store.committed {
				t.Fatalf("err %v (want %q), committed %v", err, c.err, store.committed)
			}
			if len(store.put) > 0 && !slices.Equal(store.put, want[:len(store.put)]) {
				t.Errorf("put out of order: %v", store.put)
			}
		})
	}
}

// TestUpdateMaxBehind: an update further behind than MaxBehind derives
// nothing and says how far behind it is; one within it derives all; a
// rebuild ignores it.
func TestUpdateMaxBehind(t *testing.T) {
	srcs := []*clawledger.CortexSource{
		{SourceID: 1, Path: "a.jsonl", Offset: -1, Lines: 2},
		{SourceID: 2, Path: "b.jsonl", Offset: -1, Lines: 2},
	}
	for _, c := range []struct {
		max     int64
		rebuild bool
		put     int
		behind  int64
	}{
		{max: 3, put: 0, behind: 4},
		{max: 4, put: 2},
		{max: 0, put: 2},
		{max: 1, rebuild: true, put: 2},
	} {
		store := &fakeStore{srcs: srcs}
		b := &cortex.Builder{Ledger: fakeLedger{}, Store: store, MaxBehind: c.max}
		run := b.Update
		if c.rebuild {
			run = b.Rebuild
		}
		st, err := run(context.Background())
		if err != nil || len(store.put) != c.put || st.Behind != c.behind || store.committed != (c.put > 0) {
			t.Errorf("max %d rebuild %v: err %v, put %v, stats %+v, committed %v", c.max, c.rebuild, err, store.put, st, store.committed)
		}
	}
}
