package search

import (
	"math"
	"math/rand"
	"sort"
	"strings"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestBM25Score(t *testing.T) {
	for _, c := range []struct{ rank, want float64 }{
		{-3, 0.75}, {-1, 0.5}, {0, 1}, {1, 0.5}, {math.NaN(), 0.001},
	} {
		if got := BM25Score(c.rank); !near(got, c.want) {
			t.Errorf("BM25Score(%v) = %v, want %v", c.rank, got, c.want)
		}
	}
}

func TestFuse(t *testing.T) {
	lex := []laneHit{{id: 1, score: 0.9}, {id: 2, score: 0.5}}
	vec := []laneHit{{id: 2, score: 0.8}, {id: 3, score: 0.7}}
	got := map[int64]float64{}
	for _, f := range fuse(lex, vec, FusionWeighted, 0.7, 0.3) {
		got[f.id] = f.score
	}
	if !near(got[1], 0.27) || !near(got[2], 0.7*0.8+0.3*0.5) || !near(got[3], 0.49) {
		t.Errorf("weighted: %v", got)
	}
	got = map[int64]float64{}
	for _, f := range fuse(lex, vec, FusionRRF, 0.7, 0.3) {
		got[f.id] = f.score
	}
	scale := 61.0
	if !near(got[2], (0.7/61+0.3/62)*scale) || !near(got[1], 0.3/61*scale) || !near(got[3], 0.7/62*scale) {
		t.Errorf("rrf: %v", got)
	}
	if top := fuse([]laneHit{{id: 9}}, []laneHit{{id: 9}}, FusionRRF, 0.7, 0.3); !near(top[0].score, 1) {
		t.Errorf("first in both lanes should score 1, got %v", top[0].score)
	}
}

func TestDecay(t *testing.T) {
	if got := decayFactor(30*dayMs, 30); !near(got, 0.5) {
		t.Errorf("one half-life: %v", got)
	}
	if got := decayFactor(60*dayMs, 30); !near(got, 0.25) {
		t.Errorf("two half-lives: %v", got)
	}
	if got := decayFactor(-dayMs, 30); got != 1 {
		t.Errorf("future: %v", got)
	}
}

func TestMMR(t *testing.T) {
	fs := []*fused{{id: 1, score: 1}, {id: 2, score: 0.95}, {id: 3, score: 0.94}, {id: 4, score: 0.5}}
	words := map[int64]map[string]bool{
		1: wordSet("postgres backup failed at night"),
		2: wordSet("postgres backup failed at night again"),
		3: wordSet("kubernetes rollout stuck"),
		4: wordSet("lunch order"),
	}
	got := mmr(fs, words, 0.7)
	if got[0].id != 1 || got[1].id != 3 || got[2].id != 2 || got[3].id != 4 {
		t.Errorf("order %d %d %d %d, want 1 3 2 4", got[0].id, got[1].id, got[2].id, got[3].id)
	}
	if got := mmr([]*fused{{id: 1, score: 1}, {id: 2, score: 0.5}}, words, 1); got[0].id != 1 {
		t.Errorf("lambda 1 keeps relevance order")
	}
}

func TestVectorIndexSearch(t *testing.T) {
	rnd := rand.New(rand.NewSource(1))
	const n, dims = 50000, 24
	x := NewVectorIndex(0)
	vecs := make([][]float32, n)
	for i := range vecs {
		v := make([]float32, dims)
		for j := range v {
			v[j] = float32(rnd.NormFloat64())
		}
		vecs[i] = v
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		if err := x.Add(int64(i+1), VectorMeta{Role: role, Kind: KindMessage}, append([]float32(nil), v...)); err != nil {
			t.Fatal(err)
		}
	}
	q := vecs[123]
	f := Filter{Role: "assistant"}
	got, err := x.Search(q, 10, keeper(&f))
	if err != nil {
		t.Fatal(err)
	}
	// brute force reference
	type sc struct {
		id  int64
		cos float64
	}
	var ref []sc
	qn := append([]float32(nil), q...)
	Normalize(qn)
	for i, v := range vecs {
		if i%2 == 0 {
			continue
		}
		vn := append([]float32(nil), v...)
		Normalize(vn)
		ref = append(ref, sc{int64(i + 1), float64(Dot(qn, vn))})
	}
	sort.Slice(ref, func(i, j int) bool { return ref[i].cos > ref[j].cos })
	if len(got) != 10 {
		t.Fatalf("%d neighbors", len(got))
	}
	for i := range got {
		if got[i].ID != ref[i].id || math.Abs(got[i].Cosine-ref[i].cos) > 1e-5 {
			t.Errorf("neighbor %d: got %d (%.5f), want %d (%.5f)", i, got[i].ID, got[i].Cosine, ref[i].id, ref[i].cos)
		}
	}
	if _, err := x.Search(make([]float32, 3), 10, nil); err == nil {
		t.Error("a query of the wrong length must fail")
	}
	if err := x.Add(1, VectorMeta{}, make([]float32, 5)); err == nil {
		t.Error("a vector of the wrong length must fail")
	}
}

func TestBM25MatchesFTS5Formula(t *testing.T) {
	p, _ := Parse("alpha beta")
	ps := phrases(p)
	c := Corpus{Chunks: 100, AvgLen: 10}
	dfs := []TermCount{{DF: 10}, {DF: 30}}
	tfs := make([]int, 2)
	termFreqs("alpha alpha beta gamma delta", ps, tfs)
	got := bm25(5, ps, dfs, c, tfs)
	idf1 := math.Log((100 - 10 + 0.5) / (10 + 0.5))
	idf2 := math.Log((100 - 30 + 0.5) / (30 + 0.5))
	norm := 1 - 0.75 + 0.75*5.0/10
	want := -(idf1*2*2.2/(2+1.2*norm) + idf2*1*2.2/(1+1.2*norm))
	if !near(got, want) {
		t.Errorf("bm25 = %v, want %v", got, want)
	}
}

func TestTermFreqsAgreesWithMatchers(t *testing.T) {
	// Hangul syllables, kana with a voicing mark and compatibility
	// ideographs change under NFD (fold): the matchers must agree there too
	p, _ := Parse("error \"the build\" deplo* 数据库 \"a b c d e f g h i\" Café 한국어 ガス \uF900")
	ps := phrases(p)
	for _, text := range []string{
		"Error: the BUILD failed; error again, deployment deployed",
		"数据库连接 数据库 数据 the build the build",
		"a b c d e f g h i j a b c d e f g h i",
		"café CAFE Café cafés",
		"한국어 데이터 한국 ガス カス がす \uF900 \u8C48 豈",
		"",
	} {
		tfs := make([]int, len(ps))
		termFreqs(text, ps, tfs)
		toks := tokenize(text)
		for k, ph := range ps {
			want := 0
			for i := range toks {
				if ph.m.at(toks, i) {
					want++
				}
			}
			if tfs[k] != want {
				t.Errorf("%q in %q: tf %d, want %d", ph.term.Text, text, tfs[k], want)
			}
		}
	}
	// the index holds a CJK run as its bigrams: a phrase never spans runs
	for _, c := range []struct {
		q, text string
		want    int
	}{
		{"数据库", "数 据 库，数据，库 数据库 大数据库存", 2},
		{"Go语言", "Go 语言 go语 言 GO语言", 2},
		{`"a 数据"`, "a 数据 a数 据", 1},
	} {
		p, _ := Parse(c.q)
		ps := phrases(p)
		tfs := make([]int, 1)
		termFreqs(c.text, ps, tfs)
		n := 0
		for toks, i := tokenize(c.text), 0; i < len(toks); i++ {
			if ps[0].m.at(toks, i) {
				n++
			}
		}
		if tfs[0] != c.want || n != c.want {
			t.Errorf("%s in %q: tf %d (matcher %d), want %d", c.q, c.text, tfs[0], n, c.want)
		}
	}
	if n := TokenCount("Go语言 is fun!"); n != 5 {
		t.Errorf("TokenCount = %d", n)
	}
}

// FuzzTokenIs: tokenIs's shortcuts agree with folding both sides.
func FuzzTokenIs(f *testing.F) {
	for _, s := range []string{"Kubernetes kube", "한국어 한", "ガス カス", "\uF900 \u8C48", "Café cafe", "数据库 数"} {
		f.Add(s, s)
	}
	f.Fuzz(func(t *testing.T, text, query string) {
		var toks, wants []string // the first 32 of each (every pair is checked)
		scanTokens(text, func(start, end int) {
			if len(toks) < 32 {
				toks = append(toks, text[start:end])
			}
		})
		scanTokens(query, func(start, end int) {
			if len(wants) < 32 {
				wants = append(wants, fold(query[start:end]))
			}
		})
		for _, tok := range toks {
			ft := fold(tok)
			for _, want := range wants {
				if got := tokenIs(tok, want, false); got != (ft == want) {
					t.Fatalf("tokenIs(%q, %q) = %v, fold gives %q", tok, want, got, ft)
				}
				if got := tokenIs(tok, want, true); got != strings.HasPrefix(ft, want) {
					t.Fatalf("tokenIs(%q, %q, prefix) = %v, fold gives %q", tok, want, got, ft)
				}
			}
		}
	})
}
