package search

import (
	"math/rand"
	"testing"
)

// randomIndex holds n random vectors of dims dimensions.
func randomIndex(b *testing.B, n, dims int) (*VectorIndex, []float32) {
	b.Helper()
	rnd := rand.New(rand.NewSource(1))
	x := NewVectorIndex(dims)
	v := make([]float32, dims)
	for i := 0; i < n; i++ {
		for j := range v {
			v[j] = float32(rnd.NormFloat64())
		}
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		if err := x.Add(int64(i+1), VectorMeta{AgentID: "main", Role: role, Kind: KindMessage, TsMs: int64(i)}, v); err != nil {
			b.Fatal(err)
		}
	}
	q := make([]float32, dims)
	for j := range q {
		q[j] = float32(rnd.NormFloat64())
	}
	return x, q
}

// BenchmarkVectorSearch is the vector lane of a hybrid query: the 40
// nearest of 100,000 chunks of 384 dimensions (4 x a limit of 10).
func BenchmarkVectorSearch(b *testing.B) {
	x, q := randomIndex(b, 100_000, 384)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := x.Search(q, 40, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVectorSearchFiltered adds a filter (half the chunks pass).
func BenchmarkVectorSearchFiltered(b *testing.B) {
	x, q := randomIndex(b, 100_000, 384)
	f := Filter{Role: "assistant", AgentID: "main"}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := x.Search(q, 40, keeper(&f)); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDot384(b *testing.B) {
	_, q := randomIndex(b, 1, 384)
	v := append([]float32(nil), q...)
	b.ResetTimer()
	var s float32
	for i := 0; i < b.N; i++ {
		s += Dot(q, v)
	}
	_ = s
}

// BenchmarkBM25 scores one matched message from its text (a store whose
// index counts the terms skips termFreqs).
func BenchmarkBM25(b *testing.B) {
	p, _ := Parse(`kubernetes "rolling restart"`)
	ps := phrases(p)
	text := "After the Kubernetes upgrade we did a rolling restart of every node, and the deployment failed twice before the error went away."
	dfs := []TermCount{{DF: 10000}, {DF: 2000}}
	c := Corpus{Chunks: 1e6, AvgLen: 40}
	tfs := make([]int, len(ps))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		termFreqs(text, ps, tfs)
		bm25(24, ps, dfs, c, tfs)
	}
}

// BenchmarkBM25CJK scores one matched message for a CJK phrase.
func BenchmarkBM25CJK(b *testing.B) {
	p, _ := Parse(`数据库`)
	ps := phrases(p)
	text := "升级以后数据库连接超时, the deployment failed twice 数据库 before the error went away. 服务重启后恢复正常。"
	dfs := []TermCount{{DF: 2000}}
	c := Corpus{Chunks: 1e6, AvgLen: 40}
	tfs := make([]int, len(ps))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		termFreqs(text, ps, tfs)
		bm25(24, ps, dfs, c, tfs)
	}
}
