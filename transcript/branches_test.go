package transcript

import (
	"reflect"
	"strings"
	"testing"

	"github.com/clawledger/clawledger"
)

// nodes builds a transcript from a compact spec, one entry a word, line
// numbers from 1: "a" a root (parentId null), "b<a" b names a as its
// parent, "n?" n has no parentId key, "L>b" a leaf entry moving the leaf to
// b ("L>" to before the first entry).
func nodes(spec string) []Node {
	var out []Node
	for i, w := range strings.Fields(spec) {
		n := Node{Line: int64(i + 1)}
		switch {
		case strings.Contains(w, ">"):
			n.ID, n.Target, _ = strings.Cut(w, ">")
			n.Leaf = true
		case strings.HasSuffix(w, "?"):
			n.ID, n.Unlinked = strings.TrimSuffix(w, "?"), true
		default:
			n.ID, n.Parent, _ = strings.Cut(w, "<")
		}
		out = append(out, n)
	}
	return out
}

func TestBranches(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec string
		path string // the ids shown, in file order
		want clawledger.BranchSummary
	}{
		{"linear", "a b<a c<b", "a b c", clawledger.BranchSummary{}},
		{"empty", "", "", clawledger.BranchSummary{}},
		{
			// OpenClaw 2026.2.3: the gateway's replies to /model and /compact
			// are written without a parentId, and the next entries link to them
			"gateway notices without a parentId", "m u<m r<u n1? t<n1 u2<t r2<u2 c<r2 n2? t2<n2 u3<t2",
			"m u r n1 t u2 r2 c n2 t2 u3", clawledger.BranchSummary{Relinked: 2},
		},
		{
			"a fork: the abandoned branch is left out", "a b<a c<b d<b e<d", "a b d e",
			clawledger.BranchSummary{Omitted: 1, Branches: 1, Forks: []clawledger.Fork{{At: "b", Line: 2, Branches: 1, Entries: 1}}},
		},
		{
			"a notice after a fork follows the new branch", "a b<a c<b d<b n?", "a b d n",
			clawledger.BranchSummary{Omitted: 1, Branches: 1, Relinked: 1, Forks: []clawledger.Fork{{At: "b", Line: 2, Branches: 1, Entries: 1}}},
		},
		{
			"forks at two points, one branch forking again", "a b<a c<b d<c x<c y<a e<b f<e", "a b e f",
			clawledger.BranchSummary{Omitted: 4, Branches: 2, Forks: []clawledger.Fork{
				{At: "a", Line: 1, Branches: 1, Entries: 1}, {At: "b", Line: 2, Branches: 1, Entries: 3}}},
		},
		{
			"two branches from one entry", "a b<a c<a d<a", "a d",
			clawledger.BranchSummary{Omitted: 2, Branches: 2, Forks: []clawledger.Fork{{At: "a", Line: 1, Branches: 2, Entries: 2}}},
		},
		{
			"a second root: the conversation restarted from before its first entry", "a b<a c d<c", "c d",
			clawledger.BranchSummary{Omitted: 2, Branches: 1, Forks: []clawledger.Fork{{Branches: 1, Entries: 2}}},
		},
		{"a parent the transcript lacks", "a b<a c<gone d<c", "a b c d", clawledger.BranchSummary{Relinked: 1}},
		{"a parent that comes later in the file", "a c<b b<a d<c", "a c b d", clawledger.BranchSummary{}},
		{"no parentId key on the first entry", "a? b<a", "a b", clawledger.BranchSummary{}},
		{"a repeated id: its first entry counts", "a b<a b<a c<b", "a b b c", clawledger.BranchSummary{}},
		{"a repeated id moves the leaf", "a b<a c<b b<a", "a b b", clawledger.BranchSummary{
			Omitted: 1, Branches: 1, Forks: []clawledger.Fork{{At: "b", Line: 2, Branches: 1, Entries: 1}}}},
		{
			"a leaf entry moves the leaf back", "a b<a c<b L>b", "a b",
			clawledger.BranchSummary{Omitted: 1, Branches: 1, Forks: []clawledger.Fork{{At: "b", Line: 2, Branches: 1, Entries: 1}}},
		},
		{
			"an entry naming a leaf entry continues from its target", "a b<a c<b L>b d<L", "a b d",
			clawledger.BranchSummary{Omitted: 1, Branches: 1, Forks: []clawledger.Fork{{At: "b", Line: 2, Branches: 1, Entries: 1}}},
		},
		{
			"a notice after a leaf entry follows its target", "a b<a c<b L>a n?", "a n",
			clawledger.BranchSummary{Omitted: 2, Branches: 1, Relinked: 1, Forks: []clawledger.Fork{{At: "a", Line: 1, Branches: 1, Entries: 2}}},
		},
		{"a leaf entry whose target is missing changes nothing", "a b<a L>gone c? d<c", "a b c d", clawledger.BranchSummary{Relinked: 1}},
		{
			"a leaf entry before the first entry", "a b<a L>", "",
			clawledger.BranchSummary{Omitted: 2, Branches: 1, Forks: []clawledger.Fork{{Branches: 1, Entries: 2}}},
		},
		{
			"parents in a cycle off the path", "a b<c c<b d<a", "a d",
			clawledger.BranchSummary{Omitted: 2, Branches: 1, Forks: []clawledger.Fork{{Branches: 1, Entries: 2}}},
		},
		{"parents in a cycle on the path", "a<b b<a", "a b", clawledger.BranchSummary{}},
		{"an entry its own parent", "a<a b<a", "a b", clawledger.BranchSummary{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := nodes(tc.spec)
			v := Branches(ns)
			var path []string
			for _, n := range ns {
				if v.OnPath(n.ID) {
					path = append(path, n.ID)
				}
			}
			if got := strings.Join(path, " "); got != tc.path {
				t.Errorf("path %q, want %q", got, tc.path)
			}
			if !reflect.DeepEqual(v.Summary, tc.want) {
				t.Errorf("summary %+v, want %+v", v.Summary, tc.want)
			}
		})
	}
}

func TestNodeOf(t *testing.T) {
	for _, tc := range []struct {
		raw    string
		parent string
		want   Node
	}{
		{`{"type":"message","id":"n1","timestamp":"2026-11-21T10:34:35.067Z","message":{"role":"assistant","content":[{"type":"text","text":"Model set to haiku (mock/mock-haiku)."}],"stopReason":"injected"}}`, "",
			Node{ID: "n1", Unlinked: true, Line: 7}},
		{`{"type":"model_change","id":"n1","parentId":null,"provider":"p","modelId":"m"}`, "", Node{ID: "n1", Line: 7}},
		{`{"type":"leaf","id":"n1","parentId":"x","targetId":"b"}`, "x", Node{ID: "n1", Parent: "x", Leaf: true, Target: "b", Line: 7}},
		{`{"type":"leaf","id":"n1","parentId":"x","targetId":null}`, "x", Node{ID: "n1", Parent: "x", Leaf: true, Line: 7}},
		{"{\"type\":\"message\",\"id\":\"n1\",\"message\":{\"role\":\"user\",\"content\":\"ctrl\x01char\"}}", "", Node{ID: "n1", Unlinked: true, Line: 7}},
		{`not json`, "", Node{ID: "n1", Line: 7}},
	} {
		if got := NodeOf("n1", tc.parent, 7, []byte(tc.raw)); got != tc.want {
			t.Errorf("NodeOf(%s) = %+v, want %+v", tc.raw, got, tc.want)
		}
	}
	if got := NodeOf("n1", "p", 7, nil); got != (Node{ID: "n1", Parent: "p", Line: 7}) {
		t.Errorf("without raw: %+v", got)
	}
}

// FuzzBranches: any tree, however broken (cycles, repeated ids, missing
// parents and targets), gets a path and a summary that add up: every entry
// (the first of each id, leaf entries aside) is shown or counted as left out.
func FuzzBranches(f *testing.F) {
	for _, s := range []string{"a b<a c<b d<b", "m u<m n1? t<n1", "a<b b<a c<c", "a b<a L>b d<L L2>L", "a? b<gone c L> d<c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		ns := nodes(spec)
		v := Branches(ns)
		seen := map[string]bool{}
		entries, shown := 0, 0
		for _, n := range ns {
			if seen[n.ID] {
				continue
			}
			seen[n.ID] = true
			if !n.Leaf {
				entries++
				if v.OnPath(n.ID) {
					shown++
				}
			}
		}
		s := v.Summary
		forkEntries, forkBranches := 0, 0
		for _, fk := range s.Forks {
			forkEntries += fk.Entries
			forkBranches += fk.Branches
		}
		if shown+s.Omitted != entries || forkEntries != s.Omitted || forkBranches != s.Branches ||
			s.Branches > s.Omitted || (s.Omitted > 0) != (s.Branches > 0) || s.Relinked > len(ns) {
			t.Fatalf("%q: %d of %d entries shown, summary %+v", spec, shown, entries, s)
		}
	})
}
