package clawledger

import (
	"reflect"
	"testing"
)

func TestMergeToolStats(t *testing.T) {
	calls := []ToolStat{{Name: "read", Calls: 2, LastUsed: 5}, {Name: "exec", Calls: 3, Orphans: 1, LastUsed: 9}}
	results := []ToolStat{{Name: "exec", Results: 2, Errors: 1}, {Name: "read", Results: 2}, {Name: "gone", Results: 1, OrphanResults: 1}}
	failures := []ToolStat{{Name: "exec", LastError: "boom", LastErrorTime: 8}, {Name: "read", LastError: "ignored"}, {Name: "none", LastError: "x"}}
	got := MergeToolStats(calls, results, failures)
	want := []*ToolStat{
		{Name: "exec", Calls: 3, Orphans: 1, LastUsed: 9, Results: 2, Errors: 1, LastError: "boom", LastErrorTime: 8},
		{Name: "read", Calls: 2, LastUsed: 5, Results: 2},
		{Name: "gone", Results: 1, OrphanResults: 1},
	}
	if !reflect.DeepEqual(got, want) {
		for _, s := range got {
			t.Logf("%+v", *s)
		}
		t.Fatal("merged stats differ")
	}
	if got := MergeToolStats(nil, nil, nil); got == nil || len(got) != 0 {
		t.Fatalf("no tools: %#v, want an empty list", got)
	}
}

func TestStoredText(t *testing.T) {
	for _, tc := range []struct{ role, want string }{
		{"user", "text"}, {"assistant", "text"}, {"toolResult", ""}, {"bashExecution", ""},
	} {
		if got := (&Message{Role: tc.role, Text: "text"}).StoredText(); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.role, got, tc.want)
		}
	}
}
