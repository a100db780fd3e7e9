package cortex_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/cortex"
	"github.com/clawledger/clawledger/internal/fixture"
)

// quality is how well the cortex found the fixture's ground truth.
type quality struct {
	tp, fp, fn int
}

func (q quality) precision() float64 { return ratio(q.tp, q.tp+q.fp) }
func (q quality) recall() float64    { return ratio(q.tp, q.tp+q.fn) }
func (q quality) f1() float64 {
	p, r := q.precision(), q.recall()
	if p+r == 0 {
		return 0
	}
	return 2 * p * r / (p + r)
}

func (q quality) String() string {
	return fmt.Sprintf("precision %.3f recall %.3f F1 %.3f (tp %d fp %d fn %d)", q.precision(), q.recall(), q.f1(), q.tp, q.fp, q.fn)
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 1
	}
	return float64(a) / float64(b)
}

func (q *quality) compare(found, truth []string) {
	for _, f := range found {
		if slices.Contains(truth, f) {
			q.tp++
		} else {
			q.fp++
		}
	}
	for _, t := range truth {
		if !slices.Contains(found, t) {
			q.fn++
		}
	}
}

// measure compares the cortex of a ledger with the fixture's truth:
// boundaries (the session starts left out: they cannot be missed) and the
// file, command, URL and peer facets of each session.
func measure(t *testing.T, l *ledger, m *fixture.CortexManifest) (bounds, files, commands, urls, peers quality) {
	t.Helper()
	eps := l.episodes()
	for _, s := range m.Sessions {
		list := eps[s.ID]
		if len(list) == 0 {
			t.Fatalf("session %s has no episodes", s.ID)
		}
		var starts []string
		for _, ep := range list[1:] {
			starts = append(starts, ep.StartEntryID)
		}
		bounds.compare(starts, s.Boundaries[1:])
		got := map[clawledger.FacetType][]string{}
		for _, ep := range list {
			facets := l.facetsOf(ep.ID)
			for _, f := range facets {
				if !slices.Contains(got[f.Type], f.Value) {
					got[f.Type] = append(got[f.Type], f.Value)
				}
			}
		}
		files.compare(got[clawledger.FacetFile], s.Files)
		commands.compare(got[clawledger.FacetCommand], s.Commands)
		urls.compare(got[clawledger.FacetURL], s.URLs)
		var peer []string
		if s.Peer != "" {
			peer = []string{s.Peer}
		}
		peers.compare(got[clawledger.FacetPeer], peer)
	}
	return
}

// facetsOf returns an episode's facets.
func (l *ledger) facetsOf(episodeID int64) []clawledger.FacetOccurrence {
	l.t.Helper()
	facets, err := l.db.CortexEpisodeFacets(context.Background(), []int64{episodeID})
	if err != nil {
		l.t.Fatal(err)
	}
	return facets
}

// TestQuality measures segmentation and facet extraction on the cortex
// fixture, in both storage eras: boundary F1 >= 0.9, precision and recall
// of files, commands and URLs >= 0.95 (docs/cortex.md has the figures).
func TestQuality(t *testing.T) {
	for _, era := range fixture.Eras {
		t.Run(era.Name, func(t *testing.T) {
			m := writeCortex(t, fixture.CortexOptions{Sessions: 40, Seed: 15, SQLite: era.SQLite})
			l := newLedger(t, m.StateDir)
			l.ingest()
			l.update(cortex.Options{})
			bounds, files, commands, urls, peers := measure(t, l, m)
			t.Logf("boundaries: %v", bounds)
			t.Logf("files:      %v", files)
			t.Logf("commands:   %v", commands)
			t.Logf("URLs:       %v", urls)
			t.Logf("peers:      %v", peers)
			if bounds.f1() < 0.9 {
				t.Errorf("boundary F1 %.3f < 0.9", bounds.f1())
			}
			for name, q := range map[string]quality{"files": files, "commands": commands, "URLs": urls, "peers": peers} {
				if q.precision() < 0.95 || q.recall() < 0.95 {
					t.Errorf("%s: %v, want precision and recall >= 0.95", name, q)
				}
			}
		})
	}
}
