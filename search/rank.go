package search

import (
	"math"
	"sort"
)

// Ranking defaults, as OpenClaw's memory search has them.
const (
	VectorWeight     = 0.7
	TextWeight       = 0.3
	RRFK             = 60
	CandidateFactor  = 4
	MMRLambda        = 0.7
	HalfLifeDays     = 30.0
	dayMs            = 24 * 60 * 60 * 1000
	FusionWeighted   = "weighted"
	FusionRRF        = "rrf"
	ModeLexical      = "lexical"
	ModeVector       = "vector"
	ModeHybrid       = "hybrid"
	maxCandidateHits = 200
)

// BM25Score maps FTS5's bm25() (negative; lower is better) into [0, 1):
// a rank r < 0 becomes -r/(1-r).
func BM25Score(rank float64) float64 {
	switch {
	case math.IsNaN(rank) || math.IsInf(rank, 0):
		return 1.0 / 1000
	case rank < 0:
		return -rank / (1 - rank)
	default:
		return 1 / (1 + rank)
	}
}

// lane is one retrieval lane's ranked candidates.
type laneHit struct {
	id    int64
	raw   float64 // bm25 rank or cosine similarity
	score float64 // in [0, 1]
}

// fused is a candidate after fusion.
type fused struct {
	id         int64
	score      float64
	lexRank    int // 1-based; 0 when the lane did not find it
	vecRank    int
	lex, vec   laneHit
	decay      float64 // multiplier applied (1 = none)
	fusedScore float64 // the score before decay
	mmrPicked  int     // position MMR chose, 1-based; 0 without MMR
}

// fuse merges the lanes: weighted (0.7 vector + 0.3 text) or reciprocal
// rank fusion (k = 60, weighted the same way and scaled so that a hit
// ranked first in both lanes scores 1).
func fuse(lex, vec []laneHit, fusion string, vw, tw float64) []*fused {
	byID := map[int64]*fused{}
	var order []*fused
	get := func(id int64) *fused {
		f := byID[id]
		if f == nil {
			f = &fused{id: id, decay: 1}
			byID[id] = f
			order = append(order, f)
		}
		return f
	}
	for i, h := range vec {
		f := get(h.id)
		f.vecRank, f.vec = i+1, h
	}
	for i, h := range lex {
		f := get(h.id)
		f.lexRank, f.lex = i+1, h
	}
	scale := 1.0
	if fusion == FusionRRF && vw+tw > 0 {
		scale = (RRFK + 1) / (vw + tw)
	}
	for _, f := range order {
		if fusion == FusionRRF {
			s := 0.0
			if f.vecRank > 0 {
				s += vw / float64(RRFK+f.vecRank)
			}
			if f.lexRank > 0 {
				s += tw / float64(RRFK+f.lexRank)
			}
			f.score = s * scale
		} else {
			f.score = vw*f.vec.score + tw*f.lex.score
		}
	}
	return order
}

// decayFactor is exp(-ln2 * age / halfLife): 0.5 at one half-life.
func decayFactor(ageMs int64, halfLifeDays float64) float64 {
	if ageMs <= 0 || halfLifeDays <= 0 {
		return 1
	}
	return math.Exp(-math.Ln2 / halfLifeDays * float64(ageMs) / dayMs)
}

// sortFused orders by score, then by id (newer chunks first) for stable
// output.
func sortFused(fs []*fused) {
	sort.SliceStable(fs, func(i, j int) bool {
		if fs[i].score != fs[j].score {
			return fs[i].score > fs[j].score
		}
		return fs[i].id > fs[j].id
	})
}

// mmr reorders candidates by maximal marginal relevance: each pick
// maximizes lambda*relevance - (1-lambda)*max Jaccard similarity of its
// words to those already picked; relevance is the score normalized to
// [0, 1] over the candidates (OpenClaw's mmr.ts).
func mmr(fs []*fused, words map[int64]map[string]bool, lambda float64) []*fused {
	if len(fs) < 2 {
		return fs
	}
	lambda = math.Max(0, math.Min(1, lambda))
	lo, hi := fs[0].score, fs[0].score
	for _, f := range fs {
		lo, hi = math.Min(lo, f.score), math.Max(hi, f.score)
	}
	rel := func(f *fused) float64 {
		if hi == lo {
			return 1
		}
		return (f.score - lo) / (hi - lo)
	}
	remaining := append([]*fused(nil), fs...)
	maxSim := make(map[int64]float64, len(fs))
	out := make([]*fused, 0, len(fs))
	for len(remaining) > 0 {
		bi, best := 0, math.Inf(-1)
		for i, c := range remaining {
			v := lambda*rel(c) - (1-lambda)*maxSim[c.id]
			if v > best || (v == best && c.score > remaining[bi].score) {
				bi, best = i, v
			}
		}
		pick := remaining[bi]
		remaining = append(remaining[:bi], remaining[bi+1:]...)
		pick.mmrPicked = len(out) + 1
		out = append(out, pick)
		for _, c := range remaining {
			if s := jaccard(words[c.id], words[pick.id]); s > maxSim[c.id] {
				maxSim[c.id] = s
			}
		}
	}
	return out
}

func jaccard(a, b map[string]bool) float64 {
	if len(a) == 0 && len(b) == 0 {
		return 1
	}
	inter := 0
	for w := range a {
		if b[w] {
			inter++
		}
	}
	union := len(a) + len(b) - inter
	if union == 0 {
		return 0
	}
	return float64(inter) / float64(union)
}

// wordSet is the set of folded words of a text, for MMR.
func wordSet(text string) map[string]bool {
	out := map[string]bool{}
	for _, t := range tokenize(text) {
		out[t.folded] = true
	}
	return out
}
