package sqlite_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/collect"
	"github.com/clawledger/clawledger/cortex"
	"github.com/clawledger/clawledger/internal/indexdigest"
	"github.com/clawledger/clawledger/internal/testenv"
	"github.com/clawledger/clawledger/openclaw"
	"github.com/clawledger/clawledger/sqlite"
)

// fedCortexIngest ingests dirs into db with its first cortex fed by the
// import, then updates the cortex with what the feed derived.
func fedCortexIngest(t *testing.T, db *sqlite.DB, fsys openclaw.FS, dirs ...string) cortex.Stats {
	t.Helper()
	ctx := context.Background()
	f := cortex.StartFeed(ctx, cortex.Options{}, testenv.TempFile(t))
	defer f.Stop()
	detach, err := db.FeedCortex(ctx, f)
	if err != nil || detach == nil {
		t.Fatalf("feed: %v", err)
	}
	_, err = (&collect.Collector{Store: db, FS: fsys}).Run(ctx, dirs)
	detach()
	if err != nil {
		t.Fatal(err)
	}
	return updateCortex(t, db, f)
}

// updateCortex updates db's cortex, with what fed derived when set.
func updateCortex(t *testing.T, db *sqlite.DB, fed *cortex.Feed) cortex.Stats {
	t.Helper()
	st, err := (&cortex.Builder{Ledger: db, Store: db, Fed: fed}).Update(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// sameCortex fails unless both ledgers' cortexes hold the same: every row
// of every table, and every word instance of the summaries' index.
func sameCortex(t *testing.T, when string, serial, fed *sqlite.DB) {
	t.Helper()
	sameDigests(t, when+": the cortexes", indexdigest.WriteCortex, serial, fed)
}

// transcriptsWithLines is how many transcripts hold a line.
func transcriptsWithLines(t *testing.T, db *sqlite.DB) int {
	return count(t, db.Path, `SELECT count(*) FROM sources WHERE kind = 'transcript' AND line_count > 0`)
}

// TestFeedCortex: a cortex the import feeds is the cortex an update
// derives from the lines read back, row for row, table for table, on the
// trees the index's feed is tried on (sessions.json stored after the
// transcripts it names: their channels and peers are completed after the
// import). The feed took every transcript that holds a line: none was
// read back.
func TestFeedCortex(t *testing.T) {
	for _, c := range feedTrees() {
		t.Run(c.name, func(t *testing.T) {
			dirs := c.tree(t, t.TempDir())
			tmp := t.TempDir()
			serial, fed := openLedger(t, filepath.Join(tmp, "serial.db")), openLedger(t, filepath.Join(tmp, "fed.db"))
			if _, err := (&collect.Collector{Store: serial, FS: openclaw.OS}).Run(context.Background(), dirs); err != nil {
				t.Fatal(err)
			}
			if transcriptsWithLines(t, serial) == 0 {
				t.Skip("no transcript")
			}
			want := updateCortex(t, serial, nil)
			st := fedCortexIngest(t, fed, openclaw.OS, dirs...)
			t.Logf("%+v", st)
			sameCortex(t, "after the first ingest", serial, fed)
			if n := transcriptsWithLines(t, fed); st.Fed == 0 || st.Fed != n || st.Sources != want.Sources || st.Lines != want.Lines {
				t.Fatalf("the update took %d of the %d transcripts with lines from the feed (%+v, read back: %+v)", st.Fed, n, st, want)
			}
		})
	}
}

// TestFeedCortexPeers: the sessions the fixture's index names on a channel
// with a peer have those facets in every episode of a fed cortex, as in
// one read back (sessions.json is stored after their transcripts).
func TestFeedCortexPeers(t *testing.T) {
	tmp := t.TempDir()
	dirs := feedTrees()[0].tree(t, tmp)
	serial, fed := openLedger(t, filepath.Join(tmp, "serial.db")), openLedger(t, filepath.Join(tmp, "fed.db"))
	if _, err := (&collect.Collector{Store: serial, FS: openclaw.OS}).Run(context.Background(), dirs); err != nil {
		t.Fatal(err)
	}
	updateCortex(t, serial, nil)
	st := fedCortexIngest(t, fed, openclaw.OS, dirs...)
	sameCortex(t, "after the first ingest", serial, fed)
	q := `SELECT count(*) FROM cortex_episodes e WHERE EXISTS (SELECT 1 FROM cortex_facet_episodes f
		WHERE f.episode_id = e.id AND f.type = 'peer') AND EXISTS (SELECT 1 FROM cortex_links l WHERE l.episode_id = e.id
		AND l.relation = 'on_channel')`
	if n := count(t, fed.Path, q+` AND e.source_id < (SELECT min(id) FROM sources WHERE kind = 'index')`); n == 0 || st.Fed == 0 {
		t.Fatalf("%d fed episodes with a peer on a channel stored before the index (%+v)", n, st)
	}
}

// recordedLines is a cortex feed that keeps every line it is given.
type recordedLines struct {
	lines map[int64][]clawledger.CortexLine
	out   map[int64]bool
}

func (r *recordedLines) Line(id int64, l clawledger.CortexLine) { r.lines[id] = append(r.lines[id], l) }
func (r *recordedLines) Stored(int64, int64)                    {}
func (r *recordedLines) Discard(id int64)                       { r.out[id] = true }
func (r *recordedLines) Abort()                                 { r.out[0] = true }

// TestStoredCortexLines: every line the writer hands a cortex feed is the
// line the cortex reads back from the ledger (the tool calls of a message
// that cannot call one aside: only an assistant's are derived from).
func TestStoredCortexLines(t *testing.T) {
	ctx := context.Background()
	for _, c := range feedTrees() {
		t.Run(c.name, func(t *testing.T) {
			dirs := c.tree(t, t.TempDir())
			db := openLedger(t, filepath.Join(t.TempDir(), "ledger.db"))
			rec := &recordedLines{lines: map[int64][]clawledger.CortexLine{}, out: map[int64]bool{}}
			detach, err := db.FeedCortex(ctx, rec)
			if err != nil || detach == nil {
				t.Fatalf("feed: %v", err)
			}
			_, err = (&collect.Collector{Store: db, FS: openclaw.OS}).Run(ctx, dirs)
			detach()
			if err != nil {
				t.Fatal(err)
			}
			srcs, _, err := db.CortexSources(ctx, true)
			if err != nil {
				t.Fatal(err)
			}
			var lines int
			for _, src := range srcs {
				if rec.out[src.SourceID] || rec.out[0] {
					t.Logf("%s: taken out", src.Path)
					continue
				}
				back, err := db.CortexLines(ctx, src.SourceID, -1, 1<<30)
				if err != nil {
					t.Fatal(err)
				}
				fed := rec.lines[src.SourceID]
				if len(fed) != len(back) {
					t.Fatalf("%s: %d lines fed, %d read back", src.Path, len(fed), len(back))
				}
				for i := range back {
					if a, b := lineView(back[i]), lineView(fed[i]); !reflect.DeepEqual(a, b) {
						t.Fatalf("%s line %d:\nread back: %s\nfed:       %s", src.Path, back[i].No, render(a), render(b))
					}
				}
				lines += len(back)
			}
			if lines == 0 && transcriptsWithLines(t, db) > 0 {
				t.Fatal("no line compared")
			}
		})
	}
}

// cortexLineView is a CortexLine with what it points to, as compared.
type cortexLineView struct {
	Line        clawledger.CortexLine
	Entry       clawledger.Entry
	Message     clawledger.Message
	Usage       clawledger.Usage
	ExitCode    int64
	Compaction  clawledger.Compaction
	ModelChange clawledger.ModelChange
	ToolCalls   []string
}

func lineView(l clawledger.CortexLine) cortexLineView {
	v := cortexLineView{Line: l}
	if len(l.Raw) == 0 {
		v.Line.Raw = nil
	}
	v.Line.Entry = nil
	e := l.Entry
	if e == nil {
		return v
	}
	v.Entry = *e
	v.Entry.Message, v.Entry.Compaction, v.Entry.ModelChange = nil, nil, nil
	if c := e.Compaction; c != nil {
		v.Compaction = *c
	}
	if mc := e.ModelChange; mc != nil {
		v.ModelChange = *mc
	}
	if m := e.Message; m != nil {
		v.Message = *m
		v.Message.Usage, v.Message.ExitCode, v.Message.ToolCalls = nil, nil, nil
		if m.Usage != nil {
			v.Usage = *m.Usage
		}
		if m.ExitCode != nil {
			v.ExitCode = *m.ExitCode
		}
		if m.Role == "assistant" {
			for _, c := range m.ToolCalls {
				v.ToolCalls = append(v.ToolCalls, c.ID+"|"+c.Name+"|"+string(c.Arguments))
			}
		}
	}
	return v
}

func render(v cortexLineView) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestFeedCortexDropsWhatItCannotHold: a transcript the feed may not
// derive as the ledger holds it (a compressed archive whose read fails
// part way, rolled back to its savepoint; a file rewritten while it is
// read) is read back, and the cortex is still the one an update derives;
// so it is after the next ingest re-reads them.
func TestFeedCortexDropsWhatItCannotHold(t *testing.T) {
	m := newMishapTree(t)
	tmp := t.TempDir()
	serial, fed := openLedger(t, filepath.Join(tmp, "serial.db")), openLedger(t, filepath.Join(tmp, "fed.db"))
	if _, err := (&collect.Collector{Store: serial, FS: m.reads()}).Run(context.Background(), []string{m.state}); err != nil {
		t.Fatal(err)
	}
	updateCortex(t, serial, nil)
	st := fedCortexIngest(t, fed, m.reads(), m.state)
	t.Logf("%+v", st)
	sameCortex(t, "after the first ingest", serial, fed)
	if st.Fed == 0 || st.Fed == st.Sources {
		t.Errorf("the update took %+v: the archive should have been read back", st)
	}
	m.shorten()
	for _, db := range []*sqlite.DB{serial, fed} {
		if _, err := (&collect.Collector{Store: db, FS: openclaw.OS}).Run(context.Background(), []string{m.state}); err != nil {
			t.Fatal(err)
		}
		if st := updateCortex(t, db, nil); st.Sources == 0 {
			t.Fatalf("the next update: %+v", st)
		}
	}
	sameCortex(t, "after the re-read", serial, fed)
}
