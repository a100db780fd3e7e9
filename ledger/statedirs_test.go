package ledger

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/clawledger/clawledger"
)

// heldDirs is a ledger that holds some state dirs.
type heldDirs struct {
	clawledger.Reader
	dirs []clawledger.StateDirInfo
}

func (h heldDirs) StateDirList(context.Context) ([]clawledger.StateDirInfo, error) {
	return h.dirs, nil
}

// TestReadPlan: which state dirs an ingest or a refresh reads. A call's
// own state dirs alone; else the given or discovered ones and those the
// ledger holds but for one gone (reported); the bundled sample (marked, or
// at SampleDir) only while no real state dir is found, and dropped once
// one is; a ledger of real data never takes the sample.
func TestReadPlan(t *testing.T) {
	tmp := t.TempDir()
	x, y, gone := filepath.Join(tmp, "x"), tmp, filepath.Join(tmp, "gone")
	sampleDir := filepath.Join(tmp, "sample")
	real := func(p string) clawledger.StateDirInfo { return clawledger.StateDirInfo{ID: 1, Path: p} }
	marked := clawledger.StateDirInfo{ID: 2, Path: filepath.Join(tmp, "old-sample"), Sample: true}
	unmarked := clawledger.StateDirInfo{ID: 3, Path: sampleDir} // a ledger from before samples were marked
	for _, c := range []struct {
		name         string
		held         []clawledger.StateDirInfo
		scope, given []string
		want         toRead
	}{
		{"nothing anywhere", nil, nil, nil, toRead{none: true}},
		{"discovered", nil, nil, []string{x}, toRead{dirs: []string{x}}},
		{"remembered", []clawledger.StateDirInfo{real(y)}, nil, []string{x}, toRead{dirs: []string{x, y}}},
		{"remembered, given too", []clawledger.StateDirInfo{real(x)}, nil, []string{x}, toRead{dirs: []string{x}}},
		{"remembered and gone", []clawledger.StateDirInfo{real(gone)}, nil, nil, toRead{missing: []string{gone}}},
		{"the sample alone", []clawledger.StateDirInfo{marked}, nil, nil, toRead{dirs: []string{marked.Path}}},
		{"the sample and a real dir", []clawledger.StateDirInfo{marked}, nil, []string{x}, toRead{dirs: []string{x}, samples: []clawledger.StateDirInfo{marked}}},
		{"an unmarked sample", []clawledger.StateDirInfo{unmarked, real(y)}, nil, nil, toRead{dirs: []string{y}, samples: []clawledger.StateDirInfo{unmarked}}},
		{"limited to a dir", []clawledger.StateDirInfo{real(y)}, []string{x}, []string{x}, toRead{dirs: []string{x}}},
		{"limited to a real dir beside the sample", []clawledger.StateDirInfo{marked}, []string{x}, nil, toRead{dirs: []string{x}, samples: []clawledger.StateDirInfo{marked}}},
		{"limited to the sample", []clawledger.StateDirInfo{marked}, []string{marked.Path}, nil, toRead{dirs: []string{marked.Path}}},
	} {
		s := &Service{SampleDir: sampleDir}
		got, err := s.readPlan(context.Background(), heldDirs{dirs: c.held}, c.scope, c.given)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(*got, c.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", c.name, *got, c.want)
		}
	}
}
