package search

import (
	"testing"

	"github.com/clawledger/clawledger"
)

func TestEstimateDF(t *testing.T) {
	probe := func(newest, step int64) []int64 { // DFProbe ids, descending
		ids := make([]int64, DFProbe)
		for i := range ids {
			ids[i] = newest - int64(i)*step
		}
		return ids
	}
	for _, tc := range []struct {
		name   string
		ids    []int64
		maxID  int64
		chunks float64
		want   clawledger.DocFrequency
	}{
		{"none", nil, 100, 100, clawledger.DocFrequency{DF: 0, Exact: true}},
		{"fewer than the probe: counted", []int64{9, 5, 2}, 10, 10, clawledger.DocFrequency{DF: 3, Exact: true}},
		{"every other chunk: scaled", probe(4000, 2), 4001, 4001, clawledger.DocFrequency{DF: 2000.5}},
		{"all the newest: at most the corpus", probe(1000, 1), 1000, 1000, clawledger.DocFrequency{DF: 1000}},
	} {
		if got := EstimateDF(tc.ids, tc.maxID, tc.chunks); got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}
