package sqlite_test

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"testing"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/internal/fixture"
)

// TestBranchesShowTheWholeConversation reads back a transcript with gateway
// notices written without a parentId (after a model switch and after a
// compaction) and one real fork: every entry is on the path shown but the
// abandoned branch's, which is counted where it forks; --last counts the
// turns of that path.
func TestBranchesShowTheWholeConversation(t *testing.T) {
	l := newLedger(t)
	b := fixture.BranchedTranscript(l.rnd, fixture.UUID(l.rnd))
	l.write("agents/main/sessions/"+b.ID+".jsonl", b.Bytes())
	l.ingest()
	ctx := context.Background()
	list, err := l.db.Sessions(ctx, clawledger.SessionFilter{})
	if err != nil || len(list) != 1 {
		t.Fatalf("sessions: %v, %v", list, err)
	}
	src := list[0].SourceID

	var offPath, users, usersOnPath []string
	var starts []int64
	err = l.db.Entries(ctx, src, func(v *clawledger.EntryView) error {
		if !v.OnBranch {
			offPath = append(offPath, v.EntryID)
		}
		var e struct{ Message struct{ Role string } }
		if json.Unmarshal(v.Line.Raw, &e) == nil && e.Message.Role == "user" {
			users = append(users, v.EntryID)
			if v.OnBranch {
				usersOnPath = append(usersOnPath, v.EntryID)
				starts = append(starts, v.Line.Offset)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(offPath, b.Abandoned) {
		t.Errorf("entries off the path shown: %v, want the abandoned branch %v", offPath, b.Abandoned)
	}
	for _, n := range b.Notices {
		if slices.Contains(offPath, n) {
			t.Errorf("notice %s is not shown", n)
		}
	}

	got, err := l.db.TurnStarts(ctx, src, false)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, starts) {
		t.Errorf("turn starts %v, want those of the user messages shown %v (%v)", got, starts, usersOnPath)
	}
	if all, err := l.db.TurnStarts(ctx, src, true); err != nil || len(all) != len(users) {
		t.Errorf("turn starts of every branch: %v (%v), want %d", all, err, len(users))
	}

	sum, err := l.db.Branches(ctx, src)
	if err != nil {
		t.Fatal(err)
	}
	want := clawledger.BranchSummary{Omitted: len(b.Abandoned), Branches: 1, Relinked: len(b.Notices),
		Forks: []clawledger.Fork{{At: b.ForkAt, Line: b.ForkLine, Branches: 1, Entries: len(b.Abandoned)}}}
	if !reflect.DeepEqual(*sum, want) {
		t.Errorf("branches: %+v, want %+v", *sum, want)
	}
}
