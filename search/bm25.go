package search

import (
	"math"

	"github.com/clawledger/clawledger"
)

// BM25 parameters of FTS5's bm25().
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// DFProbe is how many of a phrase's newest matches are read to count (or,
// past that, estimate) its document frequency.
const DFProbe = 1000

// EstimateDF is a phrase's document frequency from the ids of its newest
// matches (descending, at most DFProbe of them) in a corpus of chunks
// chunks whose largest id is maxID: their count, exact when fewer than
// DFProbe; else scaled to the corpus from the id span they cover.
func EstimateDF(ids []int64, maxID int64, chunks float64) clawledger.DocFrequency {
	n := len(ids)
	df := clawledger.DocFrequency{DF: float64(n), Exact: n < DFProbe}
	if n == DFProbe && maxID >= ids[n-1] {
		// n matches among the chunks with ids in [ids[n-1], maxID]
		span := float64(maxID-ids[n-1]+1) * chunks / float64(maxID)
		df.DF = min(chunks, max(float64(n), float64(n)*chunks/span))
	}
	return df
}

// phrase is one positive query term and its matcher.
type phrase struct {
	term Term
	m    matcher
}

func phrases(p *Parsed) []phrase {
	var out []phrase
	for _, g := range p.Groups {
		for _, t := range g {
			m := newMatcher(t)
			if len(m.toks) > 0 {
				out = append(out, phrase{term: t, m: m})
			}
		}
	}
	return out
}

// bm25 scores a chunk of length tokens in which phrase k occurs tfs[k]
// times the way FTS5's bm25() does (more negative is better): over every
// query phrase, idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len /
// avglen)), idf = ln((N - df + 0.5) / (df + 0.5)) and at least 1e-6.
// Computing it here, from counts of the matches alone, avoids bm25()'s
// scan of each phrase's whole posting list to count its documents, which
// dominates a query for a common word.
func bm25(length int, ps []phrase, dfs []TermCount, c Corpus, tfs []int) float64 {
	avg := max(c.AvgLen, 1)
	var score float64
	for k := range ps {
		tf := tfs[k]
		if tf == 0 {
			continue
		}
		df := dfs[k].DF
		idf := math.Log((c.Chunks - df + 0.5) / (df + 0.5))
		if idf <= 0 {
			idf = 1e-6
		}
		f := float64(tf)
		score += idf * f * (bm25K1 + 1) / (f + bm25K1*(1-bm25B+bm25B*float64(length)/avg))
	}
	return -score
}

// ringSize bounds the phrases termFreqs counts in one pass; longer ones
// take the slow path.
const ringSize = 8

// termFreqs counts each phrase's occurrences in text into tfs, in one
// pass over its tokens and without allocating for ASCII text.
func termFreqs(text string, ps []phrase, tfs []int) {
	var ring [ringSize]span
	n, long := 0, false
	for k := range ps {
		tfs[k] = 0
		long = long || len(ps[k].m.toks) > ringSize
	}
	scanTokens(text, func(start, end int) {
		ring[n%ringSize] = span{start, end}
		n++
		for k := range ps {
			m := &ps[k].m
			l := len(m.toks)
			if l > n || l > ringSize {
				continue
			}
			ok := true
			for j := 0; j < l && ok; j++ {
				r := ring[(n-l+j)%ringSize]
				ok = tokenIs(text[r.start:r.end], m.toks[j], m.prefix && j == l-1) &&
					(j == 0 || m.follows(j, ring[(n-l+j-1)%ringSize].end, r.start))
			}
			if ok {
				tfs[k]++
			}
		}
	})
	if long {
		toks := tokenize(text)
		for k := range ps {
			if len(ps[k].m.toks) > ringSize {
				for i := range toks {
					if ps[k].m.at(toks, i) {
						tfs[k]++
					}
				}
			}
		}
	}
}

// TokenCount is a text's length in the word index.
func TokenCount(text string) int {
	n := 0
	scanTokens(text, func(int, int) { n++ })
	return n
}
