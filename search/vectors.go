package search

import (
	"container/heap"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"

	"gonum.org/v1/gonum/blas/blas32"
)

// ErrDimensions is the reason of an error about vectors of different
// dimensions: the stored vectors need embedding again.
var ErrDimensions = errors.New("vectors of different dimensions")

// VectorIndex holds every chunk vector of one embedder in one contiguous
// matrix, unit-normalized, so that a query is a brute-force scan of dot
// products: exact, with no vector extension, and fast enough for hundreds
// of thousands of chunks. It is loaded once per process.
type VectorIndex struct {
	Dims int
	ids  []int64
	meta []VectorMeta
	data []float32
	seen map[string]string // interned metadata strings
}

// NewVectorIndex returns an empty index for vectors of dims dimensions
// (0: taken from the first vector added).
func NewVectorIndex(dims int) *VectorIndex {
	return &VectorIndex{Dims: dims, seen: map[string]string{}}
}

// Len is the number of vectors held.
func (x *VectorIndex) Len() int { return len(x.ids) }

// maxID is the highest chunk id the index holds a vector of (0 if none).
func (x *VectorIndex) maxID() int64 {
	var m int64
	for _, id := range x.ids {
		m = max(m, id)
	}
	return m
}

func (x *VectorIndex) intern(s string) string {
	if v, ok := x.seen[s]; ok {
		return v
	}
	x.seen[s] = s
	return s
}

// Grow makes room for n more vectors of the index's dimensions.
func (x *VectorIndex) Grow(n, dims int) {
	if x.Dims == 0 {
		x.Dims = dims
	}
	x.ids = slices.Grow(x.ids, n)
	x.meta = slices.Grow(x.meta, n)
	x.data = slices.Grow(x.data, n*x.Dims)
}

func (x *VectorIndex) internBytes(b []byte) string {
	if v, ok := x.seen[string(b)]; ok {
		return v
	}
	s := string(b)
	x.seen[s] = s
	return s
}

// Add appends one chunk's vector.
func (x *VectorIndex) Add(id int64, m VectorMeta, vec []float32) error {
	if err := x.add(id, m, len(vec)); err != nil {
		return err
	}
	start := len(x.data)
	x.data = append(x.data, vec...)
	Normalize(x.data[start:])
	return nil
}

// AddEncoded appends a vector stored by EncodeVector, decoding it in
// place; agent, role and kind fill m's strings (interned, so the bytes
// may be reused by the caller).
func (x *VectorIndex) AddEncoded(id int64, m VectorMeta, blob, agent, role, kind []byte) error {
	if len(blob)%4 != 0 {
		return fmt.Errorf("vector of chunk %d is not a whole number of float32s", id)
	}
	n := len(blob) / 4
	m.AgentID, m.Role, m.Kind = x.internBytes(agent), x.internBytes(role), x.internBytes(kind)
	if err := x.add(id, m, n); err != nil {
		return err
	}
	start := len(x.data)
	x.data = slices.Grow(x.data, n)[:start+n]
	v := x.data[start:]
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(blob[4*i:]))
	}
	Normalize(v)
	return nil
}

func (x *VectorIndex) add(id int64, m VectorMeta, dims int) error {
	if x.Dims == 0 {
		x.Dims = dims
	}
	if dims != x.Dims {
		return fmt.Errorf("vector of chunk %d has %d dimensions, the index %d%w", id, dims, x.Dims, quiet{ErrDimensions})
	}
	m.AgentID, m.Role, m.Kind = x.intern(m.AgentID), x.intern(m.Role), x.intern(m.Kind)
	x.ids = append(x.ids, id)
	x.meta = append(x.meta, m)
	return nil
}

// Normalize scales v to unit length (a zero vector stays zero).
func Normalize(v []float32) {
	var s float64
	for _, f := range v {
		s += float64(f) * float64(f)
	}
	if s == 0 {
		return
	}
	inv := float32(1 / math.Sqrt(s))
	for i := range v {
		v[i] *= inv
	}
}

// Neighbor is one vector lane hit: a chunk and its cosine similarity.
type Neighbor struct {
	ID     int64
	Cosine float64
}

// Search returns the k chunks most similar to q that pass keep (nil keeps
// all), most similar first. The scan is split across the CPUs.
func (x *VectorIndex) Search(q []float32, k int, keep func(int64, *VectorMeta) bool) ([]Neighbor, error) {
	if len(q) != x.Dims {
		return nil, fmt.Errorf("query vector has %d dimensions, the index %d%w", len(q), x.Dims, quiet{ErrDimensions})
	}
	if k <= 0 || len(x.ids) == 0 {
		return nil, nil
	}
	qn := append([]float32(nil), q...)
	Normalize(qn)
	n := len(x.ids)
	workers := min(runtime.GOMAXPROCS(0), max(1, n/20000))
	parts := make([]neighborHeap, workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		lo, hi := n*w/workers, n*(w+1)/workers
		wg.Add(1)
		go func(h *neighborHeap) {
			defer wg.Done()
			x.scan(qn, lo, hi, k, keep, h)
		}(&parts[w])
	}
	wg.Wait()
	var all neighborHeap
	for _, p := range parts {
		for _, e := range p {
			pushBounded(&all, e, k)
		}
	}
	out := make([]Neighbor, len(all))
	for i := len(all) - 1; i >= 0; i-- {
		e := heap.Pop(&all).(scored)
		out[i] = Neighbor{ID: x.ids[e.idx], Cosine: float64(e.score)}
	}
	return out, nil
}

func (x *VectorIndex) scan(q []float32, lo, hi, k int, keep func(int64, *VectorMeta) bool, h *neighborHeap) {
	d := x.Dims
	for i := lo; i < hi; i++ {
		if keep != nil && !keep(x.ids[i], &x.meta[i]) {
			continue
		}
		s := Dot(q, x.data[i*d:(i+1)*d])
		if len(*h) < k || s > (*h)[0].score {
			pushBounded(h, scored{i, s}, k)
		}
	}
}

// Dot is the dot product of two equally long vectors (gonum's BLAS
// kernel: SIMD assembly on amd64, several times a plain Go loop).
func Dot(a, b []float32) float32 {
	n := len(a)
	return blas32.Dot(blas32.Vector{N: n, Inc: 1, Data: a}, blas32.Vector{N: n, Inc: 1, Data: b[:n]})
}

type scored struct {
	idx   int
	score float32
}

// neighborHeap is a min-heap on score holding the best k seen.
type neighborHeap []scored

func (h neighborHeap) Len() int { return len(h) }
func (h neighborHeap) Less(i, j int) bool {
	if h[i].score != h[j].score {
		return h[i].score < h[j].score
	}
	return h[i].idx < h[j].idx
}
func (h neighborHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *neighborHeap) Push(v any)   { *h = append(*h, v.(scored)) }
func (h *neighborHeap) Pop() any {
	old := *h
	v := old[len(old)-1]
	*h = old[:len(old)-1]
	return v
}

func pushBounded(h *neighborHeap, e scored, k int) {
	if len(*h) < k {
		heap.Push(h, e)
		return
	}
	if e.score > (*h)[0].score || (e.score == (*h)[0].score && e.idx > (*h)[0].idx) {
		(*h)[0] = e
		heap.Fix(h, 0)
	}
}

// EncodeVector stores a vector as little-endian float32 bytes.
func EncodeVector(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	return b
}

// DecodeVector reads a vector stored by EncodeVector.
func DecodeVector(b []byte) ([]float32, error) {
	if len(b)%4 != 0 {
		return nil, errors.New("vector blob is not a whole number of float32s")
	}
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v, nil
}
