package cortex_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/collect"
	"github.com/clawledger/clawledger/cortex"
	"github.com/clawledger/clawledger/internal/fixture"
	"github.com/clawledger/clawledger/openclaw"
	"github.com/clawledger/clawledger/sqlite"
)

// ledger is a ledger on disk with a state dir to ingest.
type ledger struct {
	t     *testing.T
	db    *sqlite.DB
	state string
}

func newLedger(t *testing.T, state string) *ledger {
	t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "ledger.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return &ledger{t: t, db: db, state: state}
}

func (l *ledger) ingest() {
	l.t.Helper()
	if _, err := (&collect.Collector{Store: l.db, FS: openclaw.OS}).Run(context.Background(), []string{l.state}); err != nil {
		l.t.Fatal(err)
	}
}

func (l *ledger) builder(opt cortex.Options) *cortex.Builder {
	return &cortex.Builder{Ledger: l.db, Store: l.db, Options: opt}
}

func (l *ledger) update(opt cortex.Options) cortex.Stats { return l.derive(l.builder(opt).Update) }

func (l *ledger) rebuild(opt cortex.Options) cortex.Stats { return l.derive(l.builder(opt).Rebuild) }

func (l *ledger) derive(run func(context.Context) (cortex.Stats, error)) cortex.Stats {
	l.t.Helper()
	st, err := run(context.Background())
	if err != nil {
		l.t.Fatal(err)
	}
	return st
}

// episodes returns every episode, by session id, in file order.
func (l *ledger) episodes() map[string][]*clawledger.Episode {
	l.t.Helper()
	eps, err := l.db.CortexEpisodes(context.Background(), clawledger.EpisodeFilter{})
	if err != nil {
		l.t.Fatal(err)
	}
	out := map[string][]*clawledger.Episode{}
	for i := len(eps) - 1; i >= 0; i-- {
		out[eps[i].SessionID] = append(out[eps[i].SessionID], eps[i])
	}
	for _, list := range out {
		sortEpisodes(list)
	}
	return out
}

func sortEpisodes(list []*clawledger.Episode) {
	for i := 1; i < len(list); i++ {
		for j := i; j > 0 && list[j].ID < list[j-1].ID; j-- {
			list[j], list[j-1] = list[j-1], list[j]
		}
	}
}

func writeCortex(t *testing.T, o fixture.CortexOptions) *fixture.CortexManifest {
	t.Helper()
	m, err := fixture.WriteCortex(filepath.Join(t.TempDir(), ".openclaw"), o)
	if err != nil {
		t.Fatal(err)
	}
	return m
}
