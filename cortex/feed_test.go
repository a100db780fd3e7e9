package cortex_test

import (
	"bytes"
	"context"
	"encoding/gob"
	"os"
	"path/filepath"
	"testing"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/cortex"
	"github.com/clawledger/clawledger/internal/fixture"
	"github.com/clawledger/clawledger/internal/indexdigest"
	"github.com/clawledger/clawledger/internal/testenv"
)

// digest is every row of the ledger's cortex (its states too).
func (l *ledger) digest() string {
	l.t.Helper()
	var b bytes.Buffer
	if _, err := indexdigest.WriteCortex(context.Background(), l.db.Path, &b); err != nil {
		l.t.Fatal(err)
	}
	return b.String()
}

// lines reads a transcript's lines back, as the cortex does.
func (l *ledger) lines(src *clawledger.CortexSource) []clawledger.CortexLine {
	l.t.Helper()
	ls, err := l.db.CortexLines(context.Background(), src.SourceID, -1, 1<<30)
	if err != nil || len(ls) < 4 {
		l.t.Fatalf("%s: %d lines, %v", src.Path, len(ls), err)
	}
	return ls
}

// feedLines feeds f a transcript's lines, as its writer stores them, and
// then how many of them are stored.
func feedLines(f *cortex.Feed, src *clawledger.CortexSource, ls []clawledger.CortexLine, stored int64) {
	for _, l := range ls {
		f.Line(src.SourceID, l)
	}
	f.Stored(src.SourceID, stored)
}

// twins ingests a state dir into two ledgers, one (ref) with its cortex
// derived from its lines, and lists the transcripts of the other.
func twins(t *testing.T, state string) (ref, fed *ledger, srcs []*clawledger.CortexSource) {
	t.Helper()
	ref, fed = newLedger(t, state), newLedger(t, state)
	ref.ingest()
	ref.update(cortex.Options{})
	fed.ingest()
	srcs, _, err := fed.db.CortexSources(context.Background(), true)
	if err != nil {
		t.Fatal(err)
	}
	return ref, fed, srcs
}

// TestFeedTakesOutWhatItCannotHold: a transcript fed in two parts with
// another between them, discarded, fed short of what the ledger holds, or
// fed before the write transaction was rolled back is read back from the
// ledger; the others are taken as the feed derived them, in whatever order
// they came, and the cortex is the one an update derives from the ledger.
// Updates after it (the transcripts grown) give what they give the cortex
// derived from the ledger: they resume from the states the feed derived.
func TestFeedTakesOutWhatItCannotHold(t *testing.T) {
	ctx := context.Background()
	m := fixture.NewCortex(filepath.Join(t.TempDir(), ".openclaw"), fixture.CortexOptions{Sessions: 12, Seed: 5})
	if err := m.Write(func(s *fixture.CortexSession) int { return len(s.Lines) * 2 / 3 }); err != nil {
		t.Fatal(err)
	}
	ref, fed, srcs := twins(t, m.StateDir)
	if len(srcs) < 10 {
		t.Fatalf("%d transcripts", len(srcs))
	}
	lines := fed.lines
	f := cortex.StartFeed(ctx, cortex.Options{}, testenv.TempFile(t))
	defer f.Stop()
	// fed before the write transaction was rolled back: read back, as is
	// the rest of the transcript in flight
	feedLines(f, srcs[4], lines(srcs[4]), srcs[4].Lines)
	l5 := lines(srcs[5])
	feedLines(f, srcs[5], l5[:2], 2)
	f.Abort()
	feedLines(f, srcs[5], l5[2:], srcs[5].Lines)
	// in two parts, another transcript between them: read back
	a, b := srcs[0], srcs[1]
	la := lines(a)
	feedLines(f, a, la[:len(la)/2], int64(len(la)/2))
	feedLines(f, b, lines(b), b.Lines)
	feedLines(f, a, la[len(la)/2:], a.Lines)
	// discarded (a re-read, a savepoint rolled back): read back
	feedLines(f, srcs[2], lines(srcs[2]), srcs[2].Lines)
	f.Discard(srcs[2].SourceID)
	// a line short of the ledger: read back
	l3 := lines(srcs[3])
	feedLines(f, srcs[3], l3[:len(l3)-1], int64(len(l3)-1))
	// the others, last first: taken from the feed
	for i := len(srcs) - 1; i >= 6; i-- {
		feedLines(f, srcs[i], lines(srcs[i]), srcs[i].Lines)
	}
	b2 := fed.builder(cortex.Options{})
	b2.Fed = f
	st, err := b2.Update(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := 1 + len(srcs) - 6; st.Fed != want || st.Sources != len(srcs) {
		t.Errorf("the update took %d transcripts of %d from the feed, want %d", st.Fed, st.Sources, want)
	}
	if got, want := fed.digest(), ref.digest(); got != want {
		t.Fatalf("the fed cortex differs from the one derived from the ledger: %s", firstDiff(want, got))
	}

	if err := m.Write(nil); err != nil { // the transcripts grown
		t.Fatal(err)
	}
	for _, l := range []*ledger{ref, fed} {
		l.ingest()
		if st := l.update(cortex.Options{}); st.Sources != len(srcs) {
			t.Fatalf("the update after the transcripts grew derived %+v", st)
		}
	}
	if got, want := fed.digest(), ref.digest(); got != want {
		t.Fatalf("after an update, the fed cortex differs from the one derived from the ledger: %s", firstDiff(want, got))
	}
}

// TestFeedOptions: a feed that derived with other options than the
// update's is not taken.
func TestFeedOptions(t *testing.T) {
	ctx := context.Background()
	m := writeCortex(t, fixture.CortexOptions{Sessions: 4, Seed: 9})
	ref, fed, srcs := twins(t, m.StateDir)
	f := cortex.StartFeed(ctx, cortex.Options{TurnPairs: true}, testenv.TempFile(t))
	defer f.Stop()
	for _, src := range srcs {
		feedLines(f, src, fed.lines(src), src.Lines)
	}
	b := fed.builder(cortex.Options{})
	b.Fed = f
	if st, err := b.Update(ctx); err != nil || st.Fed != 0 {
		t.Fatalf("the update took %+v from a feed of other options (%v)", st, err)
	}
	if got, want := fed.digest(), ref.digest(); got != want {
		t.Fatalf("the cortex differs: %s", firstDiff(want, got))
	}
}

// TestFeedSpillOneStream: the changes the feed keeps are values of one gob
// stream, its type definitions written once (a decoder or encoder per
// change compiled its engine and wrote the types every time), and the
// update reads each of them, in any order, to the same cortex.
func TestFeedSpillOneStream(t *testing.T) {
	ctx := context.Background()
	m := writeCortex(t, fixture.CortexOptions{Sessions: 6, Seed: 3})
	ref, fed, srcs := twins(t, m.StateDir)
	spill := testenv.TempFile(t)
	f := cortex.StartFeed(ctx, cortex.Options{}, spill)
	defer f.Stop()
	for i := len(srcs) - 1; i >= 0; i-- { // stored last first, read first first
		feedLines(f, srcs[i], fed.lines(srcs[i]), srcs[i].Lines)
	}
	b := fed.builder(cortex.Options{})
	b.Fed = f
	if st, err := b.Update(ctx); err != nil || st.Fed != len(srcs) {
		t.Fatalf("the update took %+v from the feed of %d transcripts (%v)", st, len(srcs), err)
	}
	if got, want := fed.digest(), ref.digest(); got != want {
		t.Fatalf("the fed cortex differs: %s", firstDiff(want, got))
	}
	data, err := os.ReadFile(spill.Name())
	if err != nil {
		t.Fatal(err)
	}
	var types bytes.Buffer // the type definitions, as one encoder writes them
	if err := gob.NewEncoder(&types).Encode(&clawledger.CortexChange{}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"CortexChange", "FacetOccurrence", "EntityLink"} {
		if n, want := bytes.Count(data, []byte(name)), bytes.Count(types.Bytes(), []byte(name)); n != want {
			t.Errorf("the spill names the type %s %d times, want %d (its definitions once)", name, n, want)
		}
	}
}
