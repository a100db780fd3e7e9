package transcript

import (
	"cmp"
	"slices"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/openclaw"
)

// The branch rule: which entries of a transcript its default view shows.
//
// pi's session manager keeps a transcript as a tree: every entry names its
// parent (parentId), an append makes a child of the current leaf, and
// editing or rewinding moves the leaf to an earlier entry, so the next
// entry forks there. The conversation as it stands is the path from the
// root to the leaf, and that path is what the default view shows; the
// other branches are left out and said to be. OpenClaw's gateway also
// appended messages of its own straight to the file, without a parentId
// (command replies such as "Model set to ..." or "⚙️ Compacted ...", and
// chat.inject): they follow the entry before them, and the entries after
// them link to them. Taken as roots they cut the path in two, so the view
// would start there; OpenClaw's own later readers take them as continuing
// the file (docs/transcripts.md), and so does this rule.

// Node is one transcript entry, in file order, as the branch rule reads it.
type Node struct {
	ID       string
	Parent   string // the entry its parentId names; "" for null or none
	Unlinked bool   // it has no parentId key at all
	Leaf     bool   // a leaf entry: it moves the current leaf to Target and is not conversation
	Target   string
	Line     int64
}

// NodeOf builds a node from an entry's stored id, resolved parent and line
// number. raw, the line's bytes, is decoded only when given: the store
// passes it for entries without a parent and for leaf entries, the only
// ones whose raw line says more than the stored columns.
func NodeOf(id, parent string, line int64, raw []byte) Node {
	n := Node{ID: id, Parent: parent, Line: line}
	if raw == nil {
		return n
	}
	if e, err := openclaw.ParseEntry(raw); err == nil {
		n.Unlinked = parent == "" && !e.HasParent
		if e.Type == "leaf" {
			n.Leaf, n.Target = true, e.LeafTarget
		}
	}
	return n
}

// View is what the default view of a transcript shows and leaves out.
type View struct {
	idx     map[string]int // id -> its first node
	on      []bool         // by node
	Summary clawledger.BranchSummary
}

// OnPath reports whether the entry with this id is on the path shown.
func (v *View) OnPath(id string) bool {
	i, ok := v.idx[id]
	return ok && v.on[i]
}

// Branches applies the branch rule to a transcript's entries, in file order:
//   - An entry without a parentId key, or naming an entry the transcript does
//     not hold, follows the current leaf: the entry before it in the file.
//   - A leaf entry moves the current leaf to its target, and an entry naming
//     a leaf entry as its parent continues from that target; a leaf entry
//     whose target is missing changes nothing.
//   - Any other entry follows the parent it names; a null parent makes a
//     root (a second root is a fork before the first entry).
//   - When an id repeats (a repaired file), its first entry counts.
//
// The path shown runs from the current leaf (the last entry, or the target
// of the last leaf entry) back to its root. Every other entry lies on
// another branch and is left out; the summary counts them by where their
// branch leaves the path. Leaf entries are never shown nor counted.
func Branches(nodes []Node) *View {
	idx := make(map[string]int, len(nodes)) // id -> its first node
	for i := range nodes {
		if _, dup := idx[nodes[i].ID]; !dup {
			idx[nodes[i].ID] = i
		}
	}
	first := func(i int) bool { return idx[nodes[i].ID] == i }
	var sum clawledger.BranchSummary
	parent := make([]int, len(nodes)) // the node each first node follows, -1 for a root
	cur := -1                         // the current leaf
	for i, n := range nodes {
		if !first(i) {
			cur = idx[n.ID]
			continue
		}
		p, named := idx[n.Parent]
		switch {
		case n.Leaf:
			if n.Target == "" { // the leaf moved before the first entry
				parent[i], cur = -1, i
			} else if t, ok := idx[n.Target]; ok {
				parent[i], cur = t, i
			} else if named { // a target the transcript lacks: a marker in its place
				parent[i] = p
			} else {
				parent[i] = cur
			}
			continue
		case n.Unlinked, n.Parent != "" && !named:
			p = cur
			if cur >= 0 {
				sum.Relinked++
			}
		case n.Parent == "":
			p = -1
		}
		parent[i], cur = p, i
	}

	// up returns the entry a node follows, through leaf entries.
	up := func(i int) int {
		p := parent[i]
		for steps := 0; p >= 0 && nodes[p].Leaf; steps++ {
			if steps == len(nodes) {
				return -1
			}
			p = parent[p]
		}
		return p
	}
	on := make([]bool, len(nodes))
	if cur >= 0 && nodes[cur].Leaf {
		cur = up(cur)
	}
	for i := cur; i >= 0 && !on[i]; i = up(i) {
		on[i] = true
	}

	// forkOf[i] is the path entry i's branch leaves from (-1: before the
	// first entry), found by walking up once per branch entry (memoized).
	const unknown, walking = -2, -3
	forkOf := make([]int, len(nodes))
	for i := range forkOf {
		forkOf[i] = unknown
	}
	fork := func(i int) int {
		if forkOf[i] != unknown { // met walking up from an earlier entry
			return forkOf[i]
		}
		var walked []int
		f := -1
		for j := i; ; {
			walked = append(walked, j)
			forkOf[j] = walking
			p := up(j)
			if p < 0 || on[p] {
				f = p
				break
			}
			if forkOf[p] == walking { // a cycle of parents: a branch of its own
				break
			}
			if forkOf[p] != unknown {
				f = forkOf[p]
				break
			}
			j = p
		}
		for _, j := range walked {
			forkOf[j] = f
		}
		return f
	}
	forks := map[int]*clawledger.Fork{}
	for i, n := range nodes {
		if !first(i) || n.Leaf || on[i] {
			continue
		}
		f := fork(i)
		fk := forks[f]
		if fk == nil {
			fk = &clawledger.Fork{}
			if f >= 0 {
				fk.At, fk.Line = nodes[f].ID, nodes[f].Line
			}
			forks[f] = fk
		}
		sum.Omitted++
		fk.Entries++
		if p := up(i); p < 0 || on[p] { // the first entry of a branch
			sum.Branches++
			fk.Branches++
		}
	}
	for _, fk := range forks {
		if fk.Branches == 0 { // entries whose parents form a cycle: one branch
			fk.Branches++
			sum.Branches++
		}
		sum.Forks = append(sum.Forks, *fk)
	}
	slices.SortFunc(sum.Forks, func(a, b clawledger.Fork) int { return cmp.Compare(a.Line, b.Line) })

	return &View{idx: idx, on: on, Summary: sum}
}
