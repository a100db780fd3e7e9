package postgres

import (
	"cmp"
	"slices"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/search"
)

// A query over the postings is evaluated as the word index evaluates its
// tsquery (renderQuery): AND between groups, OR within one, AND NOT the
// excluded terms, each term a phrase of its words at consecutive
// positions; and each match's counts are the counter's (search_counts.go).

// postingQuery is a query as the postings evaluate it: its words (the
// counter's, then the excluded terms' others) and its terms as indexes
// into them.
type postingQuery struct {
	k      *counter
	words  []string
	groups [][]int // each group's terms, as indexes into k.terms
	not    [][]int // the excluded terms' words
	phrase []bool  // a word of a phrase of several: its positions are read
}

// newPostingQuery returns the postings' query of q, nil when the postings
// cannot answer it: a prefix term, or a word longer than the index keeps
// (k is then nil too).
func newPostingQuery(q *clawledger.SearchQuery, k *counter) *postingQuery {
	if k == nil {
		return nil
	}
	pq := &postingQuery{k: k, words: slices.Clone(k.lexemes)}
	next := 0
	for _, g := range q.Groups {
		var terms []int
		for _, t := range g {
			if text, _ := search.IndexTerm(t); len(phraseWords(text, false)) > 0 {
				terms = append(terms, next)
				next++
			}
		}
		if len(terms) > 0 {
			pq.groups = append(pq.groups, terms)
		}
	}
	if len(pq.groups) == 0 || next != len(k.terms) {
		return nil
	}
	for _, t := range q.Not {
		ws, exact := termWords(t, &pq.words)
		if !exact {
			return nil
		}
		if len(ws) > 0 {
			pq.not = append(pq.not, ws)
		}
	}
	pq.phrase = make([]bool, len(pq.words))
	for _, ws := range append(slices.Clone(k.terms), pq.not...) {
		for _, w := range ws {
			pq.phrase[w] = pq.phrase[w] || len(ws) > 1
		}
	}
	return pq
}

// rangeMatcher evaluates a query over one range's postings at a time.
type rangeMatcher struct {
	q     *postingQuery
	views []*postingView // this range's, by word (nil: the word is not in it)
	// where[w][off] is word w's posting of the chunk at offset off in the
	// range, -1 when none (set per range, cleared after)
	where [][]int32
	base  int64
	tfs   []int // the matches' counts, one backing array
	cands []int64
}

func newRangeMatcher(q *postingQuery, size int) *rangeMatcher {
	m := &rangeMatcher{q: q, views: make([]*postingView, len(q.words)), where: make([][]int32, len(q.words))}
	for i := range m.where {
		m.where[i] = make([]int32, size)
		for j := range m.where[i] {
			m.where[i][j] = -1
		}
	}
	return m
}

// bound is the most chunks of a range the query can match, from each
// word's count of postings in it (ns, by word; 0 when absent).
func (q *postingQuery) bound(ns []int) int {
	best := -1
	for _, g := range q.groups {
		if sum := q.groupBound(g, ns); best < 0 || sum < best {
			best = sum
		}
	}
	return max(best, 0)
}

// groupBound is the most chunks a group can match: the sum over its terms
// of their rarest word's postings.
func (q *postingQuery) groupBound(g []int, ns []int) int {
	sum := 0
	for _, t := range g {
		least := -1
		for _, w := range q.k.terms[t] {
			if least < 0 || ns[w] < least {
				least = ns[w]
			}
		}
		sum += least
	}
	return sum
}

// match appends the range's matches to out, newest first, leaving out
// dead chunks and those above maxID (0: none), and adds those whose
// counts need their text to text.
func (m *rangeMatcher) match(base int64, views []*postingView, dead func(int64) bool, maxID int64,
	out []clawledger.LexicalMatch, text *[]int64) []clawledger.LexicalMatch {
	m.base, m.views = base, views
	for w, v := range views {
		if v == nil {
			continue
		}
		for i := range v.n {
			m.where[w][v.id(i)-base] = int32(i)
		}
	}
	defer func() {
		for w, v := range views {
			if v == nil {
				continue
			}
			for i := range v.n {
				m.where[w][v.id(i)-base] = -1
			}
		}
	}()
	// the candidates: the matches of the group with the fewest postings
	ns := make([]int, len(views))
	for w, v := range views {
		if v != nil {
			ns[w] = v.n
		}
	}
	lead, least := 0, -1
	for gi, g := range m.q.groups {
		sum := m.q.groupBound(g, ns)
		if least < 0 || sum < least {
			lead, least = gi, sum
		}
	}
	m.cands = m.cands[:0]
	for _, t := range m.q.groups[lead] {
		ws := m.q.k.terms[t]
		d := ws[0]
		for _, w := range ws {
			if ns[w] < ns[d] {
				d = w
			}
		}
		v := views[d]
		if v == nil {
			continue
		}
		for i := range v.n {
			if id := v.id(i); m.termMatches(ws, id) {
				m.cands = append(m.cands, id)
			}
		}
	}
	if len(m.q.groups[lead]) > 1 {
		slices.SortFunc(m.cands, func(a, b int64) int { return cmp.Compare(b, a) })
		m.cands = slices.Compact(m.cands)
	}
	for _, id := range m.cands {
		if (maxID > 0 && id > maxID) || dead(id) || !m.matches(lead, id) {
			continue
		}
		out = append(out, m.found(id, text))
	}
	return out
}

// matches reports whether a candidate of group lead matches the others
// and none of the excluded terms.
func (m *rangeMatcher) matches(lead int, id int64) bool {
	for gi, g := range m.q.groups {
		if gi == lead {
			continue
		}
		if !slices.ContainsFunc(g, func(t int) bool { return m.termMatches(m.q.k.terms[t], id) }) {
			return false
		}
	}
	for _, ws := range m.q.not {
		if m.termMatches(ws, id) {
			return false
		}
	}
	return true
}

// termMatches reports whether the chunk holds the phrase of words ws.
func (m *rangeMatcher) termMatches(ws []int, id int64) bool {
	if len(ws) == 1 {
		return m.posting(ws[0], id) >= 0
	}
	return m.phraseCount(ws, id, true) > 0
}

// posting is word w's posting of the chunk, -1 when it has none.
func (m *rangeMatcher) posting(w int, id int64) int {
	if m.views[w] == nil {
		return -1
	}
	return int(m.where[w][id-m.base])
}

// phraseCount counts where the words ws stand at consecutive positions in
// the chunk (once: whether they do at all).
func (m *rangeMatcher) phraseCount(ws []int, id int64, once bool) int {
	var ix [16]int
	at := ix[:0]
	for _, w := range ws {
		i := m.posting(w, id)
		if i < 0 {
			return 0
		}
		at = append(at, i)
	}
	first := m.views[ws[0]]
	n := 0
	for j := range first.np(at[0]) {
		p := first.position(at[0], j)
		k := 1
		for ; k < len(ws); k++ {
			v := m.views[ws[k]]
			want := p + uint16(k)
			lo, hi := 0, v.np(at[k])
			for lo < hi { // positions ascend
				mid := (lo + hi) / 2
				if v.position(at[k], mid) < want {
					lo = mid + 1
				} else {
					hi = mid
				}
			}
			if lo == v.np(at[k]) || v.position(at[k], lo) != want {
				break
			}
		}
		if k == len(ws) {
			if n++; once {
				return n
			}
		}
	}
	return n
}

// found is a match with its length and counts, as the counter gives them.
func (m *rangeMatcher) found(id int64, text *[]int64) clawledger.LexicalMatch {
	k := m.q.k
	at := len(m.tfs)
	m.tfs = append(m.tfs, make([]int, len(k.terms))...)
	r := clawledger.LexicalMatch{ID: id, TF: m.tfs[at:len(m.tfs):len(m.tfs)]}
	for ti, ws := range k.terms {
		if len(ws) == 1 {
			if i := m.posting(ws[0], id); i >= 0 {
				r.TF[ti] = m.views[ws[0]].np(i)
			}
		} else {
			r.TF[ti] = m.phraseCount(ws, id, false)
		}
	}
	capped := false
	for w := range k.lexemes {
		if i := m.posting(w, id); i >= 0 {
			r.Tokens = m.views[w].length(i)
			capped = capped || m.views[w].capped(i)
		}
	}
	if capped {
		*text = append(*text, id)
	}
	return r
}
